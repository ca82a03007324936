//! Flows through the emulator: a kernel TCP flow beside a TFRC flow on a dumbbell (`TCP_INFO`
//! sampled into the metric records, the MSS following `packet_size`, the bottleneck shared), and
//! paper 000's streamer over UDP and over a kernel TCP socket through a token bucket. Skip,
//! saying why, where the emulator cannot run. About 17 s.
use std::sync::atomic::AtomicBool;

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
    let s = fairstream_scenario::load(text, "dumbbell.toml", None).unwrap();
    let stop = AtomicBool::new(false);
    let r = fairstream_emu::emulate(&s, &stop, &mut |_| {}).unwrap();
    let (tcp, tfrc) = (&r.output.flows[0], &r.output.flows[1]);
    eprintln!("{tcp:?}\n{tfrc:?}\n{}", r.emu["flows"]);
    assert_eq!(tcp.protocol, "linux-tcp-reno");
    // Both get some of the 10 Mbit/s, and together no more than it.
    assert!(tcp.throughput_bps > 1e6 && tfrc.throughput_bps > 0.2e6);
    assert!(tcp.throughput_bps + tfrc.throughput_bps < 10.1e6);
    // 1500-byte packets with timestamps: MSS 1460 less the 12-byte option.
    assert_eq!(r.emu["flows"][0]["sender"]["mss"], 1448);
    assert!(r.emu["largest_packet_bytes"].as_u64().unwrap() <= 1500);
    let has = |m: &str| r.output.metrics.metric.contains(&m);
    assert!(has("cwnd") && has("srtt") && has("delivery_rate") && has("retransmits"));
    assert!(has("x_recv") && has("p"), "TFRC's own records");
    assert!(
        tcp.mean_rtt_s > 0.048,
        "the smoothed RTT includes the 48 ms path"
    );
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
    // The UDP streamer's player runs at the receiver: its records and the flow-summary columns
    // they fold into are there as in a simulated run (the TCP streamer's receiver is the
    // kernel's, with no player).
    assert!(r.output.metrics.metric.contains(&"frames_decodable"));
    let column = |f: &fairstream_records::FlowSummary, name: &str| {
        f.summaries
            .iter()
            .find(|(c, _)| c.name == name)
            .map(|(_, v)| *v)
    };
    assert!(
        column(udp, "frames_decodable").is_some(),
        "{:?}",
        udp.summaries
    );
    assert!(column(tcp, "frames_decodable").is_none());
    // The series add up to the summaries, goodput that arrived after the end included.
    let s = &r.output.flow_series;
    for (i, f) in r.output.flows.iter().enumerate() {
        let goodput: u64 = (0..s.flow_id.len())
            .filter(|&row| s.flow_id[row] == i as u32)
            .map(|row| s.goodput_bytes[row])
            .sum();
        assert_eq!(goodput, f.goodput_bytes, "{}", f.name);
    }
    assert!(
        r.output
            .summary_columns
            .iter()
            .any(|c| c.name == "frames_decodable")
    );
}
