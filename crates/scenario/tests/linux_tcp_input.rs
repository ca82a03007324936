//! `protocol = "linux-tcp"` flows: their keys are checked like any flow's (file, line, field and
//! the expected form), they are kept apart from the simulated flows, and a simulation of a
//! scenario holding one is refused at its `protocol` line.

use fairstream_scenario::load;

fn scenario(flow: &str) -> String {
    format!(
        r#"name = "t"
duration = "10s"

[topology]
nodes = ["a", "b"]

[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"

[[flow]]
protocol = "tfrc"
from = "a"
to = "b"

[[flow]]
{flow}
from = "a"
to = "b"
"#
    )
}

fn err(flow: &str) -> String {
    load(&scenario(flow), "bad.toml", None)
        .expect_err("the scenario should be rejected")
        .to_string()
}

#[test]
fn a_linux_tcp_flow_is_read_and_kept_apart() {
    let s = load(
        &scenario(
            "protocol = \"linux-tcp\"\ncongestion = \"reno\"\nsack = false\nrate = \"2Mbps\"",
        ),
        "good.toml",
        None,
    )
    .unwrap();
    assert_eq!(
        s.network.flows().len(),
        1,
        "only the TFRC flow is simulated"
    );
    let k = &s.kernel_flows[0];
    assert_eq!((k.order, k.name.as_str()), (1, "linux-tcp1"));
    assert_eq!(k.tcp.congestion, "reno");
    assert!(!k.tcp.sack && k.tcp.timestamps);
    assert_eq!(k.tcp.mss(), 1460);
    assert_eq!(k.route.forward.len(), 1);
    assert_eq!(k.route.back.len(), 1);
    assert!(
        s.resolved.contains("congestion = \"reno\""),
        "{}",
        s.resolved
    );
    let refused = s.check_simulable().unwrap_err().to_string();
    assert!(
        refused.starts_with("good.toml:18:12: field `flow[1].protocol`: a linux-tcp flow"),
        "{refused}"
    );
}

#[test]
fn bad_keys_name_file_line_and_field() {
    assert_eq!(
        err("protocol = \"linux-tcp\"\nsack = \"yes\""),
        "bad.toml:19:8: field `flow[1].sack`: expected true or false"
    );
    assert_eq!(
        err("protocol = \"linux-tcp\"\nwindow = 20"),
        "bad.toml:19:10: field `flow[1].window`: does not apply to linux-tcp flows"
    );
    assert_eq!(
        err("protocol = \"tcp\"\ncongestion = \"cubic\""),
        "bad.toml:19:14: field `flow[1].congestion`: does not apply to tcp flows"
    );
    assert_eq!(
        err("protocol = \"linux-tcp\"\npacket_size = \"100B\""),
        "bad.toml:19:15: field `flow[1].packet_size`: a kernel TCP packet (40 bytes of headers and the kernel's least MSS of 88) is at least 128 bytes"
    );
    assert_eq!(
        err("protocol = \"linux-tcp\"\nrate = \"0Mbps\""),
        "bad.toml:19:8: field `flow[1].rate`: the application's rate must be above zero (leave it out for a bulk source)"
    );
    assert_eq!(
        err("protocol = \"linux-tcp\"\noverhead = \"1ms\""),
        "bad.toml:19:12: field `flow[1].overhead`: does not apply to linux-tcp flows (the kernel sends when it sends)"
    );
}

#[test]
fn a_congestion_control_the_kernel_lacks_is_refused_with_its_list() {
    let Some(offered) = fairstream_scenario::kernel::available_congestion() else {
        eprintln!("skipped: this kernel does not list its congestion controls");
        return;
    };
    let e = err("protocol = \"linux-tcp\"\ncongestion = \"no-such-cc\"");
    assert_eq!(
        e,
        format!(
            "bad.toml:19:14: field `flow[1].congestion`: `no-such-cc` is not offered by this \
             kernel; it offers: {} (net.ipv4.tcp_available_congestion_control)",
            offered.join(", ")
        )
    );
}
