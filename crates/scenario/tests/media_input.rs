//! The media-scaling flows (`protocol = "mmapp"` and `"mpegapp"`): defaults resolve and load
//! back, a bad parameter gets an error naming the file, line and field, and both run in the
//! simulator, climbing to scale 4 on an empty path and deterministic for a seed.

use fairstream_records::RunOutput;
use fairstream_scenario::{ScenarioError, load};
use fairstream_sim::Simulator;

/// A scenario with one flow of `protocol` and the extra `keys` line in its table (line 14).
fn scenario(protocol: &str, keys: &str) -> String {
    format!(
        r#"name = "t"
duration = "10s"

[topology]
nodes = ["a", "b"]

[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "20ms"

[[flow]]
protocol = "{protocol}"
{keys}
from = "a"
to = "b"

[record]
metrics = true
"#
    )
}

fn err(protocol: &str, keys: &str) -> ScenarioError {
    load(&scenario(protocol, keys), "bad.toml", None).expect_err("should be rejected")
}

/// The error's (line, field), and its message contains `says`.
fn at(e: &ScenarioError, line: usize, field: &str, says: &str) {
    assert_eq!(
        (e.file.as_str(), e.line, e.field.as_str()),
        ("bad.toml", line, field),
        "{e}"
    );
    assert!(e.message.contains(says), "{e}");
}

#[test]
fn both_load_with_their_defaults_and_their_resolved_form_loads_back() {
    for protocol in ["mmapp", "mpegapp"] {
        let s = load(&scenario(protocol, ""), "ok.toml", None).unwrap();
        let again = load(&s.resolved, "resolved.toml", None).unwrap();
        let value = |t: &str| t.parse::<toml::Table>().unwrap();
        assert_eq!(value(&again.resolved), value(&s.resolved), "{protocol}");
        assert!(s.resolved.contains("initial_scale = 0"), "{}", s.resolved);
        assert!(s.resolved.contains("toi_alpha = 0.5"));
    }
    let mm = load(&scenario("mmapp", ""), "ok.toml", None).unwrap();
    assert!(
        mm.resolved
            .contains(r#"rates = ["300kbps", "500kbps", "700kbps", "900kbps", "1.1Mbps"]"#),
        "{}",
        mm.resolved
    );
    let mpeg = load(&scenario("mpegapp", ""), "ok.toml", None).unwrap();
    for line in [
        "gop = \"IBBPBBPBB\"",
        "frame_rate = 30.0",
        "i_frame = \"11000B\"",
        "max_packet = \"1500B\"",
        "gops = 1",
    ] {
        assert!(mpeg.resolved.contains(line), "{line}: {}", mpeg.resolved);
    }
    let noisy = load(&scenario("mpegapp", "size_noise = 0.2"), "ok.toml", None).unwrap();
    assert!(noisy.resolved.contains("gops = 100"));
}

#[test]
fn bad_rates_name_the_field() {
    at(
        &err("mmapp", r#"rates = ["1Mbps"]"#),
        14,
        "flow[0].rates",
        "expected 5",
    );
    let e = err(
        "mmapp",
        r#"rates = ["300kbps", "500kbps", "4kbps", "900kbps", "1Mbps"]"#,
    );
    at(&e, 14, "flow[0].rates", "below scale 1's");
    // The error points at the offending rate.
    assert_eq!(e.column, 32, "{e}");
    at(
        &err(
            "mmapp",
            r#"rates = ["0kbps", "1kbps", "2kbps", "3kbps", "4kbps"]"#,
        ),
        14,
        "flow[0].rates",
        "zero",
    );
    at(
        &err(
            "mmapp",
            r#"rates = ["1 Mbs", "1kbps", "2kbps", "3kbps", "4kbps"]"#,
        ),
        14,
        "flow[0].rates",
        "not a bit rate",
    );
    at(&err("mmapp", "rates = 5"), 14, "flow[0].rates", "array");
}

#[test]
fn bad_scaling_parameters_name_the_field() {
    for protocol in ["mmapp", "mpegapp"] {
        at(
            &err(protocol, "initial_scale = 5"),
            14,
            "flow[0].initial_scale",
            "0 to 4",
        );
        at(
            &err(protocol, "toi_alpha = 1.0"),
            14,
            "flow[0].toi_alpha",
            "between 0 and 1",
        );
        at(
            &err(protocol, "rtt_gain = 0"),
            14,
            "flow[0].rtt_gain",
            "above 0",
        );
        at(
            &err(protocol, "max_interval = \"0s\""),
            14,
            "flow[0].max_interval",
            "longer than zero",
        );
        at(
            &err(protocol, "initial_rtt = \"0ms\""),
            14,
            "flow[0].initial_rtt",
            "longer than zero",
        );
        at(
            &err(protocol, "feedback_timeout_rtts = -1"),
            14,
            "flow[0].feedback_timeout_rtts",
            "from 0",
        );
        at(
            &err(protocol, "one_decrease_per_rtt = \"yes\""),
            14,
            "flow[0].one_decrease_per_rtt",
            "true or false",
        );
    }
}

#[test]
fn bad_mpeg_parameters_name_the_field() {
    at(
        &err("mpegapp", "gop = \"BBI\""),
        14,
        "flow[0].gop",
        "starts with its I frame",
    );
    at(
        &err("mpegapp", "gop = \"IBXP\""),
        14,
        "flow[0].gop",
        "`X` is not a frame type",
    );
    at(
        &err("mpegapp", "frame_rate = 0"),
        14,
        "flow[0].frame_rate",
        "above 0",
    );
    at(
        &err("mpegapp", "i_frame = \"11000\""),
        14,
        "flow[0].i_frame",
        "",
    );
    at(
        &err("mpegapp", "size_noise = 1.5"),
        14,
        "flow[0].size_noise",
        "from 0 to 1",
    );
    at(
        &err("mpegapp", "gops = 0"),
        14,
        "flow[0].gops",
        "out of range",
    );
    at(
        &err("mpegapp", "max_packet = \"58B\""),
        14,
        "flow[0].max_packet",
        "59 to 65535",
    );
    at(
        &err("mpegapp", "packet_size = \"1000B\""),
        14,
        "flow[0].packet_size",
        "max_packet",
    );
    // Another protocol's keys.
    at(
        &err("mpegapp", "rates = []"),
        14,
        "flow[0].rates",
        "does not apply to mpegapp",
    );
    at(
        &err("mmapp", "gop = \"I\""),
        14,
        "flow[0].gop",
        "does not apply to mmapp",
    );
    at(
        &err("tcp", "toi_alpha = 0.3"),
        14,
        "flow[0].toi_alpha",
        "does not apply to tcp",
    );
}

fn run(protocol: &str, seed: Option<u64>) -> RunOutput {
    // Each with its own use of the flow's random stream: MM_APP's dither, MPEG_APP's sizes.
    let keys = if protocol == "mmapp" {
        "random = true"
    } else {
        "size_noise = 0.3"
    };
    let s = load(&scenario(protocol, keys), "run.toml", seed).unwrap();
    Simulator::new(s.network).unwrap().run()
}

#[test]
fn both_climb_to_scale_4_on_an_empty_path_and_are_deterministic() {
    for protocol in ["mmapp", "mpegapp"] {
        let out = run(protocol, None);
        let scales: Vec<f64> = out
            .metrics
            .metric
            .iter()
            .zip(&out.metrics.value)
            .filter(|(m, _)| **m == "scale")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(scales, [0.0, 1.0, 2.0, 3.0, 4.0], "{protocol}");
        let f = &out.flows[0];
        assert_eq!((f.protocol.as_str(), f.packets_dropped), (protocol, 0));
        // Over the run, close to the scale-4 rate: 1100 kbit/s for MM_APP, 1089 kbit/s on the
        // wire for MPEG_APP (its frames and 58 B of headers per packet).
        let kbps = f.bytes_delivered as f64 * 8.0 / 10.0 / 1e3;
        assert!((950.0..1110.0).contains(&kbps), "{protocol}: {kbps} kbit/s");
        assert!((0.04..0.06).contains(&f.mean_rtt_s), "{}", f.mean_rtt_s);
        let again = run(protocol, None);
        assert_eq!(again.metrics.value, out.metrics.value);
        let other = run(protocol, Some(2));
        assert_ne!(other.metrics.value, out.metrics.value, "{protocol}");
    }
}
