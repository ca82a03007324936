//! A streamer whose levels are frame traces (`[[flow.level]]` with `trace`, as MPEG_APP reads
//! them): the levels take their rates from the traces unless given, play out, and resolve to
//! absolute paths; levels that are not one clip (other frame types), a missing trace, and a mix
//! with the synthetic keys are errors at the scenario's file, line and field.

use std::path::{Path, PathBuf};

use fairstream_scenario::{ScenarioError, load};
use fairstream_sim::Simulator;

/// A scenario with one UDP streamer whose flow table ends with `tail` (line 18 on).
fn scenario(tail: &str) -> String {
    format!(
        r#"name = "t"
duration = "20s"

[topology]
nodes = ["a", "b"]

[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "20ms"

[[flow]]
protocol = "surestream"
from = "a"
to = "b"
clip_length = "12s"
prebuffer = "2s"
{tail}
"#
    )
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fairstream-surestream-traces-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A CSV trace of `gops` GOPs of `pattern` at 10 frame/s, each frame `bytes` of its type.
fn write_trace(dir: &Path, name: &str, pattern: &str, sizes: [u64; 3]) {
    let mut csv = String::from("time,type,bytes\n");
    for (k, kind) in pattern.chars().cycle().take(20).enumerate() {
        let bytes = match kind {
            'I' => sizes[0],
            'P' => sizes[1],
            _ => sizes[2],
        };
        csv.push_str(&format!("{:.1},{kind},{bytes}\n", k as f64 / 10.0));
    }
    std::fs::write(dir.join(name), csv).unwrap();
}

fn load_in(dir: &Path, tail: &str) -> Result<fairstream_scenario::Scenario, ScenarioError> {
    let path = dir.join("s.toml");
    let text = scenario(tail);
    std::fs::write(&path, &text).unwrap();
    load(&text, &path.display().to_string(), None)
}

#[test]
fn trace_levels_take_their_rates_from_the_traces_and_play_out() {
    let dir = temp_dir("ok");
    // IBBPB at 10 frame/s: 0.5 s a GOP. Low: 1000 + 3·200 + 400 = 2000 B per GOP = 32 kbit/s.
    write_trace(&dir, "low.csv", "IBBPB", [1000, 400, 200]);
    write_trace(&dir, "high.csv", "IBBPB", [5000, 2000, 1000]);
    let s = load_in(
        &dir,
        "[[flow.level]]\ntrace = \"low.csv\"\n[[flow.level]]\ntrace = \"high.csv\"\nrate = \"200kbps\"",
    )
    .unwrap();
    let low = dir.join("low.csv").display().to_string();
    assert!(
        s.resolved.contains(&format!("trace = \"{low}\"")),
        "{}",
        s.resolved
    );
    assert!(s.resolved.contains("rate = \"32kbps\""), "{}", s.resolved);
    assert!(s.resolved.contains("rate = \"200kbps\""), "{}", s.resolved);
    assert!(!s.resolved.contains("levels ="), "{}", s.resolved);
    let again = load(&s.resolved, "/elsewhere/resolved.toml", None).unwrap();
    assert_eq!(again.resolved, s.resolved);
    let out = Simulator::new(s.network).unwrap().run();
    let media = &out.flows[0].summaries;
    let frames = |name: &str| {
        let found = media.iter().find(|(c, _)| c.name == name);
        found.map(|(_, v)| *v)
    };
    // 12 s at 10 frame/s, all of it delivered on an uncongested 10 Mbit/s path.
    use fairstream_records::Value::Count;
    assert_eq!(frames("frames_sent"), Some(Count(120)), "{media:?}");
    assert_eq!(frames("frames_delivered"), Some(Count(120)), "{media:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn levels_that_are_not_one_clip_or_are_missing_are_errors_at_their_field() {
    let dir = temp_dir("bad");
    write_trace(&dir, "a.csv", "IBBPB", [1000, 400, 200]);
    write_trace(&dir, "b.csv", "IPPPP", [5000, 2000, 1000]);
    let e = load_in(
        &dir,
        "[[flow.level]]\ntrace = \"a.csv\"\n[[flow.level]]\ntrace = \"b.csv\"",
    )
    .unwrap_err();
    assert_eq!(
        (e.line, e.field.as_str()),
        (21, "flow[0].level[1].trace"),
        "{e}"
    );
    assert!(e.message.contains("same GOP structure"), "{e}");

    let e = load_in(&dir, "[[flow.level]]\ntrace = \"nowhere.csv\"").unwrap_err();
    assert_eq!(e.field, "flow[0].level[0].trace", "{e}");
    assert!(
        e.message
            .contains(&format!("no file at {}", dir.join("nowhere.csv").display())),
        "{e}"
    );

    let e = load_in(&dir, "[[flow.level]]\nrate = \"30kbps\"").unwrap_err();
    assert_eq!(e.field, "flow[0].level[0].trace", "{e}");

    let e = load_in(&dir, "levels = [20, 45]\n[[flow.level]]\ntrace = \"a.csv\"").unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (18, "flow[0].levels"), "{e}");

    // Levels the server could never switch between: no I frame (one level needs none).
    write_trace(&dir, "p.csv", "PPPPP", [1000, 400, 200]);
    write_trace(&dir, "q.csv", "PPPPP", [5000, 2000, 1000]);
    let e = load_in(
        &dir,
        "[[flow.level]]\ntrace = \"p.csv\"\n[[flow.level]]\ntrace = \"q.csv\"",
    )
    .unwrap_err();
    assert_eq!(
        (e.line, e.field.as_str()),
        (19, "flow[0].level[0].trace"),
        "{e}"
    );
    assert!(e.message.contains("the trace has no I frame"), "{e}");
    load_in(&dir, "[[flow.level]]\ntrace = \"p.csv\"").unwrap();
    // over TCP the server switches at any frame
    load_in(
        &dir,
        "transport = \"tcp\"\n[[flow.level]]\ntrace = \"p.csv\"\n[[flow.level]]\ntrace = \"q.csv\"",
    )
    .unwrap();

    // Rates must still increase.
    let e = load_in(
        &dir,
        "[[flow.level]]\ntrace = \"a.csv\"\n[[flow.level]]\ntrace = \"a.csv\"",
    )
    .unwrap_err();
    assert_eq!(e.field, "flow[0].level", "{e}");
    assert!(e.message.contains("not above the level before it"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
