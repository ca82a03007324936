//! A `protocol = "rap"` flow: RAP's rate-based AIMD with per-packet ACKs (Rejaie, Handley,
//! Estrin 1999; ns-2's `Agent/RAP`).

use fairstream_core::{Bitrate, Duration};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::rap::RapConfig;

use super::read_packet_size;
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys only a RAP flow takes (`packet_size` is every protocol's).
pub(crate) const KEYS: &[&str] = &[
    "initial_interval",
    "initial_rtt",
    "initial_timeout",
    "alpha",
    "beta",
    "rtt_gain",
    "timeout_srtt_factor",
    "timeout_deviation_factor",
    "min_send_fraction",
    "fine_grain",
    "fine_grain_short_gain",
    "fine_grain_long_gain",
    "max_interval",
    "max_rate",
];

/// Reads a duration `key` above zero, with a default.
fn positive_duration(f: &mut Section<'_, '_>, key: &str, default: Duration) -> Result<Duration> {
    let d: Duration = f.unit_or(key, default)?;
    if d.is_zero() {
        return Err(f.error(key, "expected a duration above zero, such as \"100ms\""));
    }
    Ok(d)
}

/// Reads a RAP flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let d = RapConfig::default();
    let packet_size = read_packet_size(
        f,
        d.packet_size,
        fairstream_proto::rap::DATA_HEADERS + 1,
        "a RAP data packet (its IP, UDP, frame and RAP headers and at least one byte)",
    )?;
    let initial_interval = positive_duration(f, "initial_interval", d.initial_interval)?;
    let initial_rtt = positive_duration(f, "initial_rtt", d.initial_rtt)?;
    let initial_timeout = positive_duration(f, "initial_timeout", d.initial_timeout)?;
    let alpha = f.float_or("alpha", 1e-6, 1000.0, d.alpha)?;
    let beta = f.open_fraction_or("beta", d.beta)?;
    let rtt_gain = f.float_or("rtt_gain", 1e-3, 1.0, d.rtt_gain)?;
    let timeout_srtt_factor =
        f.float_or("timeout_srtt_factor", 1.0, 1000.0, d.timeout_srtt_factor)?;
    let timeout_deviation_factor = f.float_or(
        "timeout_deviation_factor",
        0.0,
        1000.0,
        d.timeout_deviation_factor,
    )?;
    let min_send_fraction = f.float_or("min_send_fraction", 0.0, 1.0, d.min_send_fraction)?;
    let fine_grain = f.bool_or("fine_grain", d.fine_grain)?;
    let fine_grain_short_gain =
        f.float_or("fine_grain_short_gain", 0.0, 1.0, d.fine_grain_short_gain)?;
    let fine_grain_long_gain =
        f.float_or("fine_grain_long_gain", 0.0, 1.0, d.fine_grain_long_gain)?;
    let max_interval: Duration = f.unit_or("max_interval", d.max_interval)?;
    if max_interval < Duration::from_millis(1) {
        return Err(f.error("max_interval", "expected at least \"1ms\""));
    }
    let max_rate = f.opt_unit::<Bitrate>("max_rate")?;
    if max_rate.is_some_and(Bitrate::is_zero) {
        return Err(f.error("max_rate", "expected a rate above zero, such as \"10Mbps\""));
    }
    Ok(ProtocolConfig::Rap(RapConfig {
        packet_size,
        initial_interval,
        initial_rtt,
        initial_timeout,
        alpha,
        beta,
        rtt_gain,
        timeout_srtt_factor,
        timeout_deviation_factor,
        min_send_fraction,
        fine_grain,
        fine_grain_short_gain,
        fine_grain_long_gain,
        max_interval,
        max_rate,
    }))
}
