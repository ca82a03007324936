//! TCP validity checks (reduced forms of docs/VALIDATION.md): utilisation of one flow,
//! fairness of two identical flows, and agreement with the Padhye (PFTK) model under
//! Bernoulli loss. Each builds its network from a scenario, as users do.

use fairstream_metrics::{fairness::jain, tcp_model::padhye};
use fairstream_records::RunOutput;
use fairstream_scenario::load;
use fairstream_sim::Simulator;

fn run(text: &str) -> RunOutput {
    let s = load(text, "test.toml", None).unwrap_or_else(|e| panic!("{e}"));
    Simulator::new(s.network).unwrap().run()
}

/// One bottleneck `a -> b` of 10 Mbps; `rtt` two-way propagation delay.
fn one_link(duration: &str, queue_packets: u32, flows: &str) -> String {
    format!(
        r#"name = "validity"
duration = "{duration}"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
queue = {{ kind = "droptail", limit = "{queue_packets} packets" }}
{flows}
"#
    )
}

#[test]
fn one_newreno_flow_fills_the_link_after_slow_start() {
    // 10 Mbit/s × 20 ms = 25 000 B = 25 packets of 1000 B: a buffer of one BDP.
    let out = run(&one_link(
        "30s",
        25,
        "[[flow]]\nfrom = \"a\"\nto = \"b\"\npacket_size = \"1000B\"\nwindow = 10000\n",
    ));
    let link = &out.links[0];
    assert_eq!(link.name, "a->b");
    // Utilisation after slow start: bins from 5 s on.
    let s = &out.link_series;
    let (mut bits, mut secs) = (0.0, 0.0);
    for i in 0..s.link_id.len() {
        if s.link_id[i] == 0 && s.t_start[i] >= 5.0 {
            bits += s.bytes_forwarded[i] as f64 * 8.0;
            secs += s.t_end[i] - s.t_start[i];
        }
    }
    let utilisation = bits / secs / 10e6;
    assert!(utilisation >= 0.95, "utilisation {utilisation}");
}

#[test]
fn two_identical_flows_share_fairly() {
    let flows = "[[flow]]\ncount = 2\nname = \"tcp{i}\"\nfrom = \"a\"\nto = \"b\"\npacket_size = \"1000B\"\nwindow = 10000\nstart = { uniform = [\"0s\", \"1s\"] }\n";
    let out = run(&one_link("100s", 25, flows));
    let shares: Vec<f64> = out.flows.iter().map(|f| f.throughput_bps).collect();
    let j = jain(&shares);
    assert!(j >= 0.95, "Jain {j} for {shares:?}");
    // Throughput counts wire bytes, so together the flows keep the 10 Mbit/s link busy.
    let total: f64 = shares.iter().sum();
    assert!(total >= 0.9 * 10e6, "total {total}");
}

/// Reno over a 100 Mbit/s path of 72 ms RTT with Bernoulli loss `per`: returns
/// (measured throughput in bytes/s, Padhye's prediction at the measured loss-event rate, RTT and RTO).
pub fn reno_vs_padhye(per: f64, duration: &str) -> (f64, f64) {
    let text = format!(
        r#"name = "padhye"
duration = "{duration}"
[topology]
nodes = ["a", "b"]
[[topology.link]]
from = "a"
to = "b"
rate = "100Mbps"
delay = "36ms"
queue = {{ kind = "droptail", limit = "10000 packets" }}
loss = {{ kind = "bernoulli", per = {per} }}
[[topology.link]]
from = "b"
to = "a"
rate = "100Mbps"
delay = "36ms"
[[flow]]
variant = "reno"
from = "a"
to = "b"
packet_size = "1000B"
window = 100000
[record]
metrics = true
"#
    );
    let out = run(&text);
    let m = &out.metrics;
    let count = |name: &str| m.metric.iter().filter(|&&n| n == name).count() as f64;
    let mean = |name: &str| {
        let v: Vec<f64> = m
            .metric
            .iter()
            .zip(&m.value)
            .filter(|(n, _)| **n == name)
            .map(|(_, v)| *v)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let flow = &out.flows[0];
    // Loss indications: each fast retransmit or timeout starts a loss event.
    let events = count("fast_retransmit") + count("timeout");
    let p = events / flow.packets_sent as f64;
    let rtt = mean("rtt");
    let rto = mean("rto");
    let measured = flow.bytes_delivered as f64 / out.duration.as_secs_f64();
    (measured, padhye(1000.0, rtt, p, rto, 1e9, 1.0))
}

#[test]
fn reno_under_bernoulli_loss_matches_padhye_within_25_percent() {
    for per in [0.005, 0.01, 0.02, 0.05] {
        let (measured, model) = reno_vs_padhye(per, "200s");
        let ratio = measured / model;
        assert!(
            (0.75..=1.25).contains(&ratio),
            "p={per}: measured {measured:.0} B/s, model {model:.0} B/s, ratio {ratio:.3}"
        );
    }
}
