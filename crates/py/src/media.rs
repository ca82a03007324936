//! The media model for Python: paper 001's scale → frames-sent policy of a GOP pattern, the rate
//! of each scale of a synthetic MPEG-1 stream as MPEG_APP sends it, and the frames of a real
//! video file imported through ffprobe.

use fairstream_core::{DataSize, RngStream};
use std::path::PathBuf;

use fairstream_media::{FrameTrace, GopPattern, SyntheticGop, ffprobe, scale};
use fairstream_proto::media_scaling;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn pattern(gop: &str) -> PyResult<GopPattern> {
    gop.parse().map_err(|e: fairstream_media::PatternError| {
        PyValueError::new_err(format!("gop {gop:?}: {e}"))
    })
}

/// The frames of `gop` each scale sends (paper 001's Table 2), scale 0 first: the pattern's
/// letters, `.` for a frame not sent.
#[pyfunction]
pub(crate) fn mpeg_policy_table(gop: &str) -> PyResult<Vec<String>> {
    Ok(scale::policy_table(&pattern(gop)?).to_vec())
}

/// The rate of each scale, bit/s, scale 0 first, of a synthetic MPEG-1 stream (`gop` at
/// `frame_rate` with I/P/B frames of the given sizes) as MPEG_APP sends it: `(encoded, wire)`,
/// the frames' bytes alone and with the IP, UDP and media headers of the packets of at most
/// `max_packet_bytes` they are split into.
#[pyfunction]
#[pyo3(signature = (gop, frame_rate, i_bytes, p_bytes, b_bytes, max_packet_bytes=1500))]
pub(crate) fn mpeg_scale_rates(
    gop: &str,
    frame_rate: f64,
    i_bytes: u64,
    p_bytes: u64,
    b_bytes: u64,
    max_packet_bytes: u64,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    if !(frame_rate.is_finite() && frame_rate > 0.0) {
        return Err(PyValueError::new_err(format!(
            "frame_rate {frame_rate}: expected frames per second above 0"
        )));
    }
    let synthetic = SyntheticGop {
        pattern: pattern(gop)?,
        frame_rate,
        i_size: DataSize::bytes(i_bytes),
        p_size: DataSize::bytes(p_bytes),
        b_size: DataSize::bytes(b_bytes),
        size_noise: 0.0,
    };
    let trace = FrameTrace::synthetic(&synthetic, 1, &mut RngStream::from_seed(0));
    let (encoded, wire) =
        media_scaling::mpeg_scale_rates(&trace, DataSize::bytes(max_packet_bytes));
    let bps = |rates: &[fairstream_core::Bitrate]| rates.iter().map(|r| r.as_bps_f64()).collect();
    Ok((bps(&encoded), bps(&wire)))
}

/// The frames of the first video stream of the file at `path`, read with `ffprobe` (FFmpeg):
/// `(time, type, bytes)` per frame in presentation order, time in seconds from the first frame,
/// type `"I"`, `"P"` or `"B"`, bytes the encoded frame's size. ValueError naming the file when
/// ffprobe is not installed, fails on the file, or reports a frame that cannot be used.
#[pyfunction]
pub(crate) fn import_video(path: PathBuf) -> PyResult<Vec<(f64, String, u64)>> {
    let trace = ffprobe::import(&path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(trace
        .frames()
        .iter()
        .map(|f| (f.time.as_secs_f64(), f.kind.to_string(), f.size.as_bytes()))
        .collect())
}
