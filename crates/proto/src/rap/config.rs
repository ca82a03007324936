//! RAP's parameters, each with its default and where the default comes from: \[paper\] Rejaie,
//! Handley and Estrin, "RAP: An End-to-end Rate-based Congestion Control Mechanism for Realtime
//! Streams in the Internet" (INFOCOM 1999); \[code\] ns-2.35's `Agent/RAP` (`rap/rap.cc` and
//! `tcl/lib/ns-default.tcl`); \[proposed\] our choice where neither says.

use fairstream_core::{Bitrate, DataSize, Duration};

use crate::udp_headers;

use super::RapData;

/// Headers in every data packet: IP + UDP, the frame header and the RAP data header.
pub const DATA_HEADERS: u64 = udp_headers(RapData::WIRE_LEN);

/// A RAP flow: a greedy application whose packets a rate-based AIMD control paces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RapConfig {
    /// Size of a data packet on the wire; default 1000 B \[proposed\] (ns-2's 512 B is
    /// `packetSize_`; 1000 B is the size every other flow here defaults to).
    pub packet_size: DataSize,
    /// The inter-packet gap before the first ACK; default 2 s \[code\] (`ipg_`). The first ACK
    /// sets the gap to the smoothed RTT (one packet per RTT), as ns-2 does.
    pub initial_interval: Duration,
    /// The smoothed RTT before the first sample, which paces the first increase steps; default
    /// 2 s \[code\] (`srtt_`).
    pub initial_rtt: Duration,
    /// The loss timeout before the first sample; default 2 s \[code\] (`timeout_`).
    pub initial_timeout: Duration,
    /// α: packets per RTT the rate grows by each RTT without loss,
    /// `IPG ← IPG·SRTT / (α·IPG + SRTT)`; default 1 \[paper\] (`alpha_`). In [10⁻⁶, 1000].
    pub alpha: f64,
    /// β: the factor of the rate at a loss, `IPG ← IPG / β`; default 0.5 \[paper\] (`beta_`).
    /// In (0, 1).
    pub beta: f64,
    /// δ: the gain of the RTT filter, `SRTT ← SRTT + δ·(sample − SRTT)` and likewise the mean
    /// deviation; default 0.5 \[code\] (`delta_`). In (0, 1].
    pub rtt_gain: f64,
    /// μ of the loss timeout `μ·SRTT + φ·deviation`; default 1.2 \[code\] (`mu_`).
    pub timeout_srtt_factor: f64,
    /// φ of the loss timeout; default 4 \[code\] (`phi_`).
    pub timeout_deviation_factor: f64,
    /// The fraction of its allowance the application must have sent in the last RTT for the
    /// rate to grow; default 0.5 \[code\] (`dpthresh_` = 50 %). The source here is greedy, so
    /// it falls short only when losses held packets back.
    pub min_send_fraction: f64,
    /// Fine-grain adaptation: pace by `IPG·FRTT/XRTT`, a short-term RTT over a long-term one,
    /// so that a queue building up slows the flow between losses \[paper\]; default off
    /// \[code\] (`useFineGrain_` = 0).
    pub fine_grain: bool,
    /// Gain of the short-term RTT FRTT; default 0.9 \[code\] (`kfrtt_`).
    pub fine_grain_short_gain: f64,
    /// Gain of the long-term RTT XRTT; default 0.01 \[code\] (`kxrtt_`).
    pub fine_grain_long_gain: f64,
    /// The longest inter-packet gap, which repeated losses without any ACK (a dead path) grow
    /// the gap to; default 64 s \[proposed\] (ns-2 has no bound; TFRC's t_mbi is 64 s).
    pub max_interval: Duration,
    /// The highest rate (whole packets on the wire), if any; default none \[proposed\]. The gap
    /// is never below 1 µs either way.
    pub max_rate: Option<Bitrate>,
}

impl Default for RapConfig {
    fn default() -> Self {
        Self {
            packet_size: DataSize::bytes(1000),
            initial_interval: Duration::from_secs(2),
            initial_rtt: Duration::from_secs(2),
            initial_timeout: Duration::from_secs(2),
            alpha: 1.0,
            beta: 0.5,
            rtt_gain: 0.5,
            timeout_srtt_factor: 1.2,
            timeout_deviation_factor: 4.0,
            min_send_fraction: 0.5,
            fine_grain: false,
            fine_grain_short_gain: 0.9,
            fine_grain_long_gain: 0.01,
            max_interval: Duration::from_secs(64),
            max_rate: None,
        }
    }
}

/// The shortest RTT the rate control works with, so that a zero sample neither stalls the
/// increase timer nor zeroes the gap.
pub(super) const MIN_RTT_SECS: f64 = 1e-5;

/// The shortest inter-packet gap whatever the configuration says, seconds: 1 µs \[proposed\]
/// (12 Gbit/s of 1500-byte packets), so that a zero gap cannot flood a run.
pub(super) const MIN_INTERVAL_SECS: f64 = 1e-6;

/// The configuration's values clamped into their ranges, in seconds, so that no input makes
/// the sender divide by zero or schedule a timer at `now` forever.
#[derive(Clone, Copy, Debug)]
pub(super) struct Params {
    pub(super) size: DataSize,
    pub(super) alpha: f64,
    pub(super) beta: f64,
    pub(super) rtt_gain: f64,
    pub(super) mu: f64,
    pub(super) phi: f64,
    pub(super) min_send_fraction: f64,
    pub(super) kfrtt: f64,
    pub(super) kxrtt: f64,
    /// The gap's bounds, seconds.
    pub(super) min_ipg: f64,
    pub(super) max_ipg: f64,
}

impl Params {
    pub(super) fn new(c: &RapConfig) -> Self {
        let size = DataSize::bytes(c.packet_size.as_bytes().max(DATA_HEADERS + 1));
        let max_ipg = c.max_interval.as_secs_f64().max(MIN_INTERVAL_SECS);
        let min_ipg = c
            .max_rate
            .filter(|r| !r.is_zero())
            .map_or(MIN_INTERVAL_SECS, |r| r.transmit_time(size).as_secs_f64())
            .clamp(MIN_INTERVAL_SECS, max_ipg);
        let or = |v: f64, lo: f64, hi: f64, d: f64| if v.is_nan() { d } else { v.clamp(lo, hi) };
        Self {
            size,
            alpha: or(c.alpha, 1e-6, 1e3, 1.0),
            beta: or(c.beta, 1e-3, 0.999, 0.5),
            rtt_gain: or(c.rtt_gain, 1e-3, 1.0, 0.5),
            mu: or(c.timeout_srtt_factor, 1.0, 1e3, 1.2),
            phi: or(c.timeout_deviation_factor, 0.0, 1e3, 4.0),
            min_send_fraction: or(c.min_send_fraction, 0.0, 1.0, 0.5),
            kfrtt: or(c.fine_grain_short_gain, 0.0, 1.0, 0.9),
            kxrtt: or(c.fine_grain_long_gain, 0.0, 1.0, 0.01),
            min_ipg,
            max_ipg,
        }
    }

    /// `ipg` within the bounds.
    pub(super) fn bound(&self, ipg: f64) -> f64 {
        if ipg.is_nan() {
            self.max_ipg
        } else {
            ipg.clamp(self.min_ipg, self.max_ipg)
        }
    }
}
