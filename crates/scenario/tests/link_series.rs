//! `[record] link_series`: the links whose interval series a run keeps. The rows kept are those
//! links' rows, equal to what the run records with every link kept; the summaries still cover
//! every link; the estimate and the row limit count the kept links; a bad list is an error
//! naming the field.

use std::collections::BTreeSet;

use fairstream_scenario::{ScenarioError, load};
use fairstream_sim::{Estimate, Simulator};

/// A chain a → b → c, a short queue on b → c, two flows; `record` is the `[record]` table's body.
fn chain(record: &str) -> String {
    format!(
        r#"name = "chain"
duration = "3s"
seed = 7

[topology]
nodes = ["a", "b", "c"]

[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"

[[topology.link]]
between = ["b", "c"]
rate = "2Mbps"
delay = "10ms"
queue = {{ kind = "droptail", limit = "10 packets" }}

[[flow]]
protocol = "tcp"
from = "a"
to = "c"

[[flow]]
protocol = "tcp"
from = "a"
to = "c"
start = "0.3s"

[record]
interval = "100ms"
{record}
"#
    )
}

fn run(text: &str) -> fairstream_records::RunOutput {
    let s = load(text, "chain.toml", None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(s.network).unwrap();
    sim.run_until(sim.end());
    sim.finish()
}

fn err(text: &str) -> ScenarioError {
    load(text, "bad.toml", None).expect_err("the scenario should be rejected")
}

/// The link series' rows of the links `ids`, as (link, bin start, forwarded bytes, queue, drops).
fn rows(out: &fairstream_records::RunOutput, ids: &[u32]) -> Vec<(u32, u64, u64, u64, u64)> {
    let s = &out.link_series;
    (0..s.link_id.len())
        .filter(|&i| ids.contains(&s.link_id[i]))
        .map(|i| {
            (
                s.link_id[i],
                s.t_start[i].to_bits(),
                s.bytes_forwarded[i],
                s.queue_bytes[i],
                s.packets_dropped[i],
            )
        })
        .collect()
}

#[test]
fn a_run_keeps_the_series_of_the_links_it_names_and_nothing_else_changes() {
    let all = run(&chain(""));
    let kept = run(&chain(r#"link_series = ["b->c", "a->b", "b->c"]"#));
    let names = &all.link_names;
    let id = |name: &str| names.iter().position(|n| n == name).unwrap() as u32;
    let wanted = [id("a->b"), id("b->c")];
    let ids: BTreeSet<u32> = kept.link_series.link_id.iter().copied().collect();
    assert_eq!(ids, wanted.into_iter().collect(), "{names:?}");
    assert!(all.link_series.link_id.len() > kept.link_series.link_id.len());
    assert_eq!(rows(&kept, &wanted), rows(&all, &wanted));
    // Everything else is what the run with every series gives.
    assert_eq!(kept.events, all.events);
    assert_eq!(format!("{:?}", kept.links), format!("{:?}", all.links));
    assert_eq!(format!("{:?}", kept.flows), format!("{:?}", all.flows));
    assert!(
        rows(&kept, &wanted).iter().any(|r| r.4 > 0),
        "no drop recorded"
    );

    let none = run(&chain("link_series = false"));
    assert!(none.link_series.link_id.is_empty());
    assert_eq!(none.links.len(), 4);
    assert_eq!(none.flow_series.t_start, all.flow_series.t_start);
}

#[test]
fn the_resolved_scenario_lists_the_kept_links_in_link_order() {
    let resolved = |record: &str| load(&chain(record), "ok.toml", None).unwrap().resolved;
    let r = resolved(r#"link_series = ["b->c", "a->b", "b->c"]"#);
    assert!(r.contains(r#"link_series = ["a->b", "b->c"]"#), "{r}");
    assert!(resolved("").contains("link_series = true"));
    assert!(resolved("link_series = false").contains("link_series = false"));
}

#[test]
fn the_estimate_counts_the_kept_links_only() {
    let estimate = |record: &str| {
        let s = load(&chain(record), "ok.toml", None).unwrap();
        Estimate::of(&s.network).series_rows
    };
    // 30 bins × (2 flows + links)
    assert_eq!(estimate(""), 30.0 * 6.0);
    assert_eq!(estimate(r#"link_series = ["b->c"]"#), 30.0 * 3.0);
    assert_eq!(estimate("link_series = false"), 30.0 * 2.0);
}

#[test]
fn a_bad_list_of_links_is_an_error_naming_the_field() {
    let e = err(&chain(r#"link_series = ["a->b", "a->c"]"#));
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("bad.toml", "record.link_series")
    );
    assert!(
        e.message.contains("unknown link `a->c`") && e.message.contains("b->c"),
        "{e}"
    );
    let e = err(&chain("link_series = []"));
    assert!(e.message.contains("write `link_series = false`"), "{e}");
    let e = err(&chain(r#"link_series = "a->b""#));
    assert!(
        e.message.contains("expected true, false, or an array"),
        "{e}"
    );
}

#[test]
fn the_row_limit_counts_the_kept_links() {
    // 10 000 hosts a side for 1 000 s in bins of 1 s: 40 002 links' series pass the limit, the
    // bottleneck's alone does not.
    let big = |record: &str| {
        format!(
            r#"name = "big"
duration = "1000s"
[topology]
kind = "dumbbell"
hosts = 10000
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "2ms" }}
[[flow]]
protocol = "tcp"
from = "left0"
to = "right0"
[record]
interval = "1s"
{record}
"#
        )
    };
    let e = err(&big(""));
    assert_eq!(e.field, "record.interval", "{e}");
    assert!(e.message.contains("link_series"), "{e}");
    load(
        &big(r#"link_series = ["router_left->router_right"]"#),
        "ok.toml",
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // A name mistyped among 40 002 links: the message names the one meant, a few others and
    // counts the rest.
    let e = err(&big(r#"link_series = ["router_left->router_rihgt"]"#));
    assert_eq!(e.field, "record.link_series", "{e}");
    assert!(
        e.message.contains(
            "unknown link `router_left->router_rihgt`; did you mean `router_left->router_right`? "
        ) && e.message.contains("\"left0->router_left\", ")
            && e.message.ends_with(", … and 39990 more"),
        "{e}"
    );
    assert!(e.message.len() < 600, "{} bytes", e.message.len());
}
