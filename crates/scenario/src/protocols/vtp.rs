//! A `protocol = "vtp"` flow: VTP with Achieved Rate feedback, Spike loss discrimination on the
//! RTT and the equivalent-window rate control (paper 004; PROTOCOLS.md §5).

use fairstream_core::Bitrate;
use fairstream_proto::ProtocolConfig;
use fairstream_proto::lda::SpikeThresholds;
use fairstream_proto::vtp::VtpConfig;

use super::read_packet_size;
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys only a VTP flow takes (`packet_size` is every protocol's).
pub(crate) const KEYS: &[&str] = &[
    "gamma",
    "sigma",
    "spike_alpha",
    "spike_beta",
    "e_gain",
    "e_max",
    "e_loss_free_periods",
    "rtt_gain",
    "min_period_packets",
    "initial_sampling_period",
    "initial_rtt",
    "initial_rate",
    "max_rate",
    "min_rate_packets",
    "rtt_ratio_bound",
    "no_feedback_periods",
    "resume",
];

/// Reads a VTP flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let d = VtpConfig::default();
    let packet_size = read_packet_size(
        f,
        d.packet_size,
        fairstream_proto::vtp::DATA_HEADERS + 1,
        "a VTP data packet (its IP, UDP, frame and VTP headers and at least one byte)",
    )?;
    let gamma = f.open_fraction_or("gamma", d.gamma)?;
    let sigma = f.float_or("sigma", 0.0, 1.0, d.sigma)?;
    let alpha = f.open_fraction_or("spike_alpha", d.spike.alpha)?;
    let beta = f.open_fraction_or("spike_beta", d.spike.beta)?;
    if beta > alpha {
        return Err(f.error(
            "spike_beta",
            format!("the spike's end point must not be above its start (spike_alpha = {alpha})"),
        ));
    }
    let e_gain = f.open_fraction_or("e_gain", d.e_gain)?;
    let e_max = f.float_or("e_max", 0.0, 0.9, d.e_max)?;
    let e_loss_free_periods = f.bool_or("e_loss_free_periods", d.e_loss_free_periods)?;
    let rtt_gain = f.open_fraction_or("rtt_gain", d.rtt_gain)?;
    let min_period_packets = f.int_or(
        "min_period_packets",
        1,
        1 << 20,
        i64::from(d.min_period_packets),
    )? as u32;
    let initial_sampling_period =
        f.unit_or("initial_sampling_period", d.initial_sampling_period)?;
    let initial_rtt = f.unit_or("initial_rtt", d.initial_rtt)?;
    let initial_rate = f.opt_unit::<Bitrate>("initial_rate")?;
    let max_rate: Bitrate = f.unit_or("max_rate", d.max_rate)?;
    let min_rate_packets = f.float_or("min_rate_packets", 0.0, 1e6, d.min_rate_packets_per_rtt)?;
    if min_rate_packets <= 0.0 {
        return Err(f.error(
            "min_rate_packets",
            "the minimum rate is above 0 packets per RTT",
        ));
    }
    let rtt_ratio_bound = f.float_or("rtt_ratio_bound", 0.0, 0.9, d.rtt_ratio_bound)?;
    let no_feedback_periods = f.int_or(
        "no_feedback_periods",
        1,
        1000,
        i64::from(d.no_feedback_periods),
    )? as u32;
    let resume_at_achieved_rate = f.choice(
        "resume",
        &["achieved-rate", "reduced"],
        if d.resume_at_achieved_rate {
            "achieved-rate"
        } else {
            "reduced"
        },
    )? == "achieved-rate";
    if let Some(r) = initial_rate
        && r > max_rate
    {
        return Err(f.error(
            "initial_rate",
            format!("must not be above max_rate ({max_rate})"),
        ));
    }
    Ok(ProtocolConfig::Vtp(VtpConfig {
        packet_size,
        gamma,
        sigma,
        spike: SpikeThresholds { alpha, beta },
        e_gain,
        e_max,
        e_loss_free_periods,
        rtt_gain,
        min_period_packets,
        initial_sampling_period,
        initial_rtt,
        initial_rate,
        max_rate,
        min_rate_packets_per_rtt: min_rate_packets,
        rtt_ratio_bound,
        no_feedback_periods,
        resume_at_achieved_rate,
    }))
}
