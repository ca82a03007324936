//! The metrics TCP's sender records (besides the RTT samples and the smoothed RTT, which
//! `crate::metric` declares for every protocol).

use crate::metric::MetricKind;

/// The congestion window.
pub static CWND: MetricKind = MetricKind::new("cwnd", "packets", "the congestion window");

/// The slow-start threshold.
pub static SSTHRESH: MetricKind =
    MetricKind::new("ssthresh", "packets", "the slow-start threshold");

/// The retransmission timeout in force.
pub static RTO: MetricKind =
    MetricKind::new("rto", "seconds", "the retransmission timeout in force");

/// A retransmission timeout fired.
pub static TIMEOUT: MetricKind =
    MetricKind::new("timeout", "1 per event", "a retransmission timeout fired");

/// Fast retransmit and recovery entered.
pub static FAST_RETRANSMIT: MetricKind = MetricKind::new(
    "fast_retransmit",
    "1 per event",
    "fast retransmit and recovery entered",
);

/// The congestion window as a loss is detected, before the sender reacts: recorded just before
/// each `fast_retransmit` and `timeout`, so a window at loss needs no record of every change.
pub static LOSS_WINDOW: MetricKind = MetricKind::new(
    "loss_window",
    "packets",
    "the congestion window as a fast retransmit or timeout began, before the sender reacted",
);

/// The rate a paced sender spaces its packets at.
pub static PACING_RATE: MetricKind = MetricKind::new(
    "pacing_rate",
    "bit/s",
    "the rate a paced sender spaces its packets at, at each change",
);

/// BBR's mode.
pub static BBR_MODE: MetricKind = MetricKind::new(
    "bbr_mode",
    "mode (0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT)",
    "BBR's mode, at each change",
);

/// BBR's bottleneck-bandwidth estimate.
pub static BANDWIDTH: MetricKind = MetricKind::new(
    "bandwidth",
    "bit/s",
    "BBR's bottleneck-bandwidth estimate (its max filter of delivery rates), at each change",
);

/// What the TCP endpoints record.
pub static METRICS: &[&MetricKind] = &[
    &CWND,
    &SSTHRESH,
    &crate::metric::RTT,
    &crate::metric::SRTT,
    &RTO,
    &TIMEOUT,
    &FAST_RETRANSMIT,
    &LOSS_WINDOW,
    &PACING_RATE,
    &BBR_MODE,
    &BANDWIDTH,
];
