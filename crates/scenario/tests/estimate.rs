//! The estimate made before a run bounds what the run does: for every shipped scenario (cut to
//! a short run, with the packet trace and the metric records on, and off) and for a dumbbell of
//! 100 000 hosts, the events, the rows of each table and the memory the run holds (counted by a
//! global allocator, `stats_alloc`) stay within the estimate. One test, so that no other test's
//! allocations are counted with it.

use std::alloc::System;
use std::path::PathBuf;

use fairstream_core::Instant;
use fairstream_scenario::load;
use fairstream_sim::{Estimate, Simulator};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The scenarios the package ships.
fn shipped() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/fairstream/scenarios");
    let mut files = Vec::new();
    for dir in ["bench", "papers"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() > 20, "{files:?}");
    files
}

/// `text` cut to `duration`, recording the packet trace and metric records or not, and no
/// captures.
fn short(text: &str, duration: &str, everything: bool) -> String {
    let mut doc: toml::Table = text.parse().unwrap();
    doc.insert("duration".into(), toml::Value::String(duration.into()));
    let record = doc
        .entry("record")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .unwrap();
    record.insert("packets".into(), toml::Value::Boolean(everything));
    record.insert("metrics".into(), toml::Value::Boolean(everything));
    record.remove("pcap");
    for f in doc
        .get_mut("flow")
        .and_then(|f| f.as_array_mut())
        .into_iter()
        .flatten()
    {
        if let Some(t) = f.as_table_mut() {
            t.remove("stop");
        }
    }
    toml::to_string(&doc).unwrap()
}

/// Bytes allocated and not yet freed since `region` began.
fn live(region: &Region<'_, System>) -> f64 {
    let s = region.change();
    s.bytes_allocated as f64 - s.bytes_deallocated as f64
}

/// A dumbbell of 100 000 hosts, a TCP flow between each pair, for 20 ms.
const BIG_DUMBBELL: &str = r#"name = "big"
duration = "20ms"
[topology]
kind = "dumbbell"
hosts = 100000
access = { rate = "100Mbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "2ms" }
[[flow]]
protocol = "tcp"
name = "tcp{i}"
count = 100000
from = "left{i}"
to = "right{i}"
[record]
interval = "10ms"
"#;

#[test]
fn runs_stay_within_their_estimate() {
    // (name, text, whether the trace has rows: None where it may have none, losses alone)
    let mut cases: Vec<(String, String, Option<bool>)> = shipped()
        .into_iter()
        .flat_map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let everything = short(&text, "3s", true);
            let losses = everything.replace("packets = true", r#"packets = ["drop", "corrupt"]"#);
            [
                (name.clone(), everything, Some(true)),
                (format!("{name} (losses traced)"), losses, None),
                (name, short(&text, "3s", false), Some(false)),
            ]
        })
        .collect();
    cases.push(("big dumbbell".into(), BIG_DUMBBELL.into(), Some(false)));
    for (name, text, traced) in cases {
        let region = Region::new(GLOBAL);
        let s = load(&text, &name, None).unwrap_or_else(|e| panic!("{e}"));
        if s.check_simulable().is_err() {
            continue; // linux-tcp flows: the emulator's, which has no estimate to keep
        }
        let est = Estimate::of(&s.network);
        let mut peak = live(&region);
        let mut sim = Simulator::new(s.network).unwrap();
        let end = sim.end().as_nanos();
        for k in 1..=30 {
            sim.run_until(Instant::from_nanos(end / 30 * k));
            peak = peak.max(live(&region));
        }
        sim.run_until(Instant::from_nanos(end));
        let out = sim.finish();
        peak = peak.max(live(&region));
        let trace = out.packet_trace.as_ref().map_or(0, |t| t.t.len()) as f64;
        let series = (out.flow_series.t_start.len() + out.link_series.t_start.len()) as f64;
        let metrics = out.metrics.t.len() as f64;
        for (what, actual, estimated) in [
            ("events", out.events as f64, est.events),
            ("trace rows", trace, est.trace_rows),
            ("series rows", series, est.series_rows),
            ("metric records", metrics, est.metric_rows),
            ("bytes", peak, est.total_bytes()),
        ] {
            assert!(
                actual <= estimated,
                "{name}: {actual} {what}, estimated {estimated} ({:?})",
                est.largest()
            );
        }
        assert!(
            peak > 0.0 && traced.is_none_or(|t| (trace > 0.0) == t),
            "{name}: nothing measured"
        );
    }
}
