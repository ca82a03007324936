//! A fair queue at a bottleneck gives a TCP flow its share beside an unresponsive UDP flow
//! that a drop-tail queue lets starve it; bad fair-queue parameters name their field.

use fairstream_scenario::load;
use fairstream_sim::Simulator;

fn scenario(queue: &str) -> String {
    format!(
        r#"name = "fq"
duration = "30s"
[topology]
kind = "dumbbell"
hosts = 2
access = {{ rate = "10Mbps", delay = "10ms" }}
bottleneck = {{ rate = "1.5Mbps", delay = "10ms", queue = {queue} }}
[[flow]]
name = "tcp"
from = "left0"
to = "right0"
packet_size = "1500B"
[[flow]]
name = "udp"
protocol = "cbr"
from = "left1"
to = "right1"
rate = "1.5Mbps"
packet_size = "1500B"
random = true
"#
    )
}

/// Delivered bit/s of the TCP flow over the run.
fn tcp_rate(queue: &str) -> f64 {
    let s = load(&scenario(queue), "fq.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let out = Simulator::new(s.network).unwrap().run();
    out.flows[0].throughput_bps
}

#[test]
fn fair_queue_protects_tcp_from_a_full_rate_udp_flow() {
    let droptail = tcp_rate(r#"{ kind = "droptail", limit = 50 }"#);
    let fq = tcp_rate(r#"{ kind = "fq", limit = 100, flow_limit = 50 }"#);
    assert!(droptail < 0.2 * 1.5e6, "drop-tail: {droptail}");
    assert!(fq > 0.4 * 1.5e6, "fq: {fq}");
}

#[test]
fn bad_fair_queue_parameters_name_the_field() {
    for (queue, field, says) in [
        (
            r#"{ kind = "fq", quantum = "0B" }"#,
            "quantum",
            "at least one byte",
        ),
        (
            r#"{ kind = "fq", limit = "64KB" }"#,
            "limit",
            "counts packets",
        ),
        (r#"{ kind = "fq", flow_limit = 0 }"#, "flow_limit", "from 1"),
        (
            r#"{ kind = "droptail", quantum = "1500B" }"#,
            "quantum",
            "does not apply",
        ),
    ] {
        let e = load(&scenario(queue), "fq.toml", None).expect_err(queue);
        assert_eq!(e.field, format!("topology.bottleneck.queue.{field}"), "{e}");
        assert!(e.message.contains(says), "{e}");
        assert_eq!(e.line, 7, "{e}");
    }
}
