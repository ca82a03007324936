//! MPEG_APP flows whose frames come from a file: `trace = "clip.csv"` and
//! `trace = { video = "clip.mp4" }` (through ffprobe). Paths are taken from the scenario file's
//! directory and resolve to absolute ones; a missing file names the path looked for; a bad
//! trace names the trace file and line beside the scenario's file, line and field. The real-
//! video test encodes ffmpeg's test source with two codecs, checks the imported frames against
//! an independent ffprobe call and streams them; it skips, saying why, without ffmpeg.

use std::path::{Path, PathBuf};
use std::process::Command;

use fairstream_media::{FrameTrace, FrameType, ffprobe};
use fairstream_proto::media_scaling::{MpegAppConfig, MpegTrace};
use fairstream_records::RunOutput;
use fairstream_scenario::{ScenarioError, load};
use fairstream_sim::Simulator;

/// A scenario with one MPEG_APP flow and the extra `keys` line in its table (line 14).
fn scenario(keys: &str) -> String {
    format!(
        r#"name = "t"
duration = "6s"

[topology]
nodes = ["a", "b"]

[[topology.link]]
between = ["a", "b"]
rate = "10Mbps"
delay = "20ms"

[[flow]]
protocol = "mpegapp"
{keys}
from = "a"
to = "b"

[record]
metrics = true
"#
    )
}

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fairstream-trace-files-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the scenario with `keys` as `dir/s.toml` and loads it under that name.
fn load_in(dir: &Path, keys: &str) -> Result<fairstream_scenario::Scenario, ScenarioError> {
    let path = dir.join("s.toml");
    let text = scenario(keys);
    std::fs::write(&path, &text).unwrap();
    load(&text, &path.display().to_string(), None)
}

fn run(s: fairstream_scenario::Scenario) -> RunOutput {
    Simulator::new(s.network).unwrap().run()
}

#[test]
fn a_csv_trace_next_to_the_scenario_is_streamed_and_resolves_to_its_absolute_path() {
    let dir = temp_dir("csv");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    // Two GOPs of IBBP at 10 frame/s: 0.4 s per GOP, 18 000 B per pass of 0.8 s.
    let mut csv = String::from("# test clip\ntime,type,bytes\n");
    for (k, (kind, bytes)) in [("I", 6000), ("B", 1000), ("B", 1000), ("P", 1000)]
        .iter()
        .cycle()
        .take(8)
        .enumerate()
    {
        csv.push_str(&format!("{:.1},{kind},{bytes}\n", k as f64 / 10.0));
    }
    std::fs::write(dir.join("traces/clip.csv"), csv).unwrap();
    let s = load_in(&dir, "trace = \"traces/clip.csv\"").unwrap();
    let absolute = dir.join("traces/clip.csv").display().to_string();
    assert!(
        s.resolved.contains(&format!("trace = \"{absolute}\"")),
        "{}",
        s.resolved
    );
    assert!(!s.resolved.contains("gop ="), "{}", s.resolved);
    // The resolved form loads back from anywhere (here, under another name and directory).
    let again = load(&s.resolved, "/elsewhere/resolved.toml", None).unwrap();
    assert_eq!(again.resolved, s.resolved);
    let out = run(s);
    let f = &out.flows[0];
    // All frames once at scale 4: 180 kbit/s of frames, plus headers; less while climbing.
    let kbps = f.bytes_delivered as f64 * 8.0 / 6.0 / 1e3;
    assert!((120.0..200.0).contains(&kbps), "{kbps} kbit/s");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_trace_file_names_the_absolute_path_looked_for() {
    let dir = temp_dir("missing");
    let e = load_in(&dir, "trace = \"nowhere/clip.csv\"").unwrap_err();
    let looked = dir.join("nowhere/clip.csv").display().to_string();
    assert_eq!(e.file, dir.join("s.toml").display().to_string());
    assert_eq!((e.line, e.field.as_str()), (14, "flow[0].trace"), "{e}");
    assert!(e.message.contains(&format!("no file at {looked}")), "{e}");
    let e = load_in(&dir, "trace = { video = \"clip.mp4\" }").unwrap_err();
    assert_eq!(e.field, "flow[0].trace.video", "{e}");
    assert!(
        e.message
            .contains(&dir.join("clip.mp4").display().to_string()),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_trace_file_names_its_file_and_line_at_the_scenario_field() {
    let dir = temp_dir("bad");
    let clip = dir.join("clip.csv").display().to_string();
    for (text, line, says) in [
        ("time,type\n0,I\n", 1, "missing column `bytes`"),
        (
            "time,type,bytes\n0,I,10\n0.1,P\n",
            3,
            "missing column `bytes`",
        ),
        ("time,type,bytes\n0,I,10\n0.1,P,-5\n", 3, "`-5` is negative"),
        (
            "time,type,bytes\n0.2,I,1\n0.1,B,1\n",
            3,
            "before the previous frame's",
        ),
        (
            "time,type,bytes\n0,I,1\n0.1,X,1\n",
            3,
            "unknown frame type `X`",
        ),
    ] {
        std::fs::write(dir.join("clip.csv"), text).unwrap();
        let e = load_in(&dir, "trace = \"clip.csv\"").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (14, "flow[0].trace"), "{e}");
        assert!(e.message.starts_with(&format!("{clip}:{line}: ")), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    std::fs::write(dir.join("clip.csv"), "time,type,bytes\n0,I,1\n").unwrap();
    let e = load_in(&dir, "trace = \"clip.csv\"\ngop = \"IPP\"").unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (15, "flow[0].gop"), "{e}");
    assert!(e.message.contains("does not apply with `trace`"), "{e}");
    std::fs::write(
        dir.join("clip.csv"),
        "time,type,bytes\n0,P,900\n0.1,B,300\n",
    )
    .unwrap();
    let e = load_in(&dir, "trace = \"clip.csv\"").unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (14, "flow[0].trace"), "{e}");
    assert!(e.message.contains("the trace has no I frame"), "{e}");
    let e = load_in(&dir, "trace = 3").unwrap_err();
    assert!(e.message.contains("a CSV trace file"), "{e}");
    let e = load_in(&dir, "trace = { file = \"clip.csv\" }").unwrap_err();
    assert_eq!(e.field, "flow[0].trace.file", "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Whether `program` runs (`-version`).
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Encodes 4 s of ffmpeg's test source (25 frame/s, GOP of 12 with 2 B frames) with `codec`
/// at the fixed quantiser `q` (a bit-rate target is not reached on so simple a picture).
fn encode(dir: &Path, codec: &str, q: &str) -> PathBuf {
    let path = dir.join(format!("{codec}.mpg"));
    let status = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"])
        .args(["-i", "testsrc=duration=4:size=320x240:rate=25"])
        .args(["-c:v", codec, "-q:v", q, "-g", "12", "-bf", "2"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "ffmpeg {codec}");
    path
}

/// Frame types and sizes as ffprobe reports them, by a call independent of the importer's
/// (CSV output, packet sizes of decoded frames).
fn ffprobe_csv(path: &Path) -> Vec<(FrameType, u64)> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "frame=pict_type,pkt_size",
            "-of",
            "csv=p=0",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            // The field order is ffprobe's, not the order asked for: find each by its form.
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            let kind = fields
                .iter()
                .find_map(|f| {
                    f.chars()
                        .next()
                        .filter(|_| f.len() == 1)
                        .and_then(FrameType::from_letter)
                })
                .unwrap_or_else(|| panic!("no picture type in {l:?}"));
            let size = fields
                .iter()
                .find_map(|f| f.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no size in {l:?}"));
            (kind, size)
        })
        .collect()
}

#[test]
fn real_video_frames_match_ffprobe_and_stream_through_mpeg_app() {
    if !(have("ffmpeg") && have("ffprobe")) {
        eprintln!(
            "skipped: ffmpeg/ffprobe not installed (Debian: apt-get install ffmpeg); the \
             real-video import is not tested"
        );
        return;
    }
    let dir = temp_dir("video");
    let mut rates = Vec::new();
    for (codec, q) in [("mpeg1video", "10"), ("mpeg2video", "2")] {
        let path = encode(&dir, codec, q);
        let trace: FrameTrace = ffprobe::import(&path).unwrap();
        let reported = ffprobe_csv(&path);
        let imported: Vec<(FrameType, u64)> = trace
            .frames()
            .iter()
            .map(|f| (f.kind, f.size.as_bytes()))
            .collect();
        assert_eq!(imported, reported, "{codec}");
        assert_eq!(trace.len(), 100, "{codec}: 4 s at 25 frame/s");
        let kinds: String = trace.kinds().take(12).map(FrameType::letter).collect();
        assert!(
            kinds.starts_with('I') && kinds.contains('P') && kinds.contains('B'),
            "{codec}: {kinds}"
        );
        // 25 frame/s, times from the first frame.
        assert_eq!(
            trace.frames()[25].time.as_millis_f64().round(),
            1000.0,
            "{codec}"
        );
        assert_eq!(trace.duration().as_millis_f64().round(), 4000.0, "{codec}");

        // Streamed: the scenario names the video relative to its own directory.
        let s = load_in(&dir, &format!("trace = {{ video = \"{codec}.mpg\" }}")).unwrap();
        let out = run(s);
        let f = &out.flows[0];
        let wire = MpegAppConfig {
            trace: MpegTrace::Frames(trace.clone()),
            ..MpegAppConfig::default()
        }
        .wire_rates(&trace);
        let kbps = f.bytes_delivered as f64 * 8.0 / 6.0 / 1e3;
        let full = wire[4].as_bps_f64() / 1e3;
        // Scale 4 (all frames) after the first second's climb; the loop repeats the 4 s clip.
        assert!(
            (0.75 * full..1.02 * full).contains(&kbps),
            "{codec}: {kbps} kbit/s delivered, {full} kbit/s with all frames"
        );
        assert_eq!(f.packets_dropped, 0);
        rates.push((trace.mean_rate(), trace.total_size()));
    }
    assert!(
        rates[1].1.as_bytes() > rates[0].1.as_bytes() * 3 / 2,
        "the finer quantiser's encoding is larger: {rates:?}"
    );
    let failed = ffprobe::import(&dir.join("none.mp4")).unwrap_err();
    assert!(
        failed.to_string().contains("none.mp4")
            && failed
                .to_string()
                .contains("ffprobe could not read the video"),
        "{failed}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
