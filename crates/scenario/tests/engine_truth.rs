//! Engine truths that hang on a scenario's own keys, checked on what scenarios read from TOML
//! record: host overhead (`overhead`) and ns-2 drop-tail counting (`preset = "ns2"`). The
//! engine's own properties (work conservation, ties, capacity schedules, routing, recording)
//! are tested on networks built in Rust, in `crates/sim/tests/engine.rs`.

use fairstream_records::{PacketEvent, RunOutput};
use fairstream_scenario::load;
use fairstream_sim::Simulator;

fn run(text: &str) -> RunOutput {
    let scenario = load(text, "engine.toml", None).unwrap_or_else(|e| panic!("{e}"));
    Simulator::new(scenario.network).unwrap().run()
}

/// `(t_ns, packet_id, size)` of every `event` at link `name`, in trace order.
fn events(out: &RunOutput, name: &str, event: PacketEvent) -> Vec<(u64, u64, u32)> {
    let link = out.link_names.iter().position(|n| n == name).unwrap() as u32;
    let tr = out.packet_trace.as_ref().expect("packet trace on");
    (0..tr.t.len())
        .filter(|&i| tr.link_id[i] == link && tr.event[i] == event)
        .map(|i| (tr.t_ns[i], tr.packet_id[i], tr.size[i]))
        .collect()
}

/// Two CBR sources `a` and `b` into router `r`, which forwards to `c` over the link under test.
fn fan_in(bottleneck: &str, cbr_a: &str, cbr_b: &str, extra: &str) -> String {
    format!(
        r#"name = "fan-in"
duration = "2s"
{extra}
[topology]
nodes = ["a", "b", "r", "c"]
[[topology.link]]
between = ["a", "r"]
rate = "10Mbps"
delay = "1ms"
[[topology.link]]
between = ["b", "r"]
rate = "10Mbps"
delay = "1ms"
[[topology.link]]
from = "r"
to = "c"
{bottleneck}
[[topology.link]]
from = "c"
to = "r"
rate = "10Mbps"
delay = "10ms"
[[flow]]
protocol = "cbr"
from = "a"
to = "c"
packet_size = "1000B"
{cbr_a}
[[flow]]
protocol = "cbr"
from = "b"
to = "c"
packet_size = "1000B"
{cbr_b}
[record]
packets = true
"#
    )
}

#[test]
fn host_overhead_delays_packets_without_reordering_them() {
    let text = fan_in(
        r#"rate = "10Mbps"
delay = "10ms""#,
        r#"rate = "800kbps"
overhead = "5ms""#,
        r#"rate = "800kbps""#,
        "",
    );
    let out = run(&text);
    let emitted: Vec<(u64, u64, u32)> = events(&out, "a->r", PacketEvent::Enqueue);
    assert!(emitted.len() > 150);
    // Nominal send times are k × 10 ms; each departure is later by at most the overhead, the
    // departures keep their order, and the gaps are not all equal.
    let mut gaps = std::collections::BTreeSet::new();
    for (k, w) in emitted.windows(2).enumerate() {
        assert!(w[1].1 > w[0].1 && w[1].0 >= w[0].0);
        let lateness = w[1].0 - (k as u64 + 1) * 10_000_000;
        assert!(lateness <= 5_000_000 * (k as u64 + 2), "{lateness}");
        gaps.insert(w[1].0 - w[0].0);
    }
    assert!(gaps.len() > 100);
    let again = run(&text);
    assert_eq!(events(&again, "a->r", PacketEvent::Enqueue), emitted);
}

#[test]
fn ns2_drop_tail_counting_holds_one_packet_less() {
    let waiting_at_most = |preset: &str| {
        let text = fan_in(
            &format!(
                r#"rate = "1Mbps"
delay = "10ms"
queue = {{ kind = "droptail", limit = 5, preset = "{preset}" }}"#
            ),
            r#"rate = "2Mbps""#,
            r#"rate = "1kbps""#,
            "",
        );
        let out = run(&text);
        let link = out.link_names.iter().position(|n| n == "r->c").unwrap() as u32;
        let s = &out.link_series;
        (0..s.link_id.len())
            .filter(|&i| s.link_id[i] == link)
            .map(|i| s.queue_packets[i])
            .max()
            .unwrap()
    };
    assert_eq!(waiting_at_most("pfifo"), 5);
    assert_eq!(waiting_at_most("ns2"), 4);
}

#[test]
fn a_trace_of_losses_alone_is_the_full_traces_losses() {
    let text = fan_in(
        r#"rate = "1Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = 5 }
loss = { kind = "bernoulli", per = 0.1 }"#,
        r#"rate = "2Mbps""#,
        r#"rate = "100kbps""#,
        "",
    );
    let full = run(&text);
    let losses_only = run(&text.replace("packets = true", r#"packets = ["corrupt", "drop"]"#));
    let (all, kept) = (
        full.packet_trace.as_ref().unwrap(),
        losses_only.packet_trace.as_ref().unwrap(),
    );
    let rows = |tr: &fairstream_records::PacketTrace, i: usize| {
        (
            tr.t_ns[i],
            tr.packet_id[i],
            tr.event[i],
            tr.link_id[i],
            tr.flow_id[i],
            tr.seq[i],
            tr.size[i],
            tr.reverse[i],
        )
    };
    let expected: Vec<_> = (0..all.t.len())
        .filter(|&i| !all.event[i].per_hop())
        .map(|i| rows(all, i))
        .collect();
    let got: Vec<_> = (0..kept.t.len()).map(|i| rows(kept, i)).collect();
    for event in [PacketEvent::Drop, PacketEvent::Corrupt] {
        assert!(
            got.iter().filter(|r| r.2 == event).count() > 10,
            "{event:?}"
        );
    }
    assert_eq!(got, expected);
    assert_eq!(kept.t.len(), kept.t_ns.len());
    // (Debug text: a CBR flow's mean RTT is NaN.)
    assert_eq!(
        format!("{:?}", losses_only.flows),
        format!("{:?}", full.flows)
    );
    assert_eq!(losses_only.events, full.events);
}

#[test]
fn a_metric_table_of_named_metrics_is_the_full_tables_rows_of_them() {
    let text = |metrics: &str| {
        format!(
            r#"name = "metrics"
duration = "10s"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "2Mbps"
delay = "20ms"
queue = {{ kind = "droptail", limit = 10 }}
[[flow]]
protocol = "tcp"
from = "a"
to = "b"
window = 100
[record]
metrics = {metrics}
"#
        )
    };
    let full = run(&text("true"));
    let named = run(&text(r#"["timeout", "rtt", "fast_retransmit"]"#));
    let kept = ["rtt", "fast_retransmit", "timeout"];
    let rows = |m: &fairstream_records::MetricRecords, only: bool| -> Vec<(u64, u32, &str, u64)> {
        (0..m.t.len())
            .filter(|&i| !only || kept.contains(&m.metric[i]))
            .map(|i| {
                (
                    m.t[i].to_bits(),
                    m.flow_id[i],
                    m.metric[i],
                    m.value[i].to_bits(),
                )
            })
            .collect()
    };
    let expected = rows(&full.metrics, true);
    assert!(
        expected.len() > 30 && expected.len() < full.metrics.t.len() / 4,
        "{} of {}",
        expected.len(),
        full.metrics.t.len()
    );
    for name in ["rtt", "fast_retransmit"] {
        let n = expected.iter().filter(|r| r.2 == name).count();
        assert!(n > 0, "{name}: {n}");
    }
    assert_eq!(rows(&named.metrics, false), expected);
    // Summaries fold every record, kept or not.
    assert_eq!(format!("{:?}", named.flows), format!("{:?}", full.flows));
}
