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
}
