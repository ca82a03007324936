//! Smoke: a CBR flow through one emulated link.
use std::sync::atomic::AtomicBool;

#[test]
fn cbr_through_one_link() {
    if let Err(e) = fairstream_emu::preflight() {
        eprintln!("skipped: {e}");
        return;
    }
    let text = r#"
name = "smoke"
duration = "3s"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "100Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "100 packets" }
[[flow]]
protocol = "cbr"
from = "a"
to = "b"
rate = "20Mbps"
packet_size = "1500B"
"#;
    let s = fairstream_scenario::load(text, "smoke.toml", None).unwrap();
    let stop = AtomicBool::new(false);
    let r = fairstream_emu::emulate(&s, &stop, &mut |l| eprintln!("{l:?}")).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&r.emu).unwrap());
    eprintln!("{:?}", r.output.flows);
}

#[test]
fn tcp_and_tfrc_on_a_dumbbell() {
    if let Err(e) = fairstream_emu::preflight() {
        eprintln!("skipped: {e}");
        return;
    }
    let text = r#"
name = "smoke2"
duration = "5s"
[topology]
kind = "dumbbell"
hosts = 2
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "23ms", queue = { kind = "droptail", limit = "42 packets" } }
[[flow]]
protocol = "linux-tcp"
congestion = "reno"
from = "left0"
to = "right0"
[[flow]]
protocol = "tfrc"
from = "left1"
to = "right1"
[record]
metrics = true
"#;
    let s = fairstream_scenario::load(text, "smoke2.toml", None).unwrap();
    let stop = AtomicBool::new(false);
    let r = fairstream_emu::emulate(&s, &stop, &mut |l| eprintln!("{l:?}")).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&r.emu["flows"]).unwrap());
    eprintln!(
        "late {} accurate {}",
        r.emu["packets_forwarded_late"], r.emu["accurate"]
    );
    for f in &r.output.flows {
        eprintln!(
            "{} {} thr {:.2} Mbps goodput {:.2} drops {} rtt {:.4} retx {}",
            f.name,
            f.protocol,
            f.throughput_bps / 1e6,
            f.goodput_bps / 1e6,
            f.packets_dropped,
            f.mean_rtt_s,
            f.retransmits
        );
    }
    let mut names: Vec<_> = r.output.metrics.metric.clone();
    names.sort();
    names.dedup();
    eprintln!("metrics {names:?}");
}
