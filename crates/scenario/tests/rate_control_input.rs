//! The rate-based protocols' flows: defaults resolve and load back, and a bad parameter gets an
//! error naming the file, line and field.

use fairstream_scenario::{ScenarioError, load};

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
delay = "5ms"

[[flow]]
protocol = "{protocol}"
{keys}
from = "a"
to = "b"
"#
    )
}

fn err(protocol: &str, keys: &str) -> ScenarioError {
    load(&scenario(protocol, keys), "bad.toml", None).expect_err("should be rejected")
}

#[test]
fn every_rate_protocol_loads_with_its_defaults_and_its_resolved_form_loads_back() {
    for protocol in ["tfrc", "tfrc-wireless", "multfrc", "vtp", "rap"] {
        let s = load(&scenario(protocol, ""), "ok.toml", None).unwrap();
        let again = load(&s.resolved, "resolved.toml", None).unwrap();
        // The same text: the resolved form is a fixed point (keys in the same order too).
        assert_eq!(again.resolved, s.resolved, "{protocol}");
        assert!(s.resolved.contains(&format!("protocol = \"{protocol}\"")));
    }
    let ns2 = load(&scenario("tfrc", "preset = \"ns2\""), "ok.toml", None).unwrap();
    assert!(
        ns2.resolved.contains("packet_size = \"1032B\""),
        "{}",
        ns2.resolved
    );
    assert!(ns2.resolved.contains("timeout = \"ns2\""));
}

#[test]
fn gamma_outside_zero_one_names_the_field() {
    for gamma in ["1.0", "0", "1.5", "-0.2"] {
        let e = err("vtp", &format!("gamma = {gamma}"));
        assert_eq!(
            (e.file.as_str(), e.line, e.field.as_str()),
            ("bad.toml", 14, "flow[0].gamma"),
            "{e}"
        );
        assert!(e.message.contains("between 0 and 1"), "{e}");
    }
}

#[test]
fn unknown_lda_lists_the_known_ones() {
    let e = err("tfrc-wireless", "lda = \"wavelet\"");
    assert_eq!((e.line, e.field.as_str()), (14, "flow[0].lda"));
    for name in ["spike", "biaz", "mbiaz", "zigzag", "zbs"] {
        assert!(e.message.contains(name), "{e}");
    }
}

#[test]
fn negative_or_zero_minimum_rate_is_rejected() {
    for v in ["-1", "0"] {
        let e = err("vtp", &format!("min_rate_packets = {v}"));
        assert_eq!(
            (e.line, e.field.as_str()),
            (14, "flow[0].min_rate_packets"),
            "{e}"
        );
    }
    let e = err("tfrc", "t_mbi = \"-64s\"");
    assert_eq!((e.line, e.field.as_str()), (14, "flow[0].t_mbi"), "{e}");
}

#[test]
fn other_bad_rate_control_parameters_name_their_field() {
    for (protocol, keys, field) in [
        ("tfrc", "rtt_filter = 1", "rtt_filter"),
        ("tfrc", "header = \"2000B\"", "header"),
        ("tfrc", "ndupack = 0", "ndupack"),
        ("tfrc", "preset = \"rfc3448\"", "preset"),
        ("multfrc", "alpha = 0", "alpha"),
        ("multfrc", "max_connections = 500", "max_connections"),
        ("vtp", "spike_beta = 0.9", "spike_beta"),
        ("vtp", "packet_size = \"20B\"", "packet_size"),
    ] {
        let e = err(protocol, keys);
        assert_eq!(
            e.field,
            format!("flow[0].{field}"),
            "{protocol} {keys}: {e}"
        );
        assert_eq!(e.line, 14, "{protocol} {keys}: {e}");
    }
}

#[test]
fn bad_rap_parameters_name_their_field_and_the_expected_form() {
    for (keys, field, wanted) in [
        ("beta = 1.0", "beta", "between 0 and 1"),
        ("alpha = 0", "alpha", "from 0.000001 to 1000"),
        (
            "initial_interval = \"0s\"",
            "initial_interval",
            "above zero",
        ),
        (
            "max_interval = \"100us\"",
            "max_interval",
            "at least \"1ms\"",
        ),
        ("packet_size = \"40B\"", "packet_size", "at least 41 bytes"),
        ("fine_grain = 1", "fine_grain", "true or false"),
        ("gamma = 0.5", "gamma", "does not apply to rap flows"),
    ] {
        let e = err("rap", keys);
        assert_eq!(
            (e.file.as_str(), e.line, e.field.as_str()),
            ("bad.toml", 14, format!("flow[0].{field}").as_str()),
            "{e}"
        );
        assert!(e.message.contains(wanted), "{keys}: {e}");
    }
    let s = load(&scenario("rap", ""), "ok.toml", None).unwrap();
    for key in [
        "initial_interval = \"2s\"",
        "beta = 0.5",
        "fine_grain = false",
    ] {
        assert!(s.resolved.contains(key), "{key} in {}", s.resolved);
    }
}

#[test]
fn a_cbr_rate_schedule_resolves_and_loads_back() {
    let s = load(
        &scenario(
            "cbr",
            "rate = \"0bps\"\nschedule = [{ at = \"60s\", rate = \"3Mbps\" }, { at = \"120s\", rate = \"6Mbps\" }]",
        ),
        "ok.toml",
        None,
    )
    .unwrap();
    assert!(s.resolved.contains("rate = \"3Mbps\""), "{}", s.resolved);
    let again = load(&s.resolved, "resolved.toml", None).unwrap();
    let value = |t: &str| t.parse::<toml::Table>().unwrap();
    assert_eq!(value(&again.resolved), value(&s.resolved));
    let e = err("cbr", "rate = \"1Mbps\"\nschedule = [{ at = \"60s\" }]");
    assert!(e.field.ends_with("schedule[0].rate"), "{e}");
}
