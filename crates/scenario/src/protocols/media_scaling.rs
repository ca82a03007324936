//! The keys the two media-scaling applications share (`protocol = "mmapp"` and
//! `"mpegapp"`; paper 001, PROTOCOLS.md §6): the receiver's scaling rule, the sender's
//! feedback timeout and the receiver's player.

use fairstream_core::Duration;
use fairstream_proto::media_scaling::ScalingConfig;

use crate::reader::{Result, Section};

/// The keys this reader owns.
pub(crate) const SCALING_KEYS: &[&str] = &[
    "initial_scale",
    "toi_alpha",
    "max_interval",
    "initial_rtt",
    "rtt_gain",
    "one_decrease_per_rtt",
    "feedback_timeout_rtts",
    "min_feedback_timeout",
    "prebuffer",
    "rebuffer",
    "max_stall",
];

/// Reads the scaling rule's parameters.
pub(crate) fn read_scaling(f: &mut Section<'_, '_>) -> Result<ScalingConfig> {
    let d = ScalingConfig::default();
    let initial_scale = f.int_or("initial_scale", 0, 4, i64::from(d.initial_scale))? as u8;
    let alpha = f.open_fraction_or("toi_alpha", d.alpha)?;
    let max_interval: Option<Duration> = f.opt_unit("max_interval")?;
    if max_interval.is_some_and(Duration::is_zero) {
        return Err(f.error("max_interval", "must be longer than zero"));
    }
    let initial_rtt: Duration = f.unit_or("initial_rtt", d.initial_rtt)?;
    if initial_rtt.is_zero() {
        return Err(f.error("initial_rtt", "must be longer than zero"));
    }
    let rtt_gain = f.float_or("rtt_gain", 0.0, 1.0, d.rtt_gain)?;
    if rtt_gain <= 0.0 {
        return Err(f.error(
            "rtt_gain",
            "0 would never move the RTT from its first sample; expected a number above 0, at most 1",
        ));
    }
    let one_decrease_per_rtt = f.bool_or("one_decrease_per_rtt", d.one_decrease_per_rtt)?;
    let feedback_timeout_rtts =
        f.float_or("feedback_timeout_rtts", 0.0, 1e6, d.feedback_timeout_rtts)?;
    let min_feedback_timeout: Duration =
        f.unit_or("min_feedback_timeout", d.min_feedback_timeout)?;
    let prebuffer: Duration = f.unit_or("prebuffer", d.prebuffer)?;
    let rebuffer: Duration = f.unit_or("rebuffer", d.rebuffer)?;
    let max_stall: Duration = f.unit_or("max_stall", d.max_stall)?;
    Ok(ScalingConfig {
        initial_scale,
        alpha,
        max_interval,
        initial_rtt,
        rtt_gain,
        one_decrease_per_rtt,
        feedback_timeout_rtts,
        min_feedback_timeout,
        prebuffer,
        rebuffer,
        max_stall,
    })
}
