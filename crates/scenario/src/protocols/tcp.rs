//! A `protocol = "tcp"` flow: TCP Reno, NewReno or SACK in ns-2 one-way mode with its window
//! control (AIMD, binomial, CUBIC or BBR), options and presets (`ns2`, `modern`, `linux`).

use fairstream_core::Duration;
use fairstream_proto::tcp::options::header_len;
use fairstream_proto::tcp::{TcpConfig, TcpSinkConfig, TcpVariant};
use fairstream_proto::{ProtocolConfig, TcpFlowConfig};
use toml::Value;
use toml::de::DeValue;

use super::read_packet_size;
use super::tcp_control::{self, read_control};
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys only a TCP flow takes (`packet_size` is every protocol's).
pub(crate) const KEYS: &[&str] = &[
    "variant",
    "preset",
    "window",
    "max_cwnd",
    "initial_window",
    "initial_ssthresh",
    "min_rto",
    "max_rto",
    "initial_rto",
    "tick",
    "delayed_ack",
    "packets",
    "syn",
    "limited_transmit",
    "max_burst",
    "timestamps",
    "pacing",
    "prr",
];

/// Every key of a TCP flow, the window control's included.
pub(crate) fn keys() -> Vec<&'static str> {
    [KEYS, tcp_control::CONTROL_KEYS].concat()
}

/// Reads a TCP flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let preset = f.choice("preset", &["ns2", "modern", "linux"], "ns2")?;
    let (base, base_delack) = match preset {
        "modern" => (TcpConfig::default().modern(), None),
        "linux" => (
            TcpConfig::default().linux(),
            TcpSinkConfig::linux().delayed_ack,
        ),
        _ => (TcpConfig::default(), None),
    };
    let variant_name = match base.variant {
        TcpVariant::Sack => "sack",
        TcpVariant::Reno => "reno",
        TcpVariant::NewReno => "newreno",
    };
    let variant = match f.choice("variant", &["newreno", "reno", "sack"], variant_name)? {
        "reno" => TcpVariant::Reno,
        "sack" => TcpVariant::Sack,
        _ => TcpVariant::NewReno,
    };
    let control = read_control(f, warnings, &base.control)?;
    if control.is_bbr() && variant != TcpVariant::Sack {
        return Err(f.error(
            "control",
            "BBR needs SACK (its delivery-rate samples come from the scoreboard): set variant = \"sack\"",
        ));
    }
    let timestamps = f.bool_or("timestamps", base.timestamps)?;
    let header = header_len(timestamps);
    let packet_size = read_packet_size(
        f,
        base.packet_size,
        header + 1,
        if timestamps {
            "a TCP data packet (its 52-byte header with timestamps, and data)"
        } else {
            "a TCP data packet (its 40-byte header and data)"
        },
    )?;
    let pacing = f.bool_or("pacing", base.pacing || control.is_bbr())?;
    if control.is_bbr() && !pacing {
        return Err(f.error("pacing", "BBR always paces: remove `pacing` or set it true"));
    }
    let prr = f.bool_or("prr", base.prr && variant == TcpVariant::Sack)?;
    if prr && variant != TcpVariant::Sack {
        return Err(f.error(
            "prr",
            "PRR sets the window of SACK recovery: set variant = \"sack\"",
        ));
    }
    let window = f.int_or("window", 1, 1 << 30, i64::from(base.window))? as u32;
    let max_cwnd = f.opt_int("max_cwnd", 1, 1 << 30)?.map(|n| n as u32);
    let initial_window =
        f.int_or("initial_window", 1, 1 << 20, i64::from(base.initial_window))? as u32;
    let initial_ssthresh = f.opt_int("initial_ssthresh", 2, 1 << 30)?.map(|n| n as u32);
    let min_rto = f.unit_or("min_rto", base.min_rto)?;
    let max_rto = f.unit_or("max_rto", base.max_rto)?;
    let initial_rto = f.unit_or("initial_rto", base.initial_rto)?;
    let tick = f.unit_or("tick", base.tick)?;
    if tick.is_zero() {
        return Err(f.error("tick", "the timer tick must be longer than zero"));
    }
    if max_rto < min_rto {
        return Err(f.error("max_rto", format!("must not be below min_rto ({min_rto})")));
    }
    let packets = f.opt_int("packets", 1, i64::MAX)?.map(|n| n as u64);
    let syn = f.bool_or("syn", base.syn)?;
    let limited_transmit = f.bool_or("limited_transmit", base.limited_transmit)?;
    let max_burst = f.int_or("max_burst", 0, 1 << 20, i64::from(base.max_burst))? as u32;
    let delayed_ack = match f.raw("delayed_ack").map(|v| v.get_ref()) {
        None if base_delack.is_some() => f.opt_unit("delayed_ack")?.or(base_delack),
        None | Some(DeValue::Boolean(false)) => {
            f.set("delayed_ack", Value::Boolean(false));
            None
        }
        Some(DeValue::Boolean(true)) => {
            f.set("delayed_ack", Value::String("100ms".into()));
            Some(Duration::from_millis(100))
        }
        Some(_) => f.opt_unit("delayed_ack")?,
    };
    if let (None, Some(d)) = (f.raw("delayed_ack"), delayed_ack) {
        f.set("delayed_ack", Value::String(d.to_string()));
    }
    let config = TcpConfig {
        variant,
        control,
        packet_size,
        timestamps,
        pacing,
        prr,
        window,
        max_cwnd,
        initial_window,
        initial_ssthresh,
        syn,
        limited_transmit,
        max_burst,
        tick,
        min_rto,
        max_rto,
        initial_rto,
        packets,
        // The FTP or finite source; the send buffer is for applications (the streamer).
        send_buffer: None,
    };
    Ok(ProtocolConfig::Tcp(TcpFlowConfig {
        sender: config,
        sink: TcpSinkConfig::for_sender(&config, delayed_ack),
    }))
}
