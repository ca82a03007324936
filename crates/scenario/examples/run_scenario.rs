//! Runs a scenario file and prints its per-flow and per-link totals (a debugging aid).

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario FILE");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let scenario = match fairstream_scenario::load(&text, &path, None) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let out = fairstream_sim::Simulator::new(scenario.network)
        .expect("routable network")
        .run();
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{} events in {wall:.3} s ({:.1} M events/s), {} packets",
        out.events,
        out.events as f64 / wall / 1e6,
        out.packets
    );
    for f in &out.flows {
        println!(
            "flow {:>10} {:>4}: sent {:>9} pkts, delivered {:>12} B, {:>10.0} bit/s, goodput {:>10.0} bit/s, lost {:>7}, rtx {:>6}, rtt {:.4} s",
            f.name,
            f.protocol,
            f.packets_sent,
            f.bytes_delivered,
            f.throughput_bps,
            f.goodput_bps,
            f.packets_dropped,
            f.retransmits,
            f.mean_rtt_s
        );
    }
    for l in &out.links {
        println!(
            "link {:>24}: fwd {:>9} pkts, dropped {:>7}, corrupted {:>7}, util {:.3}, mean queue {:.1}",
            l.name,
            l.packets_forwarded,
            l.packets_dropped,
            l.packets_corrupted,
            l.utilisation,
            l.mean_queue_packets
        );
    }
    // Mean of each protocol metric per flow (recorded with `[record] metrics = true`).
    let m = &out.metrics;
    let mut sums: std::collections::BTreeMap<(u32, &str), (f64, u64)> = Default::default();
    for i in 0..m.t.len() {
        let e = sums.entry((m.flow_id[i], m.metric[i])).or_default();
        e.0 += m.value[i];
        e.1 += 1;
    }
    for ((flow, metric), (sum, n)) in sums {
        println!(
            "metric flow {flow} {metric:>22}: mean {:.6} over {n} records",
            sum / n as f64
        );
    }
}
