//! Frame traces from CSV text: a header line naming the columns `time` (seconds from the start,
//! non-decreasing), `type` (`I`, `P` or `B`) and `bytes` (the encoded frame size, a whole number
//! 0 or more), in any order and with any other columns beside them (ignored); then one frame
//! per line. Blank lines and lines starting with `#` are skipped.
//!
//! ```text
//! # paper 001, Fig. 2(a)
//! time,type,bytes
//! 0.000,I,11000
//! 0.033,B,2000
//! ```
//!
//! Every error names the file and the line ([`TraceError`]): a missing column (in the header, or
//! a row too short for it), a negative size, a time before the previous frame's, an unknown frame
//! type, a value that is not a number. One pass of the trace lasts until its last frame plus the
//! mean frame interval (`(last − first)/(n − 1)`; one second for a trace of one frame), so that
//! a looping source keeps the frame rate across the seam.

use std::path::Path;

use fairstream_core::{DataSize, Duration};

use crate::frame::{Frame, FrameType};
use crate::trace::{FrameTrace, TraceError, TraceProblem};

/// The columns a trace needs.
const COLUMNS: [&str; 3] = ["time", "type", "bytes"];

/// Reads the trace in the file at `path` (errors name it as `path` displays).
pub fn read(path: &Path) -> Result<FrameTrace, TraceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TraceError {
        file: file.clone(),
        line: 0,
        problem: TraceProblem::Io(e.to_string()),
    })?;
    parse(&text, &file)
}

/// Parses CSV `text` read from `file` (used in error messages only).
pub fn parse(text: &str, file: &str) -> Result<FrameTrace, TraceError> {
    let err = |line: usize, problem| TraceError {
        file: file.to_string(),
        line,
        problem,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((header_line, header)) = lines.next() else {
        return Err(err(0, TraceProblem::Empty));
    };
    let names: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let mut index = [0usize; 3];
    for (slot, column) in index.iter_mut().zip(COLUMNS) {
        *slot = names
            .iter()
            .position(|n| n == column)
            .ok_or_else(|| err(header_line, TraceProblem::MissingColumn(column)))?;
    }
    let mut frames: Vec<Frame> = Vec::new();
    for (line, row) in lines {
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        let mut value = [""; 3];
        for ((slot, &i), column) in value.iter_mut().zip(&index).zip(COLUMNS) {
            *slot = match fields.get(i) {
                Some(v) if !v.is_empty() => v,
                _ => return Err(err(line, TraceProblem::MissingColumn(column))),
            };
        }
        let [time, kind, bytes] = value;
        let secs: f64 = time
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| {
                err(
                    line,
                    TraceProblem::BadValue {
                        column: "time",
                        value: time.to_string(),
                        expected: "a time in seconds, 0 or more",
                    },
                )
            })?;
        let mut letters = kind.chars();
        let kind_text = kind;
        let (Some(kind), None) = (
            letters.next().and_then(FrameType::from_letter),
            letters.next(),
        ) else {
            return Err(err(line, TraceProblem::UnknownType(kind_text.to_string())));
        };
        let size = match bytes.parse::<u64>() {
            Ok(b) => DataSize::bytes(b),
            Err(_) if bytes.starts_with('-') && bytes[1..].parse::<f64>().is_ok() => {
                return Err(err(line, TraceProblem::NegativeSize(bytes.to_string())));
            }
            Err(_) => {
                return Err(err(
                    line,
                    TraceProblem::BadValue {
                        column: "bytes",
                        value: bytes.to_string(),
                        expected: "a whole number of bytes",
                    },
                ));
            }
        };
        let time = Duration::from_secs_f64(secs);
        if let Some(prev) = frames.last()
            && time < prev.time
        {
            return Err(err(
                line,
                TraceProblem::Unsorted {
                    time: secs,
                    previous: prev.time.as_secs_f64(),
                },
            ));
        }
        frames.push(Frame { time, kind, size });
    }
    FrameTrace::with_mean_tail(frames).map_err(|p| err(0, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> (usize, TraceProblem) {
        let e = parse(text, "t.csv").unwrap_err();
        assert_eq!(e.file, "t.csv");
        (e.line, e.problem)
    }

    #[test]
    fn reads_columns_in_any_order_with_comments_and_extras() {
        let text =
            "# a clip\n\nbytes, note, TYPE ,time\n11000,x,I,0\n2000,,b,0.04\n\n8000,y,P,0.08\n";
        let t = parse(text, "t.csv").unwrap();
        let kinds: String = t.kinds().map(FrameType::letter).collect();
        assert_eq!(kinds, "IBP");
        assert_eq!(t.frames()[1].time, Duration::from_millis(40));
        assert_eq!(t.frames()[2].size, DataSize::bytes(8000));
        // The pass ends one mean interval after the last frame.
        assert_eq!(t.duration(), Duration::from_millis(120));
        let one = parse("time,type,bytes\n0.5,I,10\n", "t.csv").unwrap();
        assert_eq!(one.duration(), Duration::from_millis(1500));
    }

    #[test]
    fn a_missing_column_names_the_column_and_line() {
        assert_eq!(
            problem("# c\ntime,type\n0,I\n"),
            (2, TraceProblem::MissingColumn("bytes"))
        );
        assert_eq!(
            problem("time,type,bytes\n0,I,10\n0.1,P\n"),
            (3, TraceProblem::MissingColumn("bytes"))
        );
        assert_eq!(
            problem("time,type,bytes\n0,,10\n"),
            (2, TraceProblem::MissingColumn("type"))
        );
        let e = parse("time,bytes\n", "clip.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "clip.csv:1: missing column `type`; expected the columns time, type and bytes"
        );
    }

    #[test]
    fn a_negative_size_is_refused() {
        assert_eq!(
            problem("time,type,bytes\n0,I,10\n0.1,P,-5\n"),
            (3, TraceProblem::NegativeSize("-5".into()))
        );
        assert!(matches!(
            problem("time,type,bytes\n0,I,1.5\n"),
            (
                2,
                TraceProblem::BadValue {
                    column: "bytes",
                    ..
                }
            )
        ));
    }

    #[test]
    fn unsorted_times_are_refused() {
        let e = parse("time,type,bytes\n0.2,I,1\n0.1,B,1\n", "clip.csv").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.to_string(),
            "clip.csv:3: time 0.1 s is before the previous frame's 0.2 s; frames must be in time order"
        );
        assert!(matches!(
            problem("time,type,bytes\n-1,I,1\n"),
            (2, TraceProblem::BadValue { column: "time", .. })
        ));
    }

    #[test]
    fn an_unknown_frame_type_is_refused() {
        assert_eq!(
            problem("time,type,bytes\n0,I,1\n0.1,D,1\n"),
            (3, TraceProblem::UnknownType("D".into()))
        );
        assert_eq!(
            problem("time,type,bytes\n0,IB,1\n"),
            (2, TraceProblem::UnknownType("IB".into()))
        );
    }

    #[test]
    fn empty_files_and_missing_files() {
        assert_eq!(problem("# nothing\n"), (0, TraceProblem::Empty));
        assert_eq!(problem("time,type,bytes\n"), (0, TraceProblem::Empty));
        let e = read(Path::new("/nonexistent/clip.csv")).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/nonexistent/clip.csv", 0));
        assert!(matches!(e.problem, TraceProblem::Io(_)));
        assert!(
            e.to_string()
                .starts_with("/nonexistent/clip.csv: cannot read the file")
        );
    }

    #[test]
    fn a_written_file_reads_back() {
        let dir = std::env::temp_dir().join(format!("fairstream-media-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("gop.csv");
        std::fs::write(&path, "time,type,bytes\n0,I,11000\n0.0333,B,2000\n").unwrap();
        let t = read(&path).unwrap();
        assert_eq!(t.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
