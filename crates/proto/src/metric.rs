//! Typed metric records that endpoints report, and the sinks that collect them.

use fairstream_core::{Bitrate, Duration, Instant};

/// One observation of a protocol variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// Congestion window, packets.
    Cwnd(f64),
    /// Slow-start threshold, packets.
    Ssthresh(f64),
    /// A round-trip-time sample.
    RttSample(Duration),
    /// Smoothed round-trip time.
    Srtt(Duration),
    /// Retransmission timeout now in force.
    Rto(Duration),
    /// Sending rate chosen by a rate-based protocol.
    Rate(Bitrate),
    /// A retransmission timeout fired.
    Timeout,
    /// Fast retransmit / recovery entered.
    FastRetransmit,
}

impl Metric {
    /// A short stable name for tables: `cwnd`, `ssthresh`, `rtt`, `srtt`, `rto`, `rate`, …
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Cwnd(_) => "cwnd",
            Self::Ssthresh(_) => "ssthresh",
            Self::RttSample(_) => "rtt",
            Self::Srtt(_) => "srtt",
            Self::Rto(_) => "rto",
            Self::Rate(_) => "rate",
            Self::Timeout => "timeout",
            Self::FastRetransmit => "fast_retransmit",
        }
    }

    /// The value as a real number in the table's unit (packets, seconds, bit/s, or 1 for events).
    pub fn value(&self) -> f64 {
        match *self {
            Self::Cwnd(v) | Self::Ssthresh(v) => v,
            Self::RttSample(d) | Self::Srtt(d) | Self::Rto(d) => d.as_secs_f64(),
            Self::Rate(r) => r.as_bps_f64(),
            Self::Timeout | Self::FastRetransmit => 1.0,
        }
    }
}

/// Where endpoints report their [`Metric`]s.
pub trait MetricSink {
    /// Records `metric` observed at `now`.
    fn record(&mut self, now: Instant, metric: Metric);
}

/// A sink that drops every record.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl MetricSink for NullSink {
    fn record(&mut self, _now: Instant, _metric: Metric) {}
}

/// A sink that keeps every record in order (for tests and small runs).
#[derive(Debug, Default, Clone)]
pub struct VecSink(pub Vec<(Instant, Metric)>);

impl MetricSink for VecSink {
    fn record(&mut self, now: Instant, metric: Metric) {
        self.0.push((now, metric));
    }
}
