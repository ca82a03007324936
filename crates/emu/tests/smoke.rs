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

#[test]
fn the_streamer_over_udp_and_over_kernel_tcp_through_a_token_bucket() {
    if let Err(e) = fairstream_emu::preflight() {
        eprintln!("skipped: {e}");
        return;
    }
    let text = r#"
name = "h2h"
duration = "12s"
[topology]
nodes = ["server", "edge", "client"]
[[topology.link]]
from = "server"
to = "edge"
rate = "10Mbps"
delay = "30ms"
[[topology.link]]
from = "edge"
to = "server"
rate = "10Mbps"
delay = "30ms"
[[topology.link]]
from = "edge"
to = "client"
rate = "10Mbps"
delay = "1ms"
queue = { kind = "tbf", rate = "300kbps", burst = "1600B", limit = "10KB" }
[[topology.link]]
from = "client"
to = "edge"
rate = "10Mbps"
delay = "1ms"
[[flow]]
name = "udp"
protocol = "surestream"
transport = "udp"
clip_length = "10s"
from = "server"
to = "client"
[[flow]]
name = "tcp"
protocol = "surestream"
transport = "tcp"
clip_length = "10s"
from = "server"
to = "client"
[record]
interval = "500ms"
metrics = true
"#;
    let s = fairstream_scenario::load(text, "h2h.toml", None).unwrap();
    let stop = AtomicBool::new(false);
    let r = fairstream_emu::emulate(&s, &stop, &mut |_| {}).unwrap();
    for f in &r.output.flows {
        eprintln!(
            "{} {} thr {:.1} kbps goodput {:.1} drops {}",
            f.name,
            f.protocol,
            f.throughput_bps / 1e3,
            f.goodput_bps / 1e3,
            f.packets_dropped
        );
    }
    eprintln!("{}", r.emu["flows"]);
    let (udp, tcp) = (&r.output.flows[0], &r.output.flows[1]);
    // Together they fill most of the 300 kbit/s bucket, and each gets some of it.
    assert!(udp.throughput_bps > 20e3 && tcp.throughput_bps > 20e3);
    assert!(udp.throughput_bps + tcp.throughput_bps < 330e3);
    assert!(r.output.metrics.metric.contains(&"level"));
}
