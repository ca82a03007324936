//! Scenarios that would exhaust memory are refused before they run, with an error that names
//! the file, the line and the field behind the largest part of the estimate; large topologies
//! load in time and memory linear in their size.

use fairstream_scenario::{MemoryLimit, ScenarioError, load};

const GIB: u64 = 1 << 30;

fn dumbbell(hosts: u32, flow: &str, extra: &str) -> String {
    format!(
        r#"name = "big"
duration = "10s"

[topology]
kind = "dumbbell"
hosts = {hosts}
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}

[[flow]]
{flow}
from = "left{{i}}"
to = "right{{i}}"
{extra}"#
    )
}

/// A parking lot of `routers` routers with `hosts` hosts each (`hosts` on line 6), then `rest`.
fn parking_lot(routers: u32, hosts: u32, rest: &str) -> String {
    format!(
        "name = \"lot\"\nduration = \"1s\"\n[topology]\nkind = \"parking_lot\"\nrouters = {routers}\n\
         hosts = {hosts}\nbackbone = {{ rate = \"10Mbps\", delay = \"1ms\" }}\n\
         access = {{ rate = \"10Mbps\", delay = \"1ms\" }}\n{rest}"
    )
}

/// Loads `text` and checks it against `limit` bytes.
fn refused(text: &str, limit: u64) -> ScenarioError {
    let s = load(text, "big.toml", None).unwrap_or_else(|e| panic!("{e}"));
    s.check_memory(&MemoryLimit::given(limit, "the test's limit"))
        .expect_err("the run should be refused before it starts")
}

#[test]
fn a_million_cbr_flows_with_a_packet_trace_are_refused_at_a_field() {
    // Within the series' row limit (one bin), but the trace of a million sources is not.
    let text = dumbbell(
        1000,
        "protocol = \"cbr\"\nname = \"cbr{i}\"\nrate = \"1Mbps\"\ncount = 1000000",
        "[record]\ninterval = \"10s\"\npackets = true\n",
    )
    .replace(
        "from = \"left{i}\"\nto = \"right{i}\"",
        "from = \"left0\"\nto = \"right0\"",
    );
    let e = refused(&text, 16 * GIB);
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("big.toml", "record.packets"),
        "{e}"
    );
    assert_eq!(e.line, 19, "{e}");
    assert!(
        e.message.contains("the per-packet trace")
            && e.message
                .contains("more than the 17.2 GB limit (the test's limit)")
            && e.message.contains("turn `record.packets` off")
            && e.message.contains("--max-memory"),
        "{e}"
    );
}

#[test]
fn a_long_traced_run_is_refused_and_the_same_run_untraced_is_not() {
    let traced = dumbbell(
        2,
        "protocol = \"tcp\"\ncount = 2",
        "[record]\ninterval = \"1000000s\"\npackets = true\n",
    )
    .replace("duration = \"10s\"", "duration = \"1e9s\"");
    let e = refused(&traced, 16 * GIB);
    assert_eq!(e.field, "record.packets", "{e}");
    let plain = load(
        &traced.replace("packets = true", "packets = false"),
        "big.toml",
        None,
    )
    .unwrap();
    assert!(
        plain
            .check_memory(&MemoryLimit::given(GIB, "1 GiB"))
            .is_ok()
    );
    assert!(plain.estimate.events > 1e11, "{:?}", plain.estimate);
}

#[test]
fn a_million_flows_are_refused_at_their_count() {
    let text = dumbbell(
        1000,
        "protocol = \"tcp\"\nname = \"tcp{i}\"\ncount = 1000000",
        "[record]\ninterval = \"10s\"\n",
    )
    .replace(
        "from = \"left{i}\"\nto = \"right{i}\"",
        "from = \"left0\"\nto = \"right0\"",
    );
    let e = refused(&text, 2 * GIB);
    assert_eq!(e.field, "flow[0].count", "{e}");
    assert!(e.message.contains("the flows' state"), "{e}");
    // With the default interval the series alone would be too long: refused when read.
    let e = load(&text.replace("interval = \"10s\"", ""), "big.toml", None).unwrap_err();
    assert_eq!(e.field, "record.interval", "{e}");
    // And with no [record] table at all: the run's length is where to look.
    let e = load(
        &text.replace("[record]\ninterval = \"10s\"\n", ""),
        "big.toml",
        None,
    )
    .unwrap_err();
    assert_eq!((e.field.as_str(), e.line), ("duration", 2), "{e}");
    assert!(e.message.contains("more than 20000000"), "{e}");
}

#[test]
fn a_dumbbell_of_a_hundred_thousand_hosts_loads_in_memory_linear_in_its_size() {
    let text = dumbbell(
        100_000,
        "protocol = \"tcp\"\nname = \"tcp{i}\"\ncount = 100000",
        "[record]\ninterval = \"10s\"\n",
    );
    let s = load(&text, "big.toml", None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.network.nodes().len(), 200_002);
    assert_eq!(s.network.flows().len(), 100_000);
    // Every route crosses three links each way, found by two searches (one per router).
    assert_eq!(s.network.routes().len(), 100_000);
    assert!(
        s.network
            .routes()
            .iter()
            .all(|r| r.forward.len() == 3 && r.back.len() == 3)
    );
    let per_node = s.estimate.total_bytes() / s.network.nodes().len() as f64;
    assert!(
        per_node < 20_000.0,
        "{per_node} bytes per node: {:?}",
        s.estimate.largest()
    );
    assert!(
        s.check_memory(&MemoryLimit::given(8 * GIB, "8 GiB"))
            .is_ok()
    );
}

#[test]
fn counts_that_multiply_past_their_limit_are_refused_when_read() {
    let flow = "[[flow]]\nprotocol = \"cbr\"\nrate = \"1Mbps\"\nfrom = \"h0_0\"\nto = \"h1_0\"\n";
    let lot = parking_lot(10_000, 10_000, flow);
    let e = load(&lot, "lot.toml", None).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (6, "topology.hosts"), "{e}");
    assert!(
        e.message.contains("100000000 hosts, more than the 100000"),
        "{e}"
    );
    let many = format!(
        "{}{}",
        parking_lot(2, 1, flow),
        "[[flow]]\nprotocol = \"cbr\"\nrate = \"1Mbps\"\nname = \"x{i}\"\nfrom = \"h0_0\"\nto = \"h1_0\"\ncount = 1000000\n"
    );
    let e = load(&many, "many.toml", None).unwrap_err();
    assert_eq!(e.field, "flow[1].count", "{e}");
    assert!(
        e.message.contains("1000001 in all, more than the 1000000"),
        "{e}"
    );
}

#[test]
fn numbers_past_64_bits_are_out_of_range_as_written_never_wrapped() {
    let base = dumbbell(1, "protocol = \"tcp\"\ncount = 1", "");
    for (count, shown) in [
        ("99999999999999999999", "99999999999999999999"),
        ("1e30", "1e30"),
        ("2e9", "2000000000"),
    ] {
        let e = load(
            &base.replace("count = 1", &format!("count = {count}")),
            "n.toml",
            None,
        )
        .unwrap_err();
        assert_eq!(e.field, "flow[0].count", "{e}");
        assert!(
            e.message.starts_with(&format!(
                "{shown} is out of range; expected an integer from 1 to 1000000"
            )),
            "{e}"
        );
    }
    // A queue limit in time at the link's rate is checked in bytes, not wrapped past 2^64.
    let e = load(
        &base.replace(
            "bottleneck = { rate = \"10Mbps\", delay = \"10ms\" }",
            "bottleneck = { rate = \"10000Gbps\", delay = \"10ms\", queue = { limit = \"1e9s\" } }",
        ),
        "q.toml",
        None,
    )
    .unwrap_err();
    assert_eq!(e.field, "topology.bottleneck.queue.limit", "{e}");
    assert!(e.message.contains("more than 1 TB"), "{e}");
}

#[test]
fn an_overhead_as_long_as_the_run_does_not_wrap_departures() {
    // Departures queue behind one another: 60 of up to 10⁹ s each pass 2⁶⁴ ns.
    let text = dumbbell(
        1,
        "protocol = \"cbr\"\nrate = \"10Mbps\"\noverhead = \"1e9s\"",
        "",
    )
    .replace("duration = \"10s\"", "duration = \"1e9s\"")
        + "[record]\ninterval = \"1e9s\"\n";
    let s = load(&text, "o.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = fairstream_sim::Simulator::new(s.network).unwrap();
    sim.run_until(fairstream_core::Instant::from_nanos(1_000_000_000));
    assert!(sim.events() > 0);
}

#[test]
fn a_loss_limited_tcp_is_estimated_at_its_equation_rate_not_its_link_rate() {
    // One Reno flow on a 100 Mbit/s path losing 1 % at random, 72 ms RTT, with the packet
    // trace: TCP gets about 1.3 Mbit/s. Counted at twice the link's rate it was estimated at
    // gigabytes (and refused); at twice the TCP equation's rate it is a few hundred MB.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../python/fairstream/scenarios/papers/validation-tcp-padhye.toml"
    ))
    .unwrap()
    .replace("[record]\n", "[record]\npackets = true\n");
    assert!(
        text.contains("packets = true"),
        "the scenario has a [record] table"
    );
    let s = load(&text, "padhye.toml", None).unwrap();
    let bytes = s.estimate.total_bytes();
    assert!(bytes < 1e9, "estimated {bytes:.3e} bytes");
    let lossless = load(
        &text.replace("per = \"1%\"", "per = \"0%\""),
        "x.toml",
        None,
    )
    .unwrap();
    assert!(
        lossless.estimate.total_bytes() > 5.0 * bytes,
        "without loss the link's rate bounds it: {:.3e}",
        lossless.estimate.total_bytes()
    );
}

#[test]
fn flows_between_the_same_two_nodes_share_one_path() {
    // 20 000 flows across a 2 000-router parking lot: one path each way, not 20 000 copies of
    // 2 000 links (at 10 000 routers and 100 000 flows, gigabytes: the process aborted before
    // the memory check could refuse it).
    let text = parking_lot(
        2000,
        1,
        "[[flow]]\nprotocol = \"tcp\"\nname = \"f{i}\"\ncount = 20000\nfrom = \"h0_0\"\nto = \"h1999_0\"\n\
         [record]\ninterval = \"1s\"\nlink_series = false\n",
    );
    let s = load(&text, "long.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let routes = s.network.routes();
    assert_eq!((routes.len(), routes[0].forward.len()), (20_000, 2_001));
    assert!(
        routes
            .iter()
            .all(|r| std::sync::Arc::ptr_eq(&r.forward, &routes[0].forward)
                && std::sync::Arc::ptr_eq(&r.back, &routes[0].back))
    );
}
