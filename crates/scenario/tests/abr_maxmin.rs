//! ERICA converges to max-min fairness (issue 10): the parking lot of
//! `validation-abr-maxmin.toml` (two bottlenecks of 10 and 4 Mbit/s, four persistent ABR
//! sources, one joining at 10 s and one leaving at 20 s). In each phase, every active VC's allowed
//! cell rate settles within 10 % of its max-min fair rate, computed here by progressive filling
//! (`fairstream_metrics::fairness::max_min_rates`, which knows nothing of ERICA), within a stated
//! number of round trips, and both bottlenecks run near ERICA's target utilisation.

use fairstream_metrics::fairness::max_min_rates;
use fairstream_records::RunOutput;
use fairstream_sim::Simulator;

const SCENARIO: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../python/fairstream/scenarios/papers/validation-abr-maxmin.toml"
));

/// ERICA's target utilisation in the scenario (the default).
const U: f64 = 0.9;
/// The two backbone links, bit/s: r0 -> r1 and r1 -> r2.
const BACKBONE: [f64; 2] = [10e6, 4e6];
/// The sources' peak cell rate.
const PCR: f64 = 10e6;
/// The phases: [start, end) in seconds, and which of A, B, C, D send in each.
const PHASES: [(f64, f64, [bool; 4]); 3] = [
    (0.0, 10.0, [true, true, true, false]),
    (10.0, 20.0, [true, true, true, true]),
    (20.0, 30.0, [true, true, false, true]),
];
/// The backbone links each flow crosses.
const PATHS: [&[usize]; 4] = [&[0, 1], &[0], &[1], &[1]];
/// The longest round trip of the lot (flow A: four 1 ms access hops and two 2 ms backbone hops
/// each way, transmission times aside).
const RTT_S: f64 = 0.016;
/// The round trips within which every VC must settle after a phase starts (a source starts at
/// ICR = 56 kbit/s and ramps up by RIF · PCR per backward RM cell).
const SETTLE_RTTS: f64 = 40.0;

fn run() -> RunOutput {
    let scenario = fairstream_scenario::load(SCENARIO, "validation-abr-maxmin.toml", None).unwrap();
    Simulator::new(scenario.network).unwrap().run()
}

/// The max-min fair cell rates of the flows active in a phase (0 for the others).
fn fair_rates(active: [bool; 4]) -> Vec<f64> {
    let flows: Vec<usize> = (0..4).filter(|&f| active[f]).collect();
    let paths: Vec<Vec<usize>> = flows.iter().map(|&f| PATHS[f].to_vec()).collect();
    let capacity = BACKBONE.map(|c| U * c);
    let rates = max_min_rates(&capacity, &paths, &vec![PCR; flows.len()]);
    let mut out = vec![0.0; 4];
    for (&f, r) in flows.iter().zip(rates) {
        out[f] = r;
    }
    out
}

/// Flow `flow`'s ACR records, in time order, as (t, bit/s).
fn acr(out: &RunOutput, flow: u32) -> Vec<(f64, f64)> {
    let m = &out.metrics;
    (0..m.t.len())
        .filter(|&i| m.flow_id[i] == flow && m.metric[i] == "acr")
        .map(|i| (m.t[i], m.value[i]))
        .collect()
}

/// The ACR in force at `t` (the last record at or before it).
fn acr_at(records: &[(f64, f64)], t: f64) -> f64 {
    records
        .iter()
        .take_while(|(at, _)| *at <= t)
        .last()
        .map_or(0.0, |r| r.1)
}

/// Time-weighted mean ACR over [from, to).
fn mean_acr(records: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let mut area = 0.0;
    let mut t = from;
    let mut rate = acr_at(records, from);
    for &(at, r) in records.iter().filter(|(at, _)| *at > from && *at < to) {
        area += rate * (at - t);
        t = at;
        rate = r;
    }
    (area + rate * (to - t)) / (to - from)
}

/// The averaging window of the settling rule: about 6 round trips of the lot.
const WINDOW_S: f64 = 0.1;

/// How a VC's ACR behaves over a phase, in windows of [`WINDOW_S`] (time-weighted means: ERICA's
/// allocation wobbles cell by cell around the fair rate, as a VC's share is its CCR over the
/// port's z of the last millisecond).
struct Settling {
    /// When the first window within ±10 % of the fair rate starts (`None`: none is).
    entered: Option<f64>,
    /// Of the windows from then to the phase's end, the fraction within ±10 %.
    within: f64,
    /// The largest relative distance of any of those windows from the fair rate.
    worst: f64,
}

fn settling(records: &[(f64, f64)], fair: f64, start: f64, end: f64) -> Settling {
    let windows = ((end - start) / WINDOW_S).floor() as usize;
    let off: Vec<f64> = (0..windows)
        .map(|k| {
            let from = start + k as f64 * WINDOW_S;
            (mean_acr(records, from, from + WINDOW_S) - fair).abs() / fair
        })
        .collect();
    let Some(first) = off.iter().position(|&d| d <= 0.1) else {
        return Settling {
            entered: None,
            within: 0.0,
            worst: f64::INFINITY,
        };
    };
    let after = &off[first..];
    Settling {
        entered: Some(start + first as f64 * WINDOW_S),
        within: after.iter().filter(|&&d| d <= 0.1).count() as f64 / after.len() as f64,
        worst: after.iter().copied().fold(0.0, f64::max),
    }
}

#[test]
fn every_vc_settles_within_10_percent_of_its_max_min_rate_as_sources_come_and_go() {
    let out = run();
    let names: Vec<&str> = out.flow_names.iter().map(String::as_str).collect();
    assert_eq!(names, ["A", "B", "C", "D"]);
    let records: Vec<Vec<(f64, f64)>> = (0..4).map(|f| acr(&out, f)).collect();
    // C's application stops at 20 s, but its VC sends what its source buffer holds first: the
    // release starts when C's last cell leaves (the end of the last bin in which C sent).
    let s = &out.flow_series;
    let c_quiet = (0..s.flow_id.len())
        .filter(|&i| s.flow_id[i] == 2 && s.packets_sent[i] > 0)
        .map(|i| s.t_end[i])
        .fold(0.0, f64::max);
    assert!(
        (20.0..21.0).contains(&c_quiet),
        "C's VC drains by {c_quiet} s"
    );
    for (start, end, active) in PHASES {
        let start = if start == 20.0 { c_quiet } else { start };
        let fair = fair_rates(active);
        for f in (0..4).filter(|&f| active[f]) {
            // Settled over the phase's last 2 s ...
            let mean = mean_acr(&records[f], end - 2.0, end);
            assert!(
                (mean - fair[f]).abs() <= 0.1 * fair[f],
                "{} in [{start}, {end}) s: mean ACR {mean:.0} bit/s, max-min fair {:.0}",
                names[f],
                fair[f]
            );
            // ... entered within the stated number of round trips of the phase's start, and
            // held: at least 95 % of the windows from then on within ±10 %, none beyond ±25 %.
            let st = settling(&records[f], fair[f], start, end);
            let at = st.entered.unwrap_or(f64::INFINITY);
            // The figures of docs/VALIDATION.md (`cargo test --test abr_maxmin -- --nocapture`).
            eprintln!(
                "{} [{start:.1}, {end}) s: max-min {:.3} Mbit/s, mean ACR over the last 2 s {:.3} \
                 ({:+.1} %), within ±10 % after {:.0} RTTs ({:.2} s), {:.0} % of 100 ms windows \
                 within ±10 % from then, worst {:.1} %",
                names[f],
                fair[f] / 1e6,
                mean / 1e6,
                100.0 * (mean / fair[f] - 1.0),
                (at - start) / RTT_S,
                at - start,
                100.0 * st.within,
                100.0 * st.worst
            );
            assert!(
                at - start <= SETTLE_RTTS * RTT_S,
                "{} in [{start}, {end}) s settles at {at:.3} s, {:.0} round trips after the start",
                names[f],
                (at - start) / RTT_S
            );
            assert!(
                st.within >= 0.95 && st.worst <= 0.25,
                "{} in [{start}, {end}) s: {:.0} % of the windows within ±10 %, the worst {:.0} % off",
                names[f],
                100.0 * st.within,
                100.0 * st.worst
            );
        }
    }
}

#[test]
fn both_bottlenecks_run_near_ericas_target() {
    let out = run();
    let s = &out.link_series;
    for (name, _) in [("r0->r1", BACKBONE[0]), ("r1->r2", BACKBONE[1])] {
        let id = out.link_names.iter().position(|n| n == name).unwrap() as u32;
        // The last 5 s of each phase.
        for (_, end, _) in PHASES {
            let rows: Vec<usize> = (0..s.link_id.len())
                .filter(|&i| {
                    s.link_id[i] == id
                        && s.t_start[i] >= end - 5.0 - 1e-9
                        && s.t_end[i] <= end + 1e-9
                })
                .collect();
            let util = rows.iter().map(|&i| s.utilisation[i]).sum::<f64>() / rows.len() as f64;
            assert!(
                (util - U).abs() <= 0.05,
                "{name} before {end} s: utilisation {util:.3}, ERICA's target {U}"
            );
        }
    }
}
