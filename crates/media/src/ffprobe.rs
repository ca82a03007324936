//! Frame traces imported from a real video file through FFmpeg's `ffprobe`: the first video
//! stream's frames, each with its picture type (I, P or B), its encoded size (the packet's
//! bytes) and its presentation time, in presentation order.
//!
//! `ffprobe -v error -select_streams v:0 -show_entries frame=pict_type,pkt_size,pts_time,
//! best_effort_timestamp_time -of json FILE` is run and its JSON parsed with `serde_json`.
//! Times are taken from the first frame's (a container may start at any time stamp); a frame
//! with no time stamp (a decoder's flushed last frame) follows the one before by the mean
//! interval; the pass ends one mean frame interval after the last frame, as for CSV traces.
//!
//! Every error names the video file ([`VideoError`]): ffprobe not installed (with how to get
//! it), ffprobe failing on the file (with what it said), output that is not what ffprobe
//! writes, and a frame with an unknown picture type (e.g. MPEG-4's `S`), no size or no time.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use fairstream_core::{DataSize, Duration};
use serde::Deserialize;

use crate::frame::{Frame, FrameType};
use crate::trace::{FrameTrace, TraceProblem};

/// The program run unless the caller names another.
pub const FFPROBE: &str = "ffprobe";

/// Why a video's frames could not be imported; every variant names the video file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VideoError {
    /// The ffprobe program could not be started.
    #[error(
        "{file}: cannot import the video's frames: `{program}` is not installed or not on PATH \
         ({reason}); install FFmpeg (Debian: `apt-get install ffmpeg`), or give the frames as a \
         CSV trace (time,type,bytes)"
    )]
    NotInstalled {
        /// The video file.
        file: String,
        /// The program looked for.
        program: String,
        /// What the system said.
        reason: String,
    },
    /// ffprobe ran but failed on the file (missing, not a video, no video stream ...).
    #[error("{file}: ffprobe could not read the video: {message}")]
    Failed {
        /// The video file.
        file: String,
        /// ffprobe's own words (its standard error), or its exit status.
        message: String,
    },
    /// ffprobe's output is not the JSON it writes.
    #[error("{file}: unexpected ffprobe output ({message}); expected JSON with a `frames` list")]
    BadOutput {
        /// The video file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A frame ffprobe reported cannot be part of a trace.
    #[error("{file}: video frame {index}: {problem}")]
    Frame {
        /// The video file.
        file: String,
        /// 1-based index of the frame in presentation order.
        index: usize,
        /// What is wrong.
        problem: TraceProblem,
    },
    /// The file has no video frames (or the trace cannot be made of them).
    #[error("{file}: {problem}")]
    Trace {
        /// The video file.
        file: String,
        /// What is wrong.
        problem: TraceProblem,
    },
}

/// Imports the frames of the first video stream of the file at `path` with `ffprobe` on PATH.
pub fn import(path: &Path) -> Result<FrameTrace, VideoError> {
    import_with(OsStr::new(FFPROBE), path)
}

/// [`import`] with the ffprobe program `program` (a name looked up on PATH, or a path).
pub fn import_with(program: &OsStr, path: &Path) -> Result<FrameTrace, VideoError> {
    let file = path.display().to_string();
    let output = Command::new(program)
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .arg("frame=pict_type,pkt_size,pts_time,best_effort_timestamp_time")
        .args(["-of", "json"])
        .arg(path)
        .output()
        .map_err(|e| VideoError::NotInstalled {
            file: file.clone(),
            program: program.to_string_lossy().into_owned(),
            reason: e.to_string(),
        })?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(VideoError::Failed {
            file,
            message: if said.is_empty() {
                format!("it exited with {}", output.status)
            } else {
                said
            },
        });
    }
    let text = String::from_utf8_lossy(&output.stdout);
    parse(&text, &file)
}

/// ffprobe's JSON: the frames list.
#[derive(Deserialize)]
struct Probe {
    frames: Vec<ProbeFrame>,
}

/// One frame as ffprobe writes it: every value a string, any of them possibly absent.
#[derive(Deserialize)]
struct ProbeFrame {
    pict_type: Option<String>,
    pkt_size: Option<String>,
    pts_time: Option<String>,
    best_effort_timestamp_time: Option<String>,
}

/// Parses ffprobe's JSON output `text` for the video `file` (named in errors).
pub fn parse(text: &str, file: &str) -> Result<FrameTrace, VideoError> {
    let probe: Probe = serde_json::from_str(text).map_err(|e| VideoError::BadOutput {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let frame_err = |index: usize, problem| VideoError::Frame {
        file: file.to_string(),
        index,
        problem,
    };
    let mut start = None;
    let mut frames: Vec<Frame> = Vec::with_capacity(probe.frames.len());
    for (i, raw) in probe.frames.iter().enumerate() {
        let index = i + 1;
        let kind_text = raw.pict_type.as_deref().unwrap_or("");
        let mut letters = kind_text.chars();
        let (Some(kind), None) = (
            letters.next().and_then(FrameType::from_letter),
            letters.next(),
        ) else {
            return Err(frame_err(
                index,
                TraceProblem::UnknownType(kind_text.to_string()),
            ));
        };
        let size = raw
            .pkt_size
            .as_deref()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                frame_err(
                    index,
                    TraceProblem::BadValue {
                        column: "pkt_size",
                        value: raw.pkt_size.clone().unwrap_or_default(),
                        expected: "a whole number of bytes",
                    },
                )
            })?;
        // `pts_time` is "N/A" for frames without a time stamp; the best-effort one is what
        // players use then. A frame with neither (the decoder's last, flushed frame, as MPEG-1
        // in a program stream gives) follows the one before by the mean interval so far.
        let stamped = [&raw.pts_time, &raw.best_effort_timestamp_time]
            .into_iter()
            .find_map(|t| t.as_deref().and_then(|t| t.parse::<f64>().ok()))
            .filter(|t| t.is_finite());
        let secs = match (stamped, frames.last(), start) {
            (Some(t), _, _) => t,
            (None, Some(prev), Some(first)) if frames.len() > 1 => {
                let prev = first + prev.time.as_secs_f64();
                prev + (prev - first) / (frames.len() - 1) as f64
            }
            _ => {
                return Err(frame_err(
                    index,
                    TraceProblem::BadValue {
                        column: "pts_time",
                        value: raw.pts_time.clone().unwrap_or_default(),
                        expected: "a presentation time in seconds",
                    },
                ));
            }
        };
        let first = *start.get_or_insert(secs);
        let offset = secs - first;
        if offset < 0.0 {
            return Err(frame_err(
                index,
                TraceProblem::Unsorted {
                    time: offset,
                    previous: 0.0,
                },
            ));
        }
        let time = Duration::from_secs_f64(offset);
        if let Some(prev) = frames.last().map(|f: &Frame| f.time)
            && time < prev
        {
            return Err(frame_err(
                index,
                TraceProblem::Unsorted {
                    time: offset,
                    previous: prev.as_secs_f64(),
                },
            ));
        }
        frames.push(Frame {
            time,
            kind,
            size: DataSize::bytes(size),
        });
    }
    FrameTrace::with_mean_tail(frames).map_err(|problem| VideoError::Trace {
        file: file.to_string(),
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(frames: &[(&str, &str, &str)]) -> String {
        let rows: Vec<String> = frames
            .iter()
            .map(|(t, k, b)| {
                format!(
                    r#"{{"pts_time": "{t}", "best_effort_timestamp_time": "{t}", "pkt_size": "{b}", "pict_type": "{k}", "side_data_list": [{{}}]}}"#
                )
            })
            .collect();
        format!("{{\"frames\": [{}]}}", rows.join(","))
    }

    #[test]
    fn frames_are_read_with_times_from_the_first() {
        let text = json(&[
            ("0.540000", "I", "8058"),
            ("0.580000", "B", "689"),
            ("0.620000", "B", "701"),
            ("0.660000", "P", "3000"),
        ]);
        let t = parse(&text, "clip.mpg").unwrap();
        let kinds: String = t.kinds().map(FrameType::letter).collect();
        assert_eq!(kinds, "IBBP");
        assert_eq!(t.frames()[0].time, Duration::ZERO);
        assert_eq!(t.frames()[3].time, Duration::from_millis(120));
        assert_eq!(t.frames()[1].size, DataSize::bytes(689));
        assert_eq!(t.total_size(), DataSize::bytes(8058 + 689 + 701 + 3000));
        assert_eq!(t.duration(), Duration::from_millis(160));
    }

    #[test]
    fn a_missing_pts_falls_back_to_the_best_effort_time() {
        let text = r#"{"frames": [
            {"pts_time": "N/A", "best_effort_timestamp_time": "0.0", "pkt_size": "10", "pict_type": "I"},
            {"best_effort_timestamp_time": "0.5", "pkt_size": "5", "pict_type": "P"}]}"#;
        let t = parse(text, "v.mkv").unwrap();
        assert_eq!(t.frames()[1].time, Duration::from_millis(500));
        // A last frame with no time at all follows at the mean interval.
        let text = r#"{"frames": [
            {"pts_time": "1.0", "pkt_size": "10", "pict_type": "I"},
            {"pts_time": "1.04", "pkt_size": "5", "pict_type": "B"},
            {"pts_time": "1.08", "pkt_size": "5", "pict_type": "P"},
            {"pts_time": "N/A", "best_effort_timestamp_time": "N/A", "pkt_size": "7", "pict_type": "P"}]}"#;
        let t = parse(text, "v.mpg").unwrap();
        assert_eq!(t.frames()[3].time, Duration::from_millis(120));
        assert_eq!(t.duration(), Duration::from_millis(160));
        let e = parse(
            r#"{"frames": [{"pts_time": "N/A", "pkt_size": "1", "pict_type": "I"}]}"#,
            "v",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("frame 1: `N/A` in column `pts_time`"),
            "{e}"
        );
    }

    #[test]
    fn bad_frames_name_the_file_and_the_frame() {
        let e = parse(&json(&[("0", "I", "1"), ("0.04", "S", "1")]), "v.mp4").unwrap_err();
        assert_eq!(
            e.to_string(),
            "v.mp4: video frame 2: unknown frame type `S`; expected I, P or B"
        );
        let e = parse(&json(&[("0", "I", "-3")]), "v.mp4").unwrap_err();
        assert!(
            matches!(
                &e,
                VideoError::Frame {
                    index: 1,
                    problem: TraceProblem::BadValue {
                        column: "pkt_size",
                        ..
                    },
                    ..
                }
            ),
            "{e}"
        );
        let e = parse(
            &json(&[("0", "I", "1"), ("0.1", "P", "1"), ("0.05", "B", "1")]),
            "v.mp4",
        )
        .unwrap_err();
        assert!(matches!(
            e,
            VideoError::Frame {
                index: 3,
                problem: TraceProblem::Unsorted { .. },
                ..
            }
        ));
        let e = parse(&json(&[("x", "I", "1")]), "v.mp4").unwrap_err();
        assert!(e.to_string().contains("pts_time"), "{e}");
    }

    #[test]
    fn output_that_is_not_ffprobe_json_or_has_no_frames_is_refused() {
        let e = parse("{}", "v.mp4").unwrap_err();
        assert!(matches!(e, VideoError::BadOutput { .. }));
        assert!(
            e.to_string()
                .starts_with("v.mp4: unexpected ffprobe output"),
            "{e}"
        );
        let e = parse(r#"{"frames": []}"#, "v.mp4").unwrap_err();
        assert_eq!(
            e,
            VideoError::Trace {
                file: "v.mp4".into(),
                problem: TraceProblem::Empty
            }
        );
    }

    #[test]
    fn a_missing_ffprobe_says_what_to_install_and_names_the_file() {
        let e = import_with(
            OsStr::new("fairstream-no-such-ffprobe"),
            Path::new("clip.mp4"),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, VideoError::NotInstalled { .. }), "{text}");
        assert!(text.starts_with("clip.mp4: "), "{text}");
        assert!(
            text.contains("`fairstream-no-such-ffprobe` is not installed"),
            "{text}"
        );
        assert!(text.contains("apt-get install ffmpeg"), "{text}");
    }
}
