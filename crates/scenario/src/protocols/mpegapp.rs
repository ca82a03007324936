//! A `protocol = "mpegapp"` flow: MPEG_APP, media scaling over UDP that sends, at each frame
//! time of a frame trace, the frames the receiver's scale selects (paper 001's Table 2;
//! PROTOCOLS.md §6). The trace is a synthetic MPEG-1 stream (`gop`, `frame_rate`, frame sizes)
//! unless `trace` names a CSV trace or a video file.

use fairstream_core::DataSize;
use fairstream_media::{GopPattern, SyntheticGop};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::media_scaling::config::DATA_HEADERS;
use fairstream_proto::media_scaling::{MpegAppConfig, MpegTrace};
use toml::Value;

use super::MAX_PACKET;
use super::media_scaling::{SCALING_KEYS, read_scaling};
use super::trace_file::read_trace;
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys of the synthetic trace, which a `trace` file replaces.
const SYNTHETIC_KEYS: &[&str] = &[
    "gop",
    "frame_rate",
    "i_frame",
    "p_frame",
    "b_frame",
    "size_noise",
    "gops",
];

/// GOPs of a noisy synthetic trace before it repeats, unless `gops` says otherwise.
const NOISY_GOPS: i64 = 100;

/// The keys only an MPEG_APP flow takes.
pub(crate) fn keys() -> Vec<&'static str> {
    [&["trace"], SYNTHETIC_KEYS, &["max_packet"], SCALING_KEYS].concat()
}

/// Reads an MPEG_APP flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    if f.raw("packet_size").is_some() {
        return Err(f.error(
            "packet_size",
            "does not apply to mpegapp flows: frames are split into packets of at most `max_packet`",
        ));
    }
    let d = MpegAppConfig::default();
    let trace = match read_trace(f, "trace")? {
        Some(frames) => {
            if let Some(key) = SYNTHETIC_KEYS.iter().find(|k| f.raw(k).is_some()) {
                return Err(f.error(
                    key,
                    "does not apply with `trace`: the trace file gives the frames",
                ));
            }
            if !frames.has_i_frame() {
                return Err(f.error(
                    "trace",
                    "the trace has no I frame; MPEG_APP starts at its lowest scale, which sends \
                     only I frames, so it would send nothing (each GOP starts with an I frame)",
                ));
            }
            MpegTrace::Frames(frames)
        }
        None => read_synthetic(f)?,
    };
    let max_packet: DataSize = f.unit_or("max_packet", d.max_packet)?;
    if max_packet.as_bytes() <= DATA_HEADERS || max_packet.as_bytes() > MAX_PACKET {
        return Err(f.error(
            "max_packet",
            format!(
                "expected {} to {MAX_PACKET} bytes (the IP, UDP, frame and media headers take {DATA_HEADERS})",
                DATA_HEADERS + 1
            ),
        ));
    }
    let scaling = read_scaling(f)?;
    Ok(ProtocolConfig::MpegApp(MpegAppConfig {
        trace,
        max_packet,
        scaling,
    }))
}

/// Reads the synthetic MPEG-1 trace's keys.
fn read_synthetic(f: &mut Section<'_, '_>) -> Result<MpegTrace> {
    let base = SyntheticGop::paper001();
    let pattern_text = f
        .opt_str("gop", "a GOP pattern such as \"IBBPBBPBB\"")?
        .map(str::to_string);
    let pattern = match pattern_text {
        None => base.pattern.clone(),
        Some(text) => text
            .parse::<GopPattern>()
            .map_err(|e| f.error("gop", e.to_string()))?,
    };
    f.set("gop", Value::String(pattern.to_string()));
    let frame_rate = f.float_or("frame_rate", 0.0, 1000.0, base.frame_rate)?;
    if frame_rate <= 0.0 {
        return Err(f.error(
            "frame_rate",
            "expected frames per second above 0, at most 1000",
        ));
    }
    f.set("frame_rate", Value::Float(frame_rate));
    let i_size: DataSize = f.unit_or("i_frame", base.i_size)?;
    let p_size: DataSize = f.unit_or("p_frame", base.p_size)?;
    let b_size: DataSize = f.unit_or("b_frame", base.b_size)?;
    let size_noise = f.float_or("size_noise", 0.0, 1.0, base.size_noise)?;
    let default_gops = if size_noise > 0.0 { NOISY_GOPS } else { 1 };
    let gops = f.int_or("gops", 1, 100_000, default_gops)? as usize;
    Ok(MpegTrace::Synthetic {
        gop: SyntheticGop {
            pattern,
            frame_rate,
            i_size,
            p_size,
            b_size,
            size_noise,
        },
        gops,
    })
}
