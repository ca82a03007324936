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
    /// Receive rate a rate-based sender was last told of (TFRC's X_recv).
    ReceiveRate(Bitrate),
    /// Rate the throughput equation allows (TFRC's X_Bps).
    EquationRate(Bitrate),
    /// Loss event rate p (reported by the receiver, or used by the sender).
    LossEventRate(f64),
    /// VTP's Achieved Rate, as the sender last heard it.
    AchievedRate(Bitrate),
    /// Packets a loss discrimination algorithm classed as congestion losses in one episode.
    CongestionLoss(u32),
    /// Packets a loss discrimination algorithm classed as wireless losses in one episode.
    WirelessLoss(u32),
    /// Whether a Spike detector is in its spike (congestion) state: 1 or 0.
    Spike(bool),
    /// A wireless loss fraction estimate (VTP's e).
    WirelessLossEstimate(f64),
    /// MULTFRC's real-valued connection target n.
    ConnectionTarget(f64),
    /// Connections open (MULTFRC's N).
    Connections(u32),
    /// The media scale a media-scaling sender uses now (0 to 4).
    Scale(u8),
    /// The media scale a media-scaling receiver decided (0 to 4).
    ReceiverScale(u8),
    /// Frames a media sender has sent so far (cumulative).
    FramesSent(u64),
    /// A media-scaling receiver heard nothing for its timeout TOI.
    ScaleTimeout,
    /// A media-scaling sender heard no report for its feedback timeout.
    FeedbackTimeout,
    /// The encoded level a multi-rate media server sends (0: the lowest).
    Level(u8),
    /// The nominal encoded rate of the level a media server sends.
    EncodedRate(Bitrate),
    /// Frames a media player received whole so far (cumulative; late ones included).
    FramesDelivered(u64),
    /// Frames a media player could decode at their playout turn so far (cumulative).
    FramesDecodable(u64),
    /// Frames that reached a media player after their playout turn so far (cumulative).
    FramesLate(u64),
    /// Stalls a media player's playout has had so far (cumulative).
    Stalls(u64),
    /// Time a media player's playout has been stalled so far (cumulative).
    StallTime(Duration),
    /// From a media player's start to its first frame played.
    StartupDelay(Duration),
    /// A media player's RFC 3550 inter-arrival jitter of frames.
    Jitter(Duration),
    /// Media a player holds ahead of its playout point.
    Buffered(Duration),
    /// An ABR source's allowed cell rate (cells × 53 bytes per second).
    Acr(Bitrate),
    /// The explicit rate a backward RM cell brought back to an ABR source.
    ExplicitRate(Bitrate),
    /// PDUs an ABR source discarded because its buffer was full (cumulative).
    SourceDiscards(u64),
    /// The rate a paced TCP sender spaces its packets at.
    PacingRate(Bitrate),
    /// BBR's mode: 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT.
    BbrMode(u8),
    /// BBR's bottleneck-bandwidth estimate.
    Bandwidth(Bitrate),
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
            Self::ReceiveRate(_) => "x_recv",
            Self::EquationRate(_) => "x_equation",
            Self::LossEventRate(_) => "p",
            Self::AchievedRate(_) => "achieved_rate",
            Self::CongestionLoss(_) => "congestion_loss",
            Self::WirelessLoss(_) => "wireless_loss",
            Self::Spike(_) => "spike",
            Self::WirelessLossEstimate(_) => "wireless_loss_estimate",
            Self::ConnectionTarget(_) => "n",
            Self::Connections(_) => "connections",
            Self::Scale(_) => "scale",
            Self::ReceiverScale(_) => "receiver_scale",
            Self::FramesSent(_) => "frames_sent",
            Self::ScaleTimeout => "scale_timeout",
            Self::FeedbackTimeout => "feedback_timeout",
            Self::Level(_) => "level",
            Self::EncodedRate(_) => "encoded_rate",
            Self::FramesDelivered(_) => "frames_delivered",
            Self::FramesDecodable(_) => "frames_decodable",
            Self::FramesLate(_) => "frames_late",
            Self::Stalls(_) => "stalls",
            Self::StallTime(_) => "stall_time",
            Self::StartupDelay(_) => "startup_delay",
            Self::Jitter(_) => "jitter",
            Self::Buffered(_) => "buffered",
            Self::Acr(_) => "acr",
            Self::ExplicitRate(_) => "er",
            Self::SourceDiscards(_) => "source_discards",
            Self::PacingRate(_) => "pacing_rate",
            Self::BbrMode(_) => "bbr_mode",
            Self::Bandwidth(_) => "bandwidth",
        }
    }

    /// The value as a real number in the table's unit (packets, seconds, bit/s, a fraction, a
    /// count, 0/1 for a state, or 1 for events).
    pub fn value(&self) -> f64 {
        match *self {
            Self::Cwnd(v) | Self::Ssthresh(v) => v,
            Self::RttSample(d)
            | Self::Srtt(d)
            | Self::Rto(d)
            | Self::StallTime(d)
            | Self::StartupDelay(d)
            | Self::Jitter(d)
            | Self::Buffered(d) => d.as_secs_f64(),
            Self::Rate(r)
            | Self::ReceiveRate(r)
            | Self::EquationRate(r)
            | Self::AchievedRate(r)
            | Self::EncodedRate(r)
            | Self::Acr(r)
            | Self::ExplicitRate(r)
            | Self::PacingRate(r)
            | Self::Bandwidth(r) => r.as_bps_f64(),
            Self::Timeout | Self::FastRetransmit | Self::ScaleTimeout | Self::FeedbackTimeout => {
                1.0
            }
            Self::Scale(s) | Self::ReceiverScale(s) | Self::Level(s) | Self::BbrMode(s) => {
                f64::from(s)
            }
            Self::FramesSent(n)
            | Self::FramesDelivered(n)
            | Self::FramesDecodable(n)
            | Self::FramesLate(n)
            | Self::Stalls(n)
            | Self::SourceDiscards(n) => n as f64,
            Self::LossEventRate(v) | Self::WirelessLossEstimate(v) | Self::ConnectionTarget(v) => v,
            Self::CongestionLoss(n) | Self::WirelessLoss(n) | Self::Connections(n) => f64::from(n),
            Self::Spike(on) => f64::from(u8::from(on)),
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
