//! A `protocol = "surestream"` flow: a SureStream-like streamer (paper 000) over UDP or TCP, a
//! clip encoded at several levels played out by a buffering player.

use std::sync::Arc;

use fairstream_core::{Bitrate, DataSize, Duration};
use fairstream_media::{Encoding, Level};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::surestream::config::UDP_DATA_HEADERS;
use fairstream_proto::surestream::{SurestreamConfig, TcpRule, Transport, UdpRule};
use toml::Value;

use super::read_packet_size;
use super::trace_file::read_trace;
use crate::error::ScenarioError;
use crate::reader::{Result, Section, a, number};

/// The keys only a streamer flow takes (`packet_size` is every protocol's).
pub(crate) const KEYS: &[&str] = &[
    "transport",
    "levels",
    "frame_rate",
    "clip_length",
    "speedup",
    "prebuffer",
    "rebuffer",
    "max_stall",
    "send_buffer",
    "report_interval",
    "initial_level",
    "loss_down",
    "down_hold",
    "up_hold",
    "feedback_timeout",
    "lag_down",
    "level",
];

/// Reads a streamer flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let d = SurestreamConfig::default();
    let transport = match f.choice("transport", &["udp", "tcp"], "udp")? {
        "tcp" => Transport::Tcp,
        _ => Transport::Udp,
    };
    let encoding = match read_trace_levels(f, transport)? {
        Some(encoding) => encoding,
        None => {
            let rates = read_levels(f)?;
            let frame_rate = f.float_or(
                "frame_rate",
                0.0,
                1000.0,
                SurestreamConfig::DEFAULT_FRAME_RATE,
            )?;
            if frame_rate <= 0.0 {
                return Err(f.error(
                    "frame_rate",
                    "expected frames per second above 0, at most 1000",
                ));
            }
            f.set("frame_rate", Value::Float(frame_rate));
            SurestreamConfig::synthetic_encoding(&rates, frame_rate)
                .map_err(|e| f.error("levels", e.to_string()))?
        }
    };
    let rates: Vec<Bitrate> = encoding.levels().iter().map(|l| l.bitrate).collect();
    let clip_length: Duration = f.unit_or("clip_length", d.clip_length)?;
    if clip_length.is_zero() {
        return Err(f.error("clip_length", "must be longer than zero"));
    }
    let speedup = f.float_or("speedup", 0.0, 1000.0, d.speedup)?;
    if speedup < 1.0 {
        return Err(f.error(
            "speedup",
            format!(
                "{speedup} would send slower than the clip plays; expected a number from 1 to 1000"
            ),
        ));
    }
    f.set("speedup", Value::Float(speedup));
    let prebuffer: Duration = f.unit_or("prebuffer", d.prebuffer)?;
    let rebuffer: Duration = f.unit_or("rebuffer", d.rebuffer)?;
    let max_stall: Duration = f.unit_or("max_stall", d.max_stall)?;
    let headers = match transport {
        Transport::Udp => UDP_DATA_HEADERS,
        Transport::Tcp => fairstream_proto::IP_TCP_HEADER,
    };
    let packet_size = read_packet_size(
        f,
        d.packet_size,
        headers + 1,
        "a streamer packet (its headers and at least one byte)",
    )?;
    // Each transport reads its own rule's keys (and only TCP a send buffer): the other's would
    // be ignored in silence, and would not belong in the resolved scenario.
    const UDP_ONLY: &[&str] = &["loss_down", "down_hold", "feedback_timeout"];
    const TCP_ONLY: &[&str] = &["send_buffer", "lag_down"];
    let tcp = matches!(transport, Transport::Tcp);
    if tcp {
        f.none_of(UDP_ONLY, "a streamer over TCP (a UDP one's rule)")?;
    } else {
        f.none_of(TCP_ONLY, "a streamer over UDP (a TCP one's)")?;
    }
    let send_buffer: DataSize = if tcp {
        f.unit_or("send_buffer", d.send_buffer)?
    } else {
        d.send_buffer
    };
    if send_buffer.as_bytes() == 0 {
        return Err(f.error("send_buffer", "must hold at least one byte"));
    }
    let report_interval: Duration = f.unit_or("report_interval", d.report_interval)?;
    if report_interval.is_zero() {
        return Err(f.error("report_interval", "must be longer than zero"));
    }
    let top = rates.len() as i64 - 1;
    let initial_level = f.int_or("initial_level", 0, top, top)? as usize;
    let up_hold = f.unit_or("up_hold", d.udp.up_hold)?;
    let udp = if tcp {
        UdpRule { up_hold, ..d.udp }
    } else {
        let udp = UdpRule {
            loss_down: f.float_or("loss_down", 0.0, 1.0, d.udp.loss_down)?,
            down_hold: f.unit_or("down_hold", d.udp.down_hold)?,
            up_hold,
            feedback_timeout: f.unit_or("feedback_timeout", d.udp.feedback_timeout)?,
        };
        if udp.feedback_timeout.is_zero() {
            return Err(f.error("feedback_timeout", "must be longer than zero"));
        }
        udp
    };
    let tcp_rule = TcpRule {
        lag_down: if tcp {
            f.unit_or("lag_down", d.tcp_rule.lag_down)?
        } else {
            d.tcp_rule.lag_down
        },
        up_hold,
    };
    Ok(ProtocolConfig::Surestream(SurestreamConfig {
        transport,
        encoding: Arc::new(encoding),
        clip_length,
        speedup,
        prebuffer,
        rebuffer,
        max_stall,
        packet_size,
        send_buffer,
        report_interval,
        initial_level: Some(initial_level),
        udp,
        tcp_rule,
        ..d
    }))
}

/// `[[flow.level]]`: each level a frame trace (`trace`, as `mpegapp` reads it) and an optional
/// nominal `rate` (the trace's mean rate if absent), lowest rate first; `None` when the flow
/// has no such tables (its levels are then synthetic, from `levels`). Every level must have the
/// frames of level 0, of the same types (encodings of one clip with one GOP structure): the
/// server over UDP switches level at I frames (so its levels need one, when there are several)
/// and the player decodes with level 0's structure.
fn read_trace_levels(f: &mut Section<'_, '_>, transport: Transport) -> Result<Option<Encoding>> {
    let tables = f.tables("level", &["trace", "rate"])?;
    if tables.is_empty() {
        return Ok(None);
    }
    for other in ["levels", "frame_rate"] {
        if f.raw(other).is_some() {
            return Err(f.error(
                other,
                "levels read from traces ([[flow.level]]) take their rates and frame timing \
                 from the traces; give either `levels` and `frame_rate` or [[flow.level]] tables",
            ));
        }
    }
    let count = tables.len();
    let mut levels: Vec<Level> = Vec::with_capacity(count);
    let mut resolved = Vec::with_capacity(count);
    for mut t in tables {
        let Some(trace) = read_trace(&mut t, "trace")? else {
            return Err(t.error(
                "trace",
                "missing; expected a CSV trace file (\"clip.csv\") or a video file \
                 ({ video = \"clip.mp4\" })",
            ));
        };
        let switches_at_i = matches!(transport, Transport::Udp) && count > 1;
        if levels.is_empty() && switches_at_i && !trace.has_i_frame() {
            return Err(t.error(
                "trace",
                "the trace has no I frame; the server over UDP switches level only at an I \
                 frame, so it would never leave its first level (each GOP starts with an I \
                 frame)",
            ));
        }
        if let Some(first) = levels.first() {
            let same_types = first.trace.kinds().eq(trace.kinds());
            if !same_types {
                return Err(t.error(
                    "trace",
                    format!(
                        "{} frames whose types differ from the first level's {} frames; every \
                         level is the same clip with the same GOP structure",
                        trace.len(),
                        first.trace.len()
                    ),
                ));
            }
        }
        let rate: Bitrate = t.unit_or("rate", trace.mean_rate())?;
        if rate.is_zero() {
            return Err(t.error("rate", "a level's rate is above 0"));
        }
        levels.push(Level {
            bitrate: rate,
            trace,
        });
        resolved.push(Value::Table(t.take_resolved()));
    }
    f.set("level", Value::Array(resolved));
    Encoding::new(levels)
        .map(Some)
        .map_err(|e| f.error("level", e.to_string()))
}

/// `levels`: the level rates, lowest first, each a number of kbps or a rate with its unit.
fn read_levels(f: &mut Section<'_, '_>) -> Result<Vec<Bitrate>> {
    let field = f.field("levels");
    let expected = "a list of rates in kbps, lowest first, such as [20, 45, 100, 225, 450]";
    let rates: Vec<Bitrate> = match f.opt_array("levels")? {
        None => SurestreamConfig::DEFAULT_LEVELS_KBPS
            .iter()
            .map(|&k| Bitrate::kbps(k))
            .collect(),
        Some(items) => {
            let mut v = Vec::new();
            for item in items.iter() {
                let rate = match item.get_ref() {
                    toml::de::DeValue::String(s) => {
                        s.parse::<Bitrate>()
                            .map_err(|e: fairstream_core::UnitError| {
                                f.src.error(item.span(), &field, e.to_string())
                            })?
                    }
                    other => match number(other) {
                        Some(k) if k.is_finite() && k > 0.0 => Bitrate::from_bps_f64(k * 1000.0),
                        Some(k) => {
                            return Err(f.src.error(
                                item.span(),
                                &field,
                                format!("{k} kbps is not a rate above 0; expected {expected}"),
                            ));
                        }
                        None => {
                            return Err(f.src.error(
                                item.span(),
                                &field,
                                format!("expected {expected}, found {}", a(other.type_str())),
                            ));
                        }
                    },
                };
                if rate.is_zero() {
                    return Err(f
                        .src
                        .error(item.span(), &field, "a level's rate is above 0"));
                }
                if let Some(&prev) = v.last()
                    && rate <= prev
                {
                    return Err(f.src.error(
                        item.span(),
                        &field,
                        format!(
                            "{rate} is not above the level before it ({prev}); expected {expected}"
                        ),
                    ));
                }
                v.push(rate);
            }
            v
        }
    };
    if rates.is_empty() {
        return Err(f.error("levels", format!("no levels; expected {expected}")));
    }
    f.set(
        "levels",
        Value::Array(rates.iter().map(|r| Value::String(r.to_string())).collect()),
    );
    Ok(rates)
}
