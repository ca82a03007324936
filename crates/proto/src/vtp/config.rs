//! VTP parameters (PROTOCOLS.md §5): every constant of the algorithm with its default and the
//! tag PROTOCOLS.md gives it, and the sanitised form the endpoints compute with.

use fairstream_core::{Bitrate, DataSize, Duration};

use super::VtpData;
use crate::lda::SpikeThresholds;
use crate::udp_headers;

/// Parameters of a VTP flow (sender and receiver).
///
/// Out-of-range values never make an endpoint panic: they are clamped into the range each
/// field documents when the endpoints are built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VtpConfig {
    /// Size of every data packet on the wire (IP + UDP + VTP header + payload); default
    /// 1000 B \[proposed\]. Taken as at least the 40 B of headers and at most 65 535 B (the
    /// largest IPv4 datagram).
    pub packet_size: DataSize,
    /// γ, the rate reduction ratio on congestion: `R = γ·AR·(1 + e)`, held for
    /// `τ = RTT/(2(1 − γ))`; default 0.75 (τ = 2·RTT) \[proposed\]. Clamped to [0.01, 0.99].
    pub gamma: f64,
    /// σ, the receiver's Achieved Rate filter `AR = σ·AR + (1 − σ)/2·(S_k + S_{k−1})`;
    /// default 0.9 \[paper?\]. Clamped to [0, 1].
    pub sigma: f64,
    /// Spike's thresholds on the sender's RTT samples; default α = 1/2, β = 1/3 \[proposed\]
    /// (Cen et al.'s values, PROTOCOLS.md §3; VTP-specific values not found).
    pub spike: SpikeThresholds,
    /// Gain of the wireless loss fraction filter `e = (1 − g)·e + g·loss_frac`; default 0.125
    /// \[proposed filter\]. Clamped to [0, 1].
    pub e_gain: f64,
    /// Upper clamp of e (e is kept in `[0, e_max]`); default 0.5 \[proposed\]. Clamped to [0, 1].
    pub e_max: f64,
    /// Also feed loss-free reports (received in Spike's NORMAL state) to the e filter, as a
    /// loss fraction of 0 (`true`, the default since 2026-11-27). Paper 004 (§3.1) defines e as
    /// "the error rate", by which AR is prorated "plus the fraction corresponding to packet
    /// losses at the exit of the bottleneck due to errors": a rate over every packet, so every
    /// non-congested period counts, lossy or not (the paper's reading). PROTOCOLS.md §5.3
    /// updates e only on reports with losses (`false`), which estimates the loss fraction of
    /// *lossy* periods and over-estimates the error rate when losses are rare (ours, before).
    /// (Through a 2 Mbit/s bottleneck with 2 % random loss behind it, e settles near 0.020 with
    /// `true` and 0.038 with `false`.)
    pub e_loss_free_periods: bool,
    /// Gain of the sender's smoothed RTT, `RTT = RTT + g·(sample − RTT)`; default 1/8
    /// \[proposed\]. Clamped to [0, 1].
    pub rtt_gain: f64,
    /// The receiver closes a sampling period only once it holds at least this many packets,
    /// so that a period lasts at least this many packet times; default 4 \[proposed\].
    /// Taken as at least 1.
    pub min_period_packets: u32,
    /// Receiver's sampling period before the data carries an RTT; default 100 ms \[proposed\].
    pub initial_sampling_period: Duration,
    /// The sender's RTT guess before its first sample (for the minimum and initial rate and
    /// the first hold); default 100 ms \[proposed\].
    pub initial_rtt: Duration,
    /// Rate of the first packets; `None` (default): one packet per `initial_rtt` \[proposed\].
    pub initial_rate: Option<Bitrate>,
    /// Ceiling of the sending rate (counting whole packets on the wire); default 1 Gbit/s.
    /// Taken as at least 1 bit/s.
    pub max_rate: Bitrate,
    /// Floor of the sending rate in packets per smoothed RTT ("1 packet/RTT"); default 1
    /// \[proposed\]. The rate also never falls below 1 bit/s nor exceeds `max_rate`.
    pub min_rate_packets_per_rtt: f64,
    /// Bound b on `RTT_prev/RTT` in the increase `R' = (R + s/RTT)/(2 − RTT_prev/RTT)`: the
    /// ratio is clamped to `[1 − b, 1]`, so the denominator stays in `[1, 1 + b]`: one step
    /// never adds more than `s/RTT` (the paper: R' "is lower than ... the conventional linear
    /// rate increase by 1 packet/RTT") and at most divides the rate by `1 + b`; default 0.5
    /// \[proposed\] (the paper does not bound it). Clamped to [0, 0.9].
    pub rtt_ratio_bound: f64,
    /// Sampling periods without any feedback after which the sender treats the silence as
    /// congestion (`R = γ·R`, then HOLD); default 2 \[proposed\]. Taken as at least 1.
    pub no_feedback_periods: u32,
    /// After a congestion hold, restart from `AR·(1 + e)` (PROTOCOLS.md §5.3, and the area
    /// argument of the paper's Fig. 4, which returns to the link rate C after τ), or, when
    /// false, go on from the reduced rate γ·AR·(1 + e) by the equivalent-window increase (the
    /// paper's text says only that VTP "should then enter congestion avoidance"). Default true
    /// \[proposed\]; docs/VALIDATION.md compares the two beside TCP.
    pub resume_at_achieved_rate: bool,
}

impl Default for VtpConfig {
    fn default() -> Self {
        Self {
            packet_size: DataSize::bytes(1000),
            gamma: 0.75,
            sigma: 0.9,
            spike: SpikeThresholds::default(),
            e_gain: 0.125,
            e_max: 0.5,
            e_loss_free_periods: true,
            rtt_gain: 0.125,
            min_period_packets: 4,
            initial_sampling_period: Duration::from_millis(100),
            initial_rtt: Duration::from_millis(100),
            initial_rate: None,
            max_rate: Bitrate::gbps(1),
            min_rate_packets_per_rtt: 1.0,
            rtt_ratio_bound: 0.5,
            no_feedback_periods: 2,
            resume_at_achieved_rate: true,
        }
    }
}

/// Headers in every data packet: IP + UDP, the frame header and the VTP data header.
pub const DATA_HEADERS: u64 = udp_headers(VtpData::WIRE_LEN);

/// The largest data packet: an IPv4 datagram's 65 535 B.
const MAX_PACKET: u64 = 65_535;

/// `v` clamped to `[lo, hi]`, or `default` when it is not a number.
fn clamp_or(v: f64, lo: f64, hi: f64, default: f64) -> f64 {
    if v.is_nan() { default } else { v.clamp(lo, hi) }
}

/// The configuration in the form the endpoints compute with: every value in range, rates in
/// bytes per second, times in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Params {
    /// Data packet size on the wire, bytes (at least the headers).
    pub(super) size: DataSize,
    /// The same, as a real number of bytes.
    pub(super) size_f: f64,
    pub(super) gamma: f64,
    pub(super) sigma: f64,
    pub(super) e_gain: f64,
    pub(super) e_max: f64,
    pub(super) rtt_gain: f64,
    pub(super) rtt_ratio_bound: f64,
    pub(super) min_rate_packets: f64,
    pub(super) min_period_packets: u32,
    pub(super) no_feedback_periods: u32,
    pub(super) resume_at_achieved_rate: bool,
    /// Receiver's first sampling period (at least 1 ns).
    pub(super) initial_period: Duration,
    /// RTT guess before the first sample, seconds (at least 1 ns).
    pub(super) initial_rtt: f64,
    /// Ceiling of the rate, bytes/s (at least 1 bit/s).
    pub(super) max_rate: f64,
    /// Rate of the first packets, bytes/s (unclamped; the sender clamps it).
    pub(super) initial_rate: f64,
}

/// The smallest rate any VTP sender uses: 1 bit/s, in bytes per second.
pub(super) const FLOOR_RATE: f64 = 1.0 / 8.0;

impl Params {
    /// Sanitises `c`.
    pub(super) fn new(c: &VtpConfig) -> Self {
        let size = DataSize::bytes(c.packet_size.as_bytes().clamp(DATA_HEADERS, MAX_PACKET));
        let size_f = size.as_bytes() as f64;
        let initial_rtt = c.initial_rtt.as_secs_f64().max(1e-9);
        Self {
            size,
            size_f,
            gamma: clamp_or(c.gamma, 0.01, 0.99, 0.75),
            sigma: clamp_or(c.sigma, 0.0, 1.0, 0.9),
            e_gain: clamp_or(c.e_gain, 0.0, 1.0, 0.125),
            e_max: clamp_or(c.e_max, 0.0, 1.0, 0.5),
            rtt_gain: clamp_or(c.rtt_gain, 0.0, 1.0, 0.125),
            rtt_ratio_bound: clamp_or(c.rtt_ratio_bound, 0.0, 0.9, 0.5),
            min_rate_packets: clamp_or(c.min_rate_packets_per_rtt, 0.0, f64::MAX, 1.0),
            min_period_packets: c.min_period_packets.max(1),
            no_feedback_periods: c.no_feedback_periods.max(1),
            resume_at_achieved_rate: c.resume_at_achieved_rate,
            initial_period: c.initial_sampling_period.max(Duration::from_nanos(1)),
            initial_rtt,
            max_rate: c.max_rate.as_bytes_per_sec().max(FLOOR_RATE),
            initial_rate: c
                .initial_rate
                .map_or(size_f / initial_rtt, Bitrate::as_bytes_per_sec),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_tagged_values() {
        let c = VtpConfig::default();
        assert_eq!(c.packet_size, DataSize::bytes(1000));
        assert_eq!(
            (c.gamma, c.sigma, c.e_gain, c.e_max),
            (0.75, 0.9, 0.125, 0.5)
        );
        assert_eq!(c.spike, SpikeThresholds::default());
        assert_eq!(c.rtt_gain, 0.125);
        assert_eq!(c.initial_sampling_period, Duration::from_millis(100));
        let p = Params::new(&c);
        // One 1000-byte packet per 100 ms.
        assert_eq!(p.initial_rate, 10_000.0);
    }

    #[test]
    fn out_of_range_values_are_clamped() {
        let c = VtpConfig {
            packet_size: DataSize::ZERO,
            gamma: 1.5,
            sigma: f64::NAN,
            e_max: -1.0,
            rtt_ratio_bound: 7.0,
            max_rate: Bitrate::ZERO,
            min_period_packets: 0,
            no_feedback_periods: 0,
            initial_rtt: Duration::ZERO,
            initial_sampling_period: Duration::ZERO,
            ..VtpConfig::default()
        };
        let p = Params::new(&c);
        assert_eq!(p.size, DataSize::bytes(DATA_HEADERS));
        let huge = VtpConfig {
            packet_size: DataSize::bytes(u64::MAX),
            ..VtpConfig::default()
        };
        assert_eq!(Params::new(&huge).size, DataSize::bytes(65_535));
        assert_eq!((p.gamma, p.sigma, p.e_max), (0.99, 0.9, 0.0));
        assert_eq!(p.rtt_ratio_bound, 0.9);
        assert_eq!(p.max_rate, FLOOR_RATE);
        assert_eq!((p.min_period_packets, p.no_feedback_periods), (1, 1));
        assert!(p.initial_rtt > 0.0 && p.initial_rate.is_finite());
        assert!(!p.initial_period.is_zero());
    }
}
