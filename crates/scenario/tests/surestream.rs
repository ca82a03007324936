//! The streamer (`protocol = "surestream"`, paper 000): through a token-bucket bottleneck its
//! level settles below the bottleneck, its player plays the clip, over TCP it adapts and starts
//! later than over UDP head to head, a run is a function of its seed, and bad parameters are
//! named with file, line and field.

use fairstream_records::RunOutput;
use fairstream_scenario::{ScenarioError, load};
use fairstream_sim::Simulator;

/// Two nodes joined by a 10 Mbps link whose forward queue is a `tbf_kbps` token bucket (10 KB
/// queue, 1600 B burst, as paper 000's testbed), and one streamer per entry of `flows` (its
/// extra keys), each on its own line 24 + 5·i.
fn scenario(tbf_kbps: u64, duration: &str, flows: &[&str]) -> String {
    let mut s = format!(
        r#"name = "t"
duration = "{duration}"
seed = 3

[topology]
nodes = ["s", "c"]

[[topology.link]]
from = "s"
to = "c"
rate = "10Mbps"
delay = "40ms"
queue = {{ kind = "tbf", rate = "{tbf_kbps}kbps", burst = "1600B", limit = "10KB" }}

[[topology.link]]
from = "c"
to = "s"
rate = "10Mbps"
delay = "40ms"

[record]
metrics = true
"#
    );
    for (i, keys) in flows.iter().enumerate() {
        s.push_str(&format!(
            "\n[[flow]]\nname = \"f{i}\"\nprotocol = \"surestream\"\n{keys}\nfrom = \"s\"\nto = \"c\"\n"
        ));
    }
    s
}

fn run(text: &str) -> RunOutput {
    let sc = load(text, "t.toml", None).unwrap();
    Simulator::new(sc.network).unwrap().run()
}

/// `(t, value)` of `metric` for flow `flow`, in time order.
fn series(out: &RunOutput, flow: u32, metric: &str) -> Vec<(f64, f64)> {
    let m = &out.metrics;
    (0..m.t.len())
        .filter(|&i| m.flow_id[i] == flow && m.metric[i] == metric)
        .map(|i| (m.t[i], m.value[i]))
        .collect()
}

/// Seconds in [from, to) during which the step function `steps` is above `limit`.
fn time_above(steps: &[(f64, f64)], limit: f64, from: f64, to: f64) -> f64 {
    let mut total = 0.0;
    for (i, &(t, v)) in steps.iter().enumerate() {
        let end = steps.get(i + 1).map_or(to, |p| p.0).min(to);
        let start = t.max(from);
        if v > limit && end > start {
            total += end - start;
        }
    }
    total
}

fn last(out: &RunOutput, flow: u32, metric: &str) -> f64 {
    series(out, flow, metric).last().map_or(f64::NAN, |p| p.1)
}

#[test]
fn udp_level_settles_below_the_bottleneck_and_the_clip_plays() {
    let out = run(&scenario(
        300,
        "70s",
        &[r#"clip_length = "60s"
levels = [20, 45, 100, 225, 450]"#],
    ));
    let rates = series(&out, 0, "encoded_rate");
    // Starts at the top level, 450 kbps, above the 300 kbps bottleneck.
    assert_eq!(rates.first().map(|p| p.1), Some(450_000.0));
    // Below it within 5 s; from 10 s on, above it (probing the next level up, with backoff)
    // less than 15 % of the time.
    let first_below = rates.iter().find(|p| p.1 < 300_000.0).unwrap().0;
    assert!(first_below < 5.0, "{rates:?}");
    let above = time_above(&rates, 300_000.0, 10.0, 60.0);
    assert!(above < 0.15 * 50.0, "{above} s above: {rates:?}");
    // The clip (900 frames) played out: every frame's turn passed, most were decodable.
    let delivered = last(&out, 0, "frames_delivered");
    let decodable = last(&out, 0, "frames_decodable");
    let sent = last(&out, 0, "frames_sent");
    assert_eq!(sent, 900.0);
    assert!(
        decodable <= delivered && delivered <= sent,
        "{decodable} {delivered}"
    );
    // (The first seconds are lost in part: 450 kbps × 6 into 300 kbps.)
    assert!(decodable > 0.5 * sent, "{decodable} of {sent}");
    // Start-up: 10 s of media, sent at 6× the level's rate, arrives in well under 10 s.
    let startup = last(&out, 0, "startup_delay");
    assert!(startup > 0.0 && startup < 10.0, "{startup}");
}

#[test]
fn tcp_adapts_and_starts_later_than_udp_head_to_head() {
    // Paper 000's head-to-head: the same clip over UDP and over TCP, at once, through a
    // 150 kbps token bucket; both start at the top level (450 kbps).
    let clip = r#"clip_length = "60s"
levels = [20, 45, 100, 225, 450]"#;
    let out = run(&scenario(
        150,
        "90s",
        &[
            &format!("transport = \"udp\"\n{clip}"),
            &format!("transport = \"tcp\"\n{clip}"),
        ],
    ));
    let below = |flow| {
        series(&out, flow, "encoded_rate")
            .iter()
            .find(|p| p.1 < 150_000.0)
            .map_or(f64::INFINITY, |p| p.0)
    };
    let (udp, tcp) = (below(0), below(1));
    // UDP sees loss within a report and steps down every down_hold; TCP must first fill its
    // send buffer and fall lag_down behind before each step, so it gets below later.
    assert!(udp < tcp, "UDP below at {udp} s, TCP at {tcp} s");
    assert!(udp < 10.0, "{udp}");
    // Over TCP every frame that is delivered arrives whole and in order: all are decodable
    // (and the player never sees a loss).
    let tcp_delivered = last(&out, 1, "frames_delivered");
    assert!(tcp_delivered > 0.0);
    assert_eq!(
        last(&out, 1, "frames_decodable") + last(&out, 1, "frames_late"),
        tcp_delivered
    );
    // TCP's start-up takes longer: its prebuffer is written at the top level into a buffer
    // that drains at TCP's share of 150 kbps.
    let startup = |flow| last(&out, flow, "startup_delay");
    assert!(
        startup(0) < startup(1),
        "UDP {} s, TCP {} s",
        startup(0),
        startup(1)
    );
}

#[test]
fn same_seed_same_bits() {
    let text = scenario(
        150,
        "20s",
        &[r#"clip_length = "15s""#, r#"transport = "udp""#],
    );
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.flows, b.flows);
}

fn err(keys: &str) -> ScenarioError {
    load(&scenario(300, "10s", &[keys]), "bad.toml", None).expect_err("should be rejected")
}

/// The flow's extra keys are on line 27.
fn at(e: &ScenarioError, field: &str, says: &str) {
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_str()),
        ("bad.toml", 27, field),
        "{e}"
    );
    assert!(e.message.contains(says), "{e}");
}

#[test]
fn bad_parameters_name_file_line_and_field() {
    at(
        &err("speedup = 0.5"),
        "flow[0].speedup",
        "slower than the clip plays",
    );
    at(&err("levels = []"), "flow[0].levels", "no levels");
    at(
        &err("levels = [100, 50]"),
        "flow[0].levels",
        "not above the level before it",
    );
    at(&err("levels = [\"fast\"]"), "flow[0].levels", "");
    at(&err("prebuffer = \"-5s\""), "flow[0].prebuffer", "");
    at(&err("clip_length = \"-1s\""), "flow[0].clip_length", "");
    at(
        &err("transport = \"sctp\""),
        "flow[0].transport",
        "`sctp` is not one of \"udp\", \"tcp\"",
    );
    at(
        &err("initial_level = 7"),
        "flow[0].initial_level",
        "out of range",
    );
}

#[test]
fn the_example_scenario_loads_resolves_to_a_fixed_point_and_plays_both_clips() {
    use fairstream_records::Value::{Count, Real};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/surestream-h2h.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let sc = load(&text, path, None).unwrap();
    let again = load(&sc.resolved, "resolved.toml", None).unwrap();
    assert_eq!(again.resolved, sc.resolved);
    let out = Simulator::new(sc.network).unwrap().run();
    for flow in [0, 1] {
        // 120 s at 15 frame/s: every frame sent, and the clip played out within the run.
        assert_eq!(last(&out, flow, "frames_sent"), 1800.0, "flow {flow}");
        assert!(last(&out, flow, "frames_delivered") > 0.0, "flow {flow}");
        assert!(
            last(&out, flow, "buffered") == 0.0,
            "flow {flow} still holds media"
        );
        // The flow summary holds the last values, and a mean encoded rate between the levels.
        let summary = &out.flows[flow as usize].summaries;
        let m = |name: &str| {
            let found = summary.iter().find(|(c, _)| c.name == name);
            found.map(|(_, v)| *v)
        };
        assert_eq!(m("frames_sent"), Some(Count(1800)));
        assert_eq!(
            m("frames_delivered"),
            Some(Count(last(&out, flow, "frames_delivered") as u64))
        );
        assert_eq!(m("stalls"), Some(Count(last(&out, flow, "stalls") as u64)));
        let changes = series(&out, flow, "level").len() as u64 - 1;
        assert_eq!(m("level_changes"), Some(Count(changes)));
        assert!(changes > 0);
        let Some(Real(mean)) = m("mean_encoded_rate_bps") else {
            panic!("no mean encoded rate")
        };
        assert!((20_000.0..450_000.0).contains(&mean), "{mean}");
    }
}

#[test]
fn the_other_transports_keys_are_refused_and_not_resolved() {
    for (keys, field) in [
        ("transport = \"tcp\"\nloss_down = 0.1", "flow[0].loss_down"),
        (
            "transport = \"tcp\"\nfeedback_timeout = \"1s\"",
            "flow[0].feedback_timeout",
        ),
        ("send_buffer = \"32KiB\"", "flow[0].send_buffer"),
        ("transport = \"udp\"\nlag_down = \"1s\"", "flow[0].lag_down"),
    ] {
        let e = err(keys);
        assert_eq!(e.field, field, "{e}");
        assert!(
            e.message.contains("does not apply to a streamer over"),
            "{e}"
        );
    }
    for (transport, own, other) in [
        ("tcp", "lag_down", "loss_down"),
        ("udp", "loss_down", "lag_down"),
    ] {
        let keys = format!("transport = \"{transport}\"");
        let s = load(&scenario(300, "10s", &[&keys]), "ok.toml", None).unwrap();
        assert!(
            s.resolved.contains(own) && !s.resolved.contains(other),
            "{}",
            s.resolved
        );
    }
}
