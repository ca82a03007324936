//! The resolved form of a scenario is a fixed point: it loads back, resolves to the same text
//! (keys in the same order, every value the same), and describes the same network. Tried on
//! every shipped scenario and on variations of every queue, loss model, protocol, topology
//! helper, recorder and engine setting.

use std::path::{Path, PathBuf};

use fairstream_scenario::load;

/// Resolves `text`, reloads the resolved form and checks it is a fixed point.
fn assert_fixed_point(text: &str, what: &str) {
    let first = load(text, what, None).unwrap_or_else(|e| panic!("{what}: {e}"));
    let again = load(&first.resolved, "resolved.toml", None).unwrap_or_else(|e| {
        panic!(
            "{what}: the resolved form does not load back: {e}\n{}",
            first.resolved
        )
    });
    assert_eq!(
        again.resolved, first.resolved,
        "{what}: resolve(resolve(x)) differs from resolve(x) as text"
    );
    assert_eq!(
        format!("{:?}", again.network),
        format!("{:?}", first.network),
        "{what}: the resolved form describes another network"
    );
}

/// One link `a`–`b` with `link` extra keys, one flow with `flow` extra keys, and `tail`.
fn scenario(link: &str, flow: &str, tail: &str) -> String {
    format!(
        r#"name = "fixed-point"
duration = "2s"
[topology]
nodes = ["a", "b"]
[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "5ms"
{link}
[[flow]]
from = "a"
to = "b"
{flow}
{tail}
"#
    )
}

/// A link's queue: absent, and every discipline with its presets and parameters.
const QUEUES: &[&str] = &[
    "",
    "queue = { kind = \"droptail\" }",
    "queue = { limit = 20 }",
    "queue = { kind = \"droptail\", preset = \"ns2\", limit = \"20 packets\" }",
    "queue = { limit = \"20ms\" }",
    "queue = { limit = \"64KB\" }",
    "queue = { kind = \"red\" }",
    "queue = { kind = \"red\", preset = \"ns2\" }",
    "queue = { kind = \"red\", preset = \"floyd-jacobson\" }",
    "queue = { kind = \"red\", preset = \"ns2-classic\" }",
    "queue = { kind = \"red\", min_th = 3, max_th = 9, w_q = 0.01, gentle = false, max_p = 0.2 }",
    "queue = { kind = \"red\", preset = \"floyd-jacobson\", min_th = \"auto\", max_th = \"auto\", w_q = \"auto\" }",
    "queue = { kind = \"red\", bytes = false, queue_in_bytes = true, mean_pktsize = \"1000B\", limit = \"30KB\" }",
    "queue = { kind = \"tbf\", rate = \"1Mbps\", burst = \"10KB\", limit = \"30KB\" }",
    "queue = { kind = \"tbf\", rate = \"1Mbps\", burst = \"10KB\", limit = \"30KB\", peak_rate = \"2Mbps\", mtu = \"1500B\" }",
    "queue = { kind = \"fq\" }",
    "queue = { kind = \"fq\", quantum = \"3000B\", flow_limit = 20, limit = 200 }",
];

#[test]
fn every_queue_and_loss_model_resolves_to_a_fixed_point() {
    let losses = [
        "",
        "loss = { per = 0.01 }",
        "loss = { kind = \"none\" }",
        "loss = { kind = \"gilbert-elliott\", p_good_to_bad = 0.01, p_bad_to_good = 0.3 }",
        "schedule = [{ at = \"1s\", rate = \"5Mbps\" }]",
    ];
    for queue in QUEUES {
        for loss in losses {
            let text = scenario(
                &format!("{queue}\n{loss}"),
                "protocol = \"cbr\"\nrate = \"1Mbps\"",
                "",
            );
            assert_fixed_point(&text, &format!("[{queue}] [{loss}]"));
        }
    }
}

#[test]
fn every_protocol_and_setting_resolves_to_a_fixed_point() {
    let flows = [
        "",
        "protocol = \"tcp\"",
        "protocol = \"tcp\"\nvariant = \"reno\"\nstart = { uniform = [\"0s\", \"1s\"] }\nstop = \"1.5s\"",
        "protocol = \"tcp\"\ncount = 3\nname = \"t{i}\"\noverhead = \"100us\"",
        "protocol = \"tcp\"\ncontrol = \"iiad\"",
        "protocol = \"tcp\"\ncontrol = \"sqrt\"\ndelayed_ack = true",
        "protocol = \"tcp\"\ncontrol = \"binomial\"\nk = 0.5\nl = 0.5\nalpha = 2\ndelayed_ack = \"40ms\"",
        "protocol = \"tcp\"\npreset = \"modern\"\nvariant = \"reno\"",
        "protocol = \"cbr\"\nrate = \"1Mbps\"\non = \"100ms\"\noff = \"50ms\"",
        "protocol = \"tfrc\"",
        "protocol = \"tfrc\"\npreset = \"ns2\"",
        "protocol = \"tfrc-wireless\"",
        "protocol = \"multfrc\"",
        "protocol = \"vtp\"",
    ];
    let tails = [
        "",
        "[record]\ninterval = \"100ms\"\nmetrics = true\npackets = true",
        "[record]\npcap = [\"a->b\"]",
        "[record]\npackets = [\"drop\", \"corrupt\"]",
        "[record]\nmetrics = [\"rtt\", \"timeout\"]",
        "[engine]\nties = \"fifo\"\nperturb_delays = 0.5",
        "seed = 7\ndescription = \"x\"",
    ];
    for flow in flows {
        for tail in tails {
            let (head, tail) = match tail.strip_prefix("seed") {
                Some(rest) => (format!("seed{rest}"), ""),
                None => (String::new(), tail),
            };
            let text = format!("{head}\n{}", scenario("", flow, tail));
            assert_fixed_point(&text, &format!("[{flow}] [{tail}] [{head}]"));
        }
    }
}

#[test]
fn every_topology_helper_resolves_to_a_fixed_point() {
    let helpers = [
        (
            "kind = \"dumbbell\"\nhosts = 2\naccess = { rate = \"100Mbps\", delay = \"1ms\" }\n\
             bottleneck = { rate = \"10Mbps\", delay = \"10ms\", queue = { kind = \"red\" } }",
            "left0",
            "right1",
        ),
        (
            "kind = \"dumbbell\"\nleft_access = { rate = \"100Mbps\", delay = \"1ms\" }\n\
             right_access = { rate = \"50Mbps\", delay = \"2ms\", loss = { per = 0.01 } }\n\
             bottleneck = { rate = \"10Mbps\", delay = \"10ms\" }",
            "left0",
            "right0",
        ),
        (
            "kind = \"parking_lot\"\nbackbone = { rate = \"10Mbps\", delay = \"5ms\" }\n\
             access = { rate = \"100Mbps\", delay = \"1ms\", queue = { kind = \"fq\" } }",
            "h0_0",
            "h2_0",
        ),
        (
            "kind = \"chain\"\nnodes = 3\nlink = { rate = \"100Mbps\", delay = \"1ms\" }",
            "n0",
            "n2",
        ),
        (
            "nodes = [\"a\", \"b\", \"c\"]\n[[topology.link]]\nfrom = \"a\"\nto = \"b\"\nname = \"ab\"\n\
             rate = \"10Mbps\"\ndelay = \"1ms\"\n[[topology.link]]\nbetween = [\"b\", \"c\"]\n\
             rate = \"10Mbps\"\ndelay = \"1ms\"\n[[topology.link]]\nfrom = \"b\"\nto = \"a\"\n\
             rate = \"1Mbps\"\ndelay = \"1ms\"",
            "a",
            "c",
        ),
    ];
    for (topology, from, to) in helpers {
        let text = format!(
            "name = \"h\"\nduration = \"1s\"\n[[flow]]\nfrom = \"{from}\"\nto = \"{to}\"\n[topology]\n{topology}\n"
        );
        assert_fixed_point(&text, topology);
    }
}

fn shipped() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fairstream/scenarios");
    let mut files = Vec::new();
    for sub in ["papers", "bench"] {
        for entry in std::fs::read_dir(root.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_shipped_scenario_resolves_to_a_fixed_point() {
    // Among them validation-binomial, whose IIAD flow resolves with its fixed k and l.
    let files = shipped();
    assert!(files.len() > 20, "found only {files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        assert_fixed_point(&text, &path.display().to_string());
    }
}

/// Every queue variation above shows in the link summary as typed values: its discipline's
/// keyword, its limit in packets or bytes, and each parameter its discipline declares (RED's
/// automatic thresholds as resolved), every one of them a column the run declares.
#[test]
fn a_queue_shows_in_the_link_summary_as_typed_parameters() {
    use fairstream_records::column::value_of;
    for queue in QUEUES {
        let s = load(
            &scenario(queue, "rate = \"1Mbps\"\nprotocol = \"cbr\"", ""),
            queue,
            None,
        )
        .unwrap_or_else(|e| panic!("{queue}: {e}"));
        let config = s.network.links()[0].queue.clone();
        let out = fairstream_sim::Simulator::new(s.network).unwrap().run();
        let link = &out.links[0];
        assert_eq!(link.queue_kind, config.kind(), "{queue}");
        let limit = match config.limit() {
            fairstream_net::QueueLimit::Packets(n) => (Some(u64::from(n)), None),
            fairstream_net::QueueLimit::Bytes(b) => (None, Some(b.as_bytes())),
        };
        assert_eq!(
            (link.queue_limit_packets, link.queue_limit_bytes),
            limit,
            "{queue}"
        );
        assert!(!link.queue_params.is_empty(), "{queue}: no parameters");
        for (c, v) in &link.queue_params {
            assert!(
                out.queue_columns.iter().any(|d| std::ptr::eq(*d, *c)),
                "{queue}: {} is not declared",
                c.name
            );
            assert_eq!(value_of(&link.queue_params, c), Some(*v));
        }
        if queue.contains("min_th = 3") {
            // Given in packets; the queue is measured in bytes (500-byte mean packets).
            use fairstream_records::Value::{Count, Flag, Real};
            let param = |name: &str| {
                let found = link.queue_params.iter().find(|(c, _)| c.name == name);
                found.map(|(_, v)| *v)
            };
            assert_eq!(param("red_w_q"), Some(Real(0.01)));
            assert_eq!(param("red_queue_in_bytes"), Some(Flag(true)));
            assert_eq!(param("red_mean_pktsize_bytes"), Some(Count(500)));
            assert_eq!(param("red_min_th"), Some(Real(1500.0)));
        }
    }
}

#[test]
fn the_resolved_form_shows_each_protocols_numeric_defaults() {
    for (link, flow, keys) in [
        ("", "protocol = \"tfrc\"", &["feedback_timer"][..]),
        (
            "",
            "protocol = \"multfrc\"",
            &["alpha", "beta", "initial_connections"][..],
        ),
        (
            "",
            "protocol = \"vtp\"",
            &["sigma", "e_max", "min_rate_packets", "rtt_ratio_bound"][..],
        ),
        (
            "",
            "protocol = \"rap\"",
            &["alpha", "rtt_gain", "min_send_fraction"][..],
        ),
        (
            "",
            "protocol = \"mmapp\"",
            &["rtt_gain", "feedback_timeout_rtts"][..],
        ),
        (
            "queue = { kind = \"erica\" }",
            "protocol = \"tcp\"\natm = \"abr\"",
            &["target_utilisation", "delta"][..],
        ),
    ] {
        let text = scenario(link, flow, "");
        let s = load(&text, "defaults.toml", None).unwrap_or_else(|e| panic!("{flow}: {e}"));
        for key in keys {
            assert!(
                s.resolved
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{key} ="))
                        || l.contains(&format!(" {key} = "))),
                "{flow}: no {key} in\n{}",
                s.resolved
            );
        }
        assert_fixed_point(&text, flow);
    }
}
