//! A frame trace named by a flow's `trace` key: `trace = "clip.csv"` (a CSV trace,
//! `time,type,bytes`) or `trace = { video = "clip.mp4" }` (the frames of a real video, through
//! `ffprobe`). Relative paths are taken from the scenario file's directory; the resolved
//! scenario holds the absolute path, so that it loads back from anywhere.
//!
//! Errors point at the scenario's file, line and field and carry the trace's own: a missing
//! file names the absolute path looked for; a bad row names the trace file and its line.

use std::path::{Path, PathBuf};

use fairstream_media::{FrameTrace, csv, ffprobe};
use toml::Value;
use toml::de::DeValue;

use crate::reader::{Result, Section};

/// What `trace` may be.
const EXPECTED: &str = "a CSV trace file (\"clip.csv\") or a video file ({ video = \"clip.mp4\" })";

/// The trace named by `key` of `f`, if given.
pub(crate) fn read_trace(f: &mut Section<'_, '_>, key: &str) -> Result<Option<FrameTrace>> {
    let Some(raw) = f.raw(key) else {
        f.opt_str(key, EXPECTED)?;
        return Ok(None);
    };
    if !matches!(raw.get_ref(), DeValue::Table(_)) {
        let Some(name) = f.opt_str(key, EXPECTED)? else {
            return Ok(None);
        };
        let path = locate(f, key, name)?;
        let trace = csv::read(&path).map_err(|e| f.error(key, e.to_string()))?;
        f.set(key, Value::String(path.display().to_string()));
        return Ok(Some(trace));
    }
    let Some(mut t) = f.opt_table(key, &["video"])? else {
        return Ok(None);
    };
    let name = t.req_str("video", "a video file such as \"clip.mp4\"")?;
    let path = locate(&t, "video", name)?;
    let trace = ffprobe::import(&path).map_err(|e| t.error("video", e.to_string()))?;
    t.set("video", Value::String(path.display().to_string()));
    f.set(key, Value::Table(t.take_resolved()));
    Ok(Some(trace))
}

/// `name` taken from the scenario file's directory, made absolute; an error at `key` if no
/// file is there.
fn locate(f: &Section<'_, '_>, key: &str, name: &str) -> Result<PathBuf> {
    if name.is_empty() {
        return Err(f.error(key, format!("an empty path; expected {EXPECTED}")));
    }
    let dir = Path::new(f.src.file)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let joined = dir.join(name);
    let path = std::path::absolute(&joined).unwrap_or(joined);
    if !path.is_file() {
        return Err(f.error(
            key,
            format!(
                "no file at {} (a relative path is taken from the scenario file's directory)",
                path.display()
            ),
        ));
    }
    Ok(path)
}
