//! Same scenario and seed, bit-identical results; another seed, other results. The scenario
//! draws from every random stream: starts, RED, Gilbert-Elliott loss, host overhead, the random
//! tie order and the delay perturbation.

use fairstream_records::RunOutput;
use fairstream_scenario::load;
use fairstream_sim::Simulator;

const SCENARIO: &str = r#"name = "determinism"
duration = "20s"
[topology]
kind = "dumbbell"
hosts = 3
access = { rate = "100Mbps", delay = "5ms" }
bottleneck = { rate = "5Mbps", delay = "10ms", queue = { kind = "red" }, loss = { kind = "gilbert-elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3 } }
[[flow]]
count = 2
name = "tcp{i}"
from = "left{i}"
to = "right{i}"
start = { uniform = ["0s", "2s"] }
variant = "reno"
overhead = "300us"
[[flow]]
protocol = "cbr"
from = "left2"
to = "right2"
rate = "2Mbps"
on = "1s"
off = "500ms"
[record]
metrics = true
packets = true
[engine]
ties = "random"
perturb_delays = 0.5
"#;

fn run(seed: Option<u64>) -> RunOutput {
    Simulator::new(load(SCENARIO, "det.toml", seed).unwrap().network)
        .unwrap()
        .run()
}

fn fingerprint(o: &RunOutput) -> (u64, Vec<u64>, Vec<u64>, Vec<u64>, usize, Vec<u64>) {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    (
        o.events,
        o.flow_series.bytes_delivered.clone(),
        o.link_series.packets_dropped.clone(),
        bits(&o.metrics.value),
        o.packet_trace.as_ref().map_or(0, |t| t.t.len()),
        bits(&o.flows.iter().map(|f| f.mean_rtt_s).collect::<Vec<_>>()),
    )
}

#[test]
fn same_seed_gives_identical_results() {
    let (a, b) = (run(None), run(None));
    assert!(
        a.events > 10_000,
        "the scenario exercises the simulator: {} events",
        a.events
    );
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(a.packet_trace, b.packet_trace);
    assert_eq!(a.metrics, b.metrics);
}

#[test]
fn another_seed_gives_other_results() {
    let (a, b) = (run(Some(1)), run(Some(2)));
    assert_ne!(fingerprint(&a), fingerprint(&b));
}

/// A driver that advances in bounded slices of events (as the Python layer does, to notice
/// Ctrl-C) gets the very same run as one that runs it whole.
#[test]
fn advancing_in_slices_of_events_gives_identical_results() {
    let whole = run(None);
    let mut sim = Simulator::new(load(SCENARIO, "det.toml", None).unwrap().network).unwrap();
    let end = sim.end();
    let mut slices = 0;
    while !sim.run_until_at_most(end, 1000) {
        slices += 1;
    }
    assert!(slices > 10, "the run was sliced: {slices} slices");
    let sliced = sim.finish();
    assert_eq!(fingerprint(&whole), fingerprint(&sliced));
    assert_eq!(whole.packet_trace, sliced.packet_trace);
}

/// A run stopped part-way reports what happened up to where it stopped, as a run that long.
#[test]
fn a_run_stopped_early_reports_up_to_where_it_stopped() {
    let mut sim = Simulator::new(load(SCENARIO, "det.toml", None).unwrap().network).unwrap();
    let end = sim.end();
    assert!(
        !sim.run_until_at_most(end, 20_000),
        "20 000 events do not finish the run"
    );
    let at = sim.now();
    assert!(at > fairstream_core::Instant::ZERO && at < end);
    let out = sim.finish_at(at);
    assert_eq!(out.events, 20_000);
    assert_eq!(
        out.duration,
        at.saturating_since(fairstream_core::Instant::ZERO)
    );
    let last_bin_end = out.flow_series.t_end.iter().copied().fold(0.0, f64::max);
    assert_eq!(
        last_bin_end,
        at.as_secs_f64(),
        "the bin in progress closes where the run stopped"
    );
    for f in &out.flows {
        assert!(
            f.stop_s <= at.as_secs_f64(),
            "{} stops at {} s",
            f.name,
            f.stop_s
        );
    }
}
