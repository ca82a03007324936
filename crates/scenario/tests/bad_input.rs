//! Malformed scenarios get an error naming the file, line, field and the expected form.

use fairstream_scenario::{ScenarioError, load};

const GOOD: &str = r#"name = "t"
duration = "10s"

[topology]
nodes = ["a", "b", "c"]

[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"
queue = { kind = "droptail", limit = "20 packets" }

[[flow]]
protocol = "tcp"
from = "a"
to = "b"
"#;

fn err(text: &str) -> ScenarioError {
    load(text, "bad.toml", None).expect_err("the scenario should be rejected")
}

#[test]
fn good_scenario_loads_and_resolves_defaults() {
    let s = load(GOOD, "good.toml", None).unwrap();
    assert_eq!(s.network.links().len(), 2);
    assert!(
        s.resolved.contains("variant = \"newreno\""),
        "{}",
        s.resolved
    );
    assert!(
        s.resolved.contains("interval = \"100ms\""),
        "{}",
        s.resolved
    );
    // The resolved form loads back to the same resolved form.
    let again = load(&s.resolved, "resolved.toml", None).unwrap();
    assert_eq!(again.resolved, s.resolved);
}

#[test]
fn missing_field_names_the_field_and_table() {
    let e = err(&GOOD.replace("duration = \"10s\"\n", ""));
    assert_eq!(e.field, "duration");
    assert_eq!(e.file, "bad.toml");
    assert!(
        e.message.contains("missing field") && e.message.contains("\"35ms\""),
        "{e}"
    );
}

#[test]
fn misspelt_rate_unit_points_at_the_value() {
    let e = err(&GOOD.replace("\"10Mbps\"", "\"10 Mbs\""));
    assert_eq!((e.line, e.field.as_str()), (9, "topology.link[0].rate"));
    assert!(
        e.message.contains("`10 Mbs` is not a bit rate") && e.message.contains("11Mbps"),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("bad.toml:9:8: field `topology.link[0].rate`:"),
        "{e}"
    );
}

#[test]
fn negative_delay_is_rejected() {
    let e = err(&GOOD.replace("\"5ms\"", "\"-5ms\""));
    assert_eq!((e.line, e.field.as_str()), (10, "topology.link[0].delay"));
    assert!(e.message.contains("must not be negative"), "{e}");
}

#[test]
fn unknown_node_lists_the_known_ones() {
    let e = err(&GOOD.replace("to = \"b\"", "to = \"z\""));
    assert_eq!((e.line, e.field.as_str()), (16, "flow[0].to"));
    assert!(
        e.message.contains("unknown node `z`") && e.message.contains("a, b, c"),
        "{e}"
    );
}

/// The error `text` is rejected with, after checking that its message starts with `start`.
fn err_starting(text: &str, start: &str) -> ScenarioError {
    let e = err(text);
    assert!(e.message.starts_with(start), "{e}");
    e
}

#[test]
fn a_misspelt_field_keyword_or_node_names_the_one_probably_meant() {
    let e = err_starting(
        &GOOD.replace("delay = \"5ms\"", "dealy = \"5ms\""),
        "unknown field; did you mean `delay`? expected one of: ",
    );
    assert_eq!((e.line, e.field.as_str()), (10, "topology.link[0].dealy"));
    let e = err_starting(
        &GOOD.replace("\"droptail\"", "\"droptial\""),
        "`droptial` is not one of \"droptail\"",
    );
    assert!(e.message.ends_with("; did you mean \"droptail\"?"), "{e}");
    let nodes = GOOD.replace("[\"a\", \"b\", \"c\"]", "[\"left\", \"b\", \"c\"]");
    let e = err_starting(
        &nodes.replace("[\"a\", \"b\"]", "[\"lfet\", \"b\"]"),
        "unknown node `lfet`; did you mean `left`? nodes are: left, b, c",
    );
    assert_eq!(e.field, "topology.link[0].between");
    let e = err_starting(
        &nodes
            .replace("[\"a\", \"b\"]", "[\"left\", \"b\"]")
            .replace("from = \"a\"", "from = \"lfet\""),
        "unknown node `lfet`; did you mean `left`? nodes include: ",
    );
    assert_eq!(e.field, "flow[0].from");
    let e = err_starting(
        &format!("{GOOD}[record]\npcap = [\"a->bb\"]\n"),
        "unknown link `a->bb`; did you mean `a->b`? the links are ",
    );
    assert_eq!(e.field, "record.pcap");
    // A flow's unknown field: the fields of its protocol (TCP when it names none), not every
    // protocol's.
    let e = err_starting(
        &GOOD.replace("to = \"b\"", "to = \"b\"\nwindw = 20"),
        "unknown field of a tcp flow; did you mean `window`? expected one of: ",
    );
    assert!(
        e.message.contains(", window") && !e.message.contains("rates"),
        "{e}"
    );
    let cbr = GOOD.replace("protocol = \"tcp\"", "protocol = \"cbr\"\nrate = \"1Mbps\"");
    let misspelt = cbr.replace("rate = \"1Mbps\"", "rat = \"1Mbps\"");
    let e = err_starting(
        &misspelt,
        "unknown field of a cbr flow; did you mean `rate`? ",
    );
    assert!(!e.message.contains("window"), "{e}");
    let e = err_starting(&misspelt.replace("\"cbr\"", "\"cbrr\""), "unknown field; ");
    assert!(e.message.contains("window"), "{e}");
    // Nothing near enough, or nothing nearer than the rest: no guess (`z` is one letter from
    // each of `a`, `b` and `c`).
    err_starting(
        &GOOD.replace("delay = \"5ms\"", "latency = \"5ms\""),
        "unknown field; expected one of: ",
    );
    err_starting(
        &GOOD.replace("to = \"b\"", "to = \"z\""),
        "unknown node `z`; nodes include: ",
    );
}

#[test]
fn flow_without_route_is_rejected() {
    let e = err(&GOOD.replace("to = \"b\"", "to = \"c\""));
    assert_eq!(e.field, "flow[0].to");
    assert!(e.message.contains("no route from `a` to `c`"), "{e}");
}

#[test]
fn queue_of_zero_is_rejected() {
    let e = err(&GOOD.replace("\"20 packets\"", "\"0 packets\""));
    assert_eq!(
        (e.line, e.field.as_str()),
        (11, "topology.link[0].queue.limit")
    );
    assert!(e.message.contains("at least one packet"), "{e}");
}

#[test]
fn unknown_field_lists_the_allowed_ones() {
    let e = err(&GOOD.replace("delay = \"5ms\"", "delay = \"5ms\"\nlatency = \"5ms\""));
    assert_eq!((e.line, e.field.as_str()), (11, "topology.link[0].latency"));
    assert!(
        e.message.contains("unknown field") && e.message.contains("delay"),
        "{e}"
    );
}

#[test]
fn wrong_type_and_bad_toml_are_explained() {
    let e = err(&GOOD.replace("\"10Mbps\"", "10"));
    assert!(
        e.message.contains("written as a string with its unit"),
        "{e}"
    );
    let e = err("name = \"x\"\nduration = \n");
    assert!(e.message.starts_with("invalid TOML"), "{e}");
    assert_eq!(e.line, 2);
    let e = err(&GOOD.replace(
        "duration = \"10s\"",
        "duration = \"10s\"\nduration = \"2s\"",
    ));
    assert!(
        e.message
            .starts_with("invalid TOML: duplicate key `duration`"),
        "{e}"
    );
    let e = err(&GOOD.replace("protocol = \"tcp\"", "protocol = \"tcp\"\n\"from\" = \"x\""));
    assert!(
        e.message.starts_with("invalid TOML: duplicate key `from`"),
        "{e}"
    );
}

#[test]
fn protocol_specific_fields_are_checked() {
    let e = err(&GOOD.replace("protocol = \"tcp\"", "protocol = \"tcp\"\nrate = \"1Mbps\""));
    assert_eq!(e.field, "flow[0].rate");
    assert!(e.message.contains("does not apply to tcp flows"), "{e}");
    let e = err(&GOOD.replace("protocol = \"tcp\"", "protocol = \"quic\""));
    assert!(e.message.contains("one of \"tcp\", \"cbr\""), "{e}");
}

/// GOOD with `extra` lines added to its flow (line 17 on).
fn with_flow_keys(extra: &str) -> String {
    format!("{GOOD}{extra}\n")
}

#[test]
fn bad_sack_cubic_bbr_and_linux_settings_name_the_field() {
    for (extra, field, says) in [
        ("variant = \"vegas\"", "flow[0].variant", "one of"),
        ("control = \"bbr\"", "flow[0].control", "needs SACK"),
        (
            "variant = \"sack\"\ncontrol = \"bbr\"\npacing = false",
            "flow[0].pacing",
            "always paces",
        ),
        ("prr = true", "flow[0].prr", "variant = \"sack\""),
        (
            "cubic = { c = 0.4 }",
            "flow[0].cubic",
            "applies to control = \"cubic\"",
        ),
        (
            "control = \"cubic\"\ncubic = { c = 0 }",
            "flow[0].cubic.c",
            "above 0",
        ),
        (
            "control = \"cubic\"\ncubic = { beta = 1 }",
            "flow[0].cubic.beta",
            "between 0 and 1",
        ),
        (
            "control = \"cubic\"\ncubic = { hystart = \"yes\" }",
            "flow[0].cubic.hystart",
            "",
        ),
        (
            "control = \"cubic\"\ncubic = { gamma = 1 }",
            "flow[0].cubic.gamma",
            "",
        ),
        (
            "control = \"cubic\"\nbeta = 0.7",
            "flow[0].beta",
            "cubic.beta",
        ),
        (
            "control = \"cubic\"\ncubic = 3",
            "flow[0].cubic",
            "expected a table",
        ),
        (
            "timestamps = true\npacket_size = \"52B\"",
            "flow[0].packet_size",
            "52-byte header",
        ),
        ("preset = \"windows\"", "flow[0].preset", "one of"),
        ("timestamps = 1", "flow[0].timestamps", ""),
    ] {
        let e = err(&with_flow_keys(extra));
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(e.message.contains(says), "{extra}: {e}");
        assert!(e.line >= 13, "{extra}: {e}");
        assert_eq!(e.file, "bad.toml");
    }
}

#[test]
fn the_linux_preset_resolves_every_setting() {
    let s = load(&with_flow_keys("preset = \"linux\""), "good.toml", None).unwrap();
    for line in [
        "variant = \"sack\"",
        "control = \"cubic\"",
        "timestamps = true",
        "prr = true",
        "packet_size = \"1500B\"",
        "initial_window = 10",
        "min_rto = \"200ms\"",
        "initial_rto = \"1s\"",
        "delayed_ack = \"40ms\"",
        "hystart = true",
    ] {
        assert!(
            s.resolved.contains(line),
            "{line} missing in\n{}",
            s.resolved
        );
    }
    // The resolved scenario loads to the same network.
    let again = load(&s.resolved, "resolved.toml", None).unwrap();
    assert_eq!(format!("{:?}", again.network), format!("{:?}", s.network));
    // A setting of the preset can be overridden.
    let s = load(
        &with_flow_keys("preset = \"linux\"\ncontrol = \"bbr\"\ndelayed_ack = false"),
        "good.toml",
        None,
    )
    .unwrap();
    assert!(s.resolved.contains("control = \"bbr\"") && s.resolved.contains("pacing = true"));
    assert!(s.resolved.contains("delayed_ack = false"), "{}", s.resolved);
}

#[test]
fn bad_binomial_parameters_name_the_field() {
    for (extra, field, says) in [
        (
            "control = \"iiad\"\nbeta = 1.2",
            "flow[0].beta",
            "from 0 to 1",
        ),
        (
            "control = \"iiad\"\nbeta = 1",
            "flow[0].beta",
            "between 0 and 1",
        ),
        (
            "control = \"iiad\"\nbeta = 0",
            "flow[0].beta",
            "between 0 and 1",
        ),
        ("control = \"sqrt\"\nalpha = 0", "flow[0].alpha", "above 0"),
        ("control = \"sqrt\"\nalpha = -1", "flow[0].alpha", "from 0"),
        (
            "control = \"binomial\"\nk = 1\nl = 1.5",
            "flow[0].l",
            "from 0 to 1",
        ),
        (
            "control = \"binomial\"\nk = 1",
            "flow[0].l",
            "missing field",
        ),
        ("control = \"iiad\"\nk = 2", "flow[0].k", "fixed by control"),
        ("beta = 0.5", "flow[0].beta", "applies to binomial"),
        ("control = \"vegas\"", "flow[0].control", "one of"),
    ] {
        let e = err(&with_flow_keys(extra));
        assert_eq!(e.field, field, "{extra}: {e}");
        assert!(e.message.contains(says), "{extra}: {e}");
        assert!(e.line >= 13, "{extra}: {e}"); // the flow table or one of its lines
    }
}

#[test]
fn a_control_that_is_not_tcp_compatible_loads_with_a_warning() {
    let s = load(
        &with_flow_keys("control = \"binomial\"\nk = 1\nl = 1"),
        "w.toml",
        None,
    )
    .unwrap();
    assert_eq!(s.warnings.len(), 1);
    let w = &s.warnings[0];
    assert_eq!(
        (w.file.as_str(), w.field.as_str()),
        ("w.toml", "flow[0].control")
    );
    assert!(w.message.starts_with("warning:") && w.message.contains("not TCP-compatible"));
    let ok = load(&with_flow_keys("control = \"sqrt\""), "ok.toml", None).unwrap();
    assert!(ok.warnings.is_empty());
    assert!(ok.resolved.contains("beta = 0.6666"), "{}", ok.resolved);
}

#[test]
fn values_no_type_can_hold_are_refused_at_their_line() {
    for (from, to, field, says) in [
        (
            "\"10Mbps\"",
            "\"1e30Mbps\"",
            "topology.link[0].rate",
            "too large",
        ),
        (
            "\"5ms\"",
            "\"1e20s\"",
            "topology.link[0].delay",
            "too large",
        ),
        ("\"10s\"", "\"0.1ns\"", "duration", "too small"),
        (
            "\"20 packets\"",
            "\"1e30B\"",
            "topology.link[0].queue.limit",
            "too large",
        ),
    ] {
        let e = err(&GOOD.replacen(from, to, 1));
        assert_eq!(e.field, field, "{to}: {e}");
        assert!(e.message.contains(says), "{to}: {e}");
    }
    for (size, says) in [
        ("70000B", "at most 65535"),
        ("1e30B", "too large"),
        ("40B", "at least 41"),
    ] {
        let e = err(&with_flow_keys(&format!("packet_size = \"{size}\"")));
        assert_eq!(e.field, "flow[0].packet_size", "{size}: {e}");
        assert!(e.message.contains(says), "{size}: {e}");
    }
}

#[test]
fn a_seed_override_beyond_what_a_scenario_holds_is_refused() {
    let e = load(GOOD, "s.toml", Some(u64::MAX)).expect_err("seed 2^64 - 1");
    assert_eq!(e.field, "seed");
    assert!(e.message.contains("largest a scenario holds"), "{e}");
    let ok = load(GOOD, "s.toml", Some(i64::MAX as u64)).unwrap();
    assert!(ok.resolved.contains(&format!("seed = {}", i64::MAX)));
}

#[test]
fn duplicate_flow_names_and_control_characters_are_refused() {
    let twice =
        format!("{GOOD}[[flow]]\nprotocol = \"tcp\"\nfrom = \"a\"\nto = \"b\"\nname = \"tcp0\"\n");
    let once = twice.replacen(
        "[[flow]]\nprotocol = \"tcp\"",
        "[[flow]]\nname = \"tcp0\"\nprotocol = \"tcp\"",
        1,
    );
    let e = err(&once);
    assert_eq!(e.field, "flow[1].name", "{e}");
    assert!(e.message.contains("a second flow named `tcp0`"), "{e}");
    let e = err(&with_flow_keys("name = \"\\u001b[31mred\""));
    assert_eq!(e.field, "flow[0].name", "{e}");
    assert!(e.message.contains("U+001B"), "{e}");
    let e = err(&GOOD.replace(
        "nodes = [\"a\", \"b\", \"c\"]",
        "nodes = [\"a\", \"b\\u0007\", \"c\"]",
    ));
    assert_eq!(e.field, "topology.nodes", "{e}");
    assert!(e.message.contains("U+0007"), "{e}");
    let e = err(&with_flow_keys("window = \"x\""));
    assert!(e.message.contains("found a string"), "{e}");
    let e = err(&GOOD.replace("\"20 packets\"", "20.5"));
    assert!(e.message.contains("found a float"), "{e}");
}

#[test]
fn an_interval_that_would_exhaust_memory_is_refused_before_the_run() {
    let e = err(&format!("{GOOD}[record]\ninterval = \"1ns\"\n"));
    assert_eq!(e.field, "record.interval", "{e}");
    assert!(
        e.message.contains("would hold") && e.message.contains("widen the interval"),
        "{e}"
    );
    assert!(
        load(
            &format!("{GOOD}[record]\ninterval = \"1ms\"\n"),
            "ok.toml",
            None
        )
        .is_ok()
    );
}

#[test]
fn a_trace_keeps_the_events_it_lists_by_name() {
    let with = |packets: &str| format!("{GOOD}[record]\npackets = {packets}\n");
    let s = load(&with(r#"["drop", "corrupt", "drop"]"#), "ok.toml", None).unwrap();
    assert!(
        s.resolved.contains(r#"packets = ["drop", "corrupt"]"#),
        "{}",
        s.resolved
    );
    let all = r#"["receive", "enqueue", "transmit", "drop", "corrupt"]"#;
    let s = load(&with(all), "ok.toml", None).unwrap();
    assert!(s.resolved.contains("packets = true"), "{}", s.resolved);

    let e = err(&with(r#"["drop", "lost"]"#));
    assert_eq!(
        (e.file.as_str(), e.field.as_str()),
        ("bad.toml", "record.packets")
    );
    assert_eq!(e.line, 18, "{e}");
    assert!(
        e.message.contains("unknown event `lost`") && e.message.contains("\"corrupt\""),
        "{e}"
    );
    let e = err(&with("[]"));
    assert!(e.message.contains("write `packets = false`"), "{e}");
    let e = err(&with("\"drop\""));
    assert!(
        e.message
            .contains("expected true, false, or an array of the events"),
        "{e}"
    );
}

#[test]
fn a_metric_table_keeps_the_metrics_it_lists_by_name() {
    let with = |metrics: &str| format!("{GOOD}[record]\nmetrics = {metrics}\n");
    let s = load(&with(r#"["timeout", "cwnd", "timeout"]"#), "ok.toml", None).unwrap();
    assert!(
        s.resolved.contains(r#"metrics = ["cwnd", "timeout"]"#),
        "{}",
        s.resolved
    );
    let e = err(&with(r#"["cwnd", "window"]"#));
    assert_eq!((e.field.as_str(), e.line), ("record.metrics", 18), "{e}");
    assert!(
        e.message.contains("unknown metric `window`") && e.message.contains("ssthresh"),
        "{e}"
    );
    let e = err(&with("[]"));
    assert!(e.message.contains("write `metrics = false`"), "{e}");
    let e = err(&with("1"));
    assert!(e.message.contains("an array of the metrics to keep"), "{e}");
}

#[test]
fn red_takes_auto_or_a_number_for_its_derived_parameters() {
    let red = |keys: &str| {
        GOOD.replace(
            "queue = { kind = \"droptail\", limit = \"20 packets\" }",
            &format!("queue = {{ kind = \"red\", {keys} }}"),
        )
    };
    let ok = load(&red("min_th = \"auto\", w_q = 0.002"), "ok.toml", None).unwrap();
    assert!(ok.resolved.contains("min_th = \"auto\""), "{}", ok.resolved);
    let e = err(&red("min_th = \"often\""));
    assert_eq!(e.field, "topology.link[0].queue.min_th");
    assert!(
        e.message
            .contains("neither a number from 0 to 1000000000 nor \"auto\""),
        "{e}"
    );
    let e = err(&red("w_q = true"));
    assert_eq!(e.field, "topology.link[0].queue.w_q");
}

#[test]
fn a_flow_that_would_start_at_or_after_the_end_loads_with_a_warning_at_its_start() {
    for (start, says) in [
        ("\"10s\"", "it will never send"),
        ("\"11s\"", "it will never send"),
        (
            "{ uniform = [\"5s\", \"10s\"] }",
            "some of its draws never send",
        ),
    ] {
        let text = GOOD.replace("to = \"b\"", &format!("to = \"b\"\nstart = {start}"));
        let s = load(&text, "late.toml", None).unwrap();
        let [w] = s.warnings.as_slice() else {
            panic!("{:?}", s.warnings)
        };
        assert_eq!((w.field.as_str(), w.line), ("flow[0].start", 17), "{w}");
        assert!(w.message.contains(says), "{w}");
    }
    let early = GOOD.replace(
        "to = \"b\"",
        "to = \"b\"\nstart = { uniform = [\"5s\", \"9.9s\"] }",
    );
    assert!(load(&early, "ok.toml", None).unwrap().warnings.is_empty());
}

#[test]
fn two_links_of_one_name_are_refused_at_the_second() {
    let second = |extra: &str| {
        GOOD.replace(
            "[[flow]]",
            &format!("[[topology.link]]\nbetween = [\"b\", \"c\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n{extra}\n[[flow]]"),
        )
    };
    let named = |first: &str, other: &str| {
        second(&format!("name = \"{other}\"\n")).replace(
            "queue = { kind",
            &format!("name = \"{first}\"\nqueue = {{ kind"),
        )
    };
    let e = err(&named("x", "x"));
    assert_eq!(e.field, "topology.link[1].name", "{e}");
    assert!(e.message.contains("a second link named `x`"), "{e}");
    let e = err(&second("name = \"a->b\"\n")); // the first link's own name, by default
    assert_eq!(e.field, "topology.link[1].name", "{e}");
    let e = err(&second("name = \"\"\n"));
    assert!(e.message.contains("must not be empty"), "{e}");
    let parallel = second("").replace("between = [\"b\", \"c\"]", "between = [\"a\", \"b\"]");
    assert_eq!(err(&parallel).field, "topology.link[1].between");
    assert!(load(&named("x", "y"), "ok.toml", None).is_ok());
}

#[test]
fn keys_another_kind_reads_are_refused_not_ignored() {
    let dumbbell = r#"name = "d"
duration = "1s"
[topology]
kind = "dumbbell"
hosts = 1
access = { rate = "10Mbps", delay = "1ms" }
bottleneck = { rate = "1Mbps", delay = "1ms" }
EXTRA
[[flow]]
protocol = "cbr"
from = "left0"
to = "right0"
rate = "100kbps"
"#;
    for (extra, field, says) in [
        (
            "routers = 7",
            "topology.routers",
            "does not apply to a dumbbell",
        ),
        (
            "backbone = { rate = \"1Mbps\", delay = \"1ms\" }",
            "topology.backbone",
            "a dumbbell",
        ),
        ("nodes = [\"x\"]", "topology.nodes", "a dumbbell"),
    ] {
        let e = err(&dumbbell.replace("EXTRA", extra));
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    let e = err(&GOOD.replace("[[topology.link]]", "hosts = 50\n\n[[topology.link]]"));
    assert_eq!(e.field, "topology.hosts", "{e}");
    assert!(e.message.contains("an explicit topology"), "{e}");
    let lossy = |loss: &str| {
        GOOD.replace(
            "delay = \"5ms\"",
            &format!("delay = \"5ms\"\nloss = {loss}"),
        )
    };
    for (loss, field) in [
        (
            "{ kind = \"none\", per = \"50%\" }",
            "topology.link[0].loss.per",
        ),
        (
            "{ per = \"1%\", loss_bad = 1 }",
            "topology.link[0].loss.loss_bad",
        ),
        (
            "{ kind = \"gilbert-elliott\", per = \"1%\", p_good_to_bad = 0.1, p_bad_to_good = 0.5 }",
            "topology.link[0].loss.per",
        ),
    ] {
        let e = err(&lossy(loss));
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains("does not apply"), "{e}");
    }
    assert!(load(&lossy("{ kind = \"none\" }"), "ok.toml", None).is_ok());
    assert!(load(&dumbbell.replace("EXTRA", ""), "ok.toml", None).is_ok());
}

#[test]
fn an_errors_column_counts_characters_not_bytes() {
    let line = r#"link = [{ between = ["a", "b"], name = "débit élevé", rate = "10 Mbs", delay = "5ms" }]"#;
    let text = format!(
        "name = \"t\"\nduration = \"1s\"\n[topology]\nnodes = [\"a\", \"b\"]\n{line}\n\
         [[flow]]\nprotocol = \"cbr\"\nfrom = \"a\"\nto = \"b\"\nrate = \"1Mbps\"\n"
    );
    let e = err(&text);
    assert_eq!(e.line, 5, "{e}");
    // The value's first character, counted in characters (two of the name's take two bytes).
    let at = line.find("\"10 Mbs\"").unwrap();
    let column = line[..at].chars().count() + 1;
    assert!(column < at + 1, "the line holds characters of two bytes");
    assert_eq!(e.column, column, "{e}");
}
