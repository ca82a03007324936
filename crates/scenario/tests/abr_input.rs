//! Flows on ATM ABR (`atm = "abr"`) and ERICA ports: bad parameters get an error naming the
//! file, line and field; good ones resolve to a scenario that loads back to itself; a run is
//! deterministic (same seed, same bits).

use fairstream_scenario::{ScenarioError, load};
use fairstream_sim::Simulator;

const GOOD: &str = r#"name = "abr"
duration = "5s"
seed = 3

[topology]
nodes = ["a", "s", "b"]

[[topology.link]]
between = ["a", "s"]
rate = "10Mbps"
delay = "2ms"
queue = { kind = "erica", limit = 500 }

[[topology.link]]
between = ["s", "b"]
rate = "1.5Mbps"
delay = "2ms"
queue = { kind = "erica", limit = 500, discard = "early" }

[[flow]]
name = "tcp"
protocol = "tcp"
from = "a"
to = "b"
window = 20
atm = "abr"
abr = { pcr = "10Mbps", icr = "56kbps", mcr = "56kbps", nrm = 32 }

[[flow]]
name = "udp"
protocol = "cbr"
from = "a"
to = "b"
rate = "2Mbps"
random = true
start = { uniform = ["0s", "1s"] }
atm = "abr"
"#;

fn err(text: &str) -> ScenarioError {
    load(text, "bad.toml", None).expect_err("the scenario should be rejected")
}

fn with_abr(abr: &str) -> String {
    GOOD.replace(
        r#"abr = { pcr = "10Mbps", icr = "56kbps", mcr = "56kbps", nrm = 32 }"#,
        &format!("abr = {{ {abr} }}"),
    )
}

#[test]
fn a_good_abr_scenario_resolves_every_default_and_loads_back() {
    let s = load(GOOD, "abr.toml", None).unwrap();
    for key in [
        "rif = 0.0625",
        "trm = \"100ms\"",
        "source_buffer = ",
        "variant = \"complete\"",
    ] {
        assert!(s.resolved.contains(key), "{key} in\n{}", s.resolved);
    }
    let again = load(&s.resolved, "resolved.toml", None).unwrap();
    assert_eq!(again.resolved, s.resolved);
    assert_eq!(
        again.network.flows()[0].protocol,
        s.network.flows()[0].protocol
    );
}

#[test]
fn bad_source_parameters_name_their_field() {
    for (abr, field, words) in [
        (r#"rif = 0.0"#, "rif", "outside (0, 1]"),
        (r#"rif = 1.5"#, "rif", "outside (0, 1]"),
        (r#"rdf = -0.5"#, "rdf", "outside (0, 1]"),
        (r#"pcr = "1Mbps", icr = "2Mbps""#, "icr", "icr is above pcr"),
        (r#"icr = "1Mbps", mcr = "2Mbps""#, "mcr", "mcr is above icr"),
        (r#"nrm = 1"#, "nrm", "nrm is below 2"),
        (r#"nrm = 4, mrm = 4"#, "mrm", "below nrm"),
        (
            r#"source_buffer = "0B""#,
            "source_buffer",
            "at least one byte",
        ),
        (r#"pcr = "fast""#, "pcr", "bit rate"),
        (r#"burst = 3"#, "burst", "unknown"),
    ] {
        let e = err(&with_abr(abr));
        assert_eq!(
            (e.file.as_str(), e.line, e.field.as_str()),
            ("bad.toml", 27, format!("flow[0].abr.{field}").as_str()),
            "{abr}: {e}"
        );
        assert!(e.message.contains(words), "{abr}: {e}");
    }
}

#[test]
fn abr_parameters_need_atm_abr() {
    let text = GOOD.replace("atm = \"abr\"\nabr = {", "abr = {");
    let e = err(&text);
    assert_eq!((e.line, e.field.as_str()), (26, "flow[0].abr"), "{e}");
    let e = err(&GOOD.replacen("atm = \"abr\"", "atm = \"ubr\"", 1));
    assert_eq!(e.field, "flow[0].atm", "{e}");
}

#[test]
fn bad_erica_parameters_name_their_field() {
    let port = r#"queue = { kind = "erica", limit = 500 }"#;
    for (queue, field, words) in [
        (
            r#"target_utilisation = 1.5"#,
            "target_utilisation",
            "(0, 1]",
        ),
        (r#"target_utilisation = 0"#, "target_utilisation", "(0, 1]"),
        (r#"interval = "0s""#, "interval", "longer than 0"),
        (r#"interval_cells = 0"#, "interval_cells", ""),
        (r#"variant = "plus""#, "variant", "complete"),
        (
            r#"discard_threshold = 10"#,
            "discard_threshold",
            "discard = \"early\"",
        ),
        (
            r#"discard = "early", discard_threshold = 501"#,
            "discard_threshold",
            "",
        ),
        (
            r#"quantum = "1500B""#,
            "quantum",
            "does not apply to a erica queue",
        ),
    ] {
        let text = GOOD.replacen(
            port,
            &format!(r#"queue = {{ kind = "erica", limit = 500, {queue} }}"#),
            1,
        );
        let e = err(&text);
        assert_eq!(
            (e.line, e.field.as_str()),
            (12, format!("topology.link[0].queue.{field}").as_str()),
            "{queue}: {e}"
        );
        assert!(e.message.contains(words), "{queue}: {e}");
    }
}

#[test]
fn an_abr_run_is_deterministic_and_seeded() {
    let run = |text: &str| {
        let s = load(text, "abr.toml", None).unwrap();
        Simulator::new(s.network).unwrap().run()
    };
    let a = run(GOOD);
    let b = run(GOOD);
    let fingerprint = |o: &fairstream_records::RunOutput| {
        (
            o.events,
            o.flows
                .iter()
                .map(|f| f.bytes_delivered)
                .collect::<Vec<_>>(),
            o.flows
                .iter()
                .map(|f| f.goodput_bps.to_bits())
                .collect::<Vec<_>>(),
            // The ERICA ports' overload factors (port_series.z).
            o.queue_series[0].values[1]
                .iter()
                .map(|z| match z {
                    fairstream_records::Value::Real(z) => z.to_bits(),
                    _ => 0,
                })
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert!(a.flows.iter().all(|f| f.bytes_delivered > 0));
    let other = run(&GOOD.replace("seed = 3", "seed = 4"));
    assert_ne!(fingerprint(&a), fingerprint(&other));
}

#[test]
fn an_erica_port_shows_its_parameters_in_the_link_summary() {
    let s = load(GOOD, "abr.toml", None).unwrap();
    let out = Simulator::new(s.network).unwrap().run();
    let port = out
        .links
        .iter()
        .find(|l| l.queue_kind == "erica")
        .expect("an ERICA port");
    assert_eq!(port.queue_limit_packets, Some(500));
    let param = |name: &str| {
        port.queue_params
            .iter()
            .find(|(c, _)| c.name == name)
            .map(|(_, v)| *v)
    };
    assert_eq!(
        param("erica_discard"),
        Some(fairstream_records::Value::Text("none"))
    );
    assert!(param("erica_target_utilisation").is_some());
}
