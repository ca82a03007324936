//! The VTP receiver (PROTOCOLS.md §5.2): measures the Achieved Rate over sampling periods of
//! about one RTT and reports it, with the period's losses, once per period.
//!
//! A sampling period starts at a packet arrival and ends at the first arrival at which it has
//! lasted at least T and holds at least [`VtpConfig::min_period_packets`] packets. T is the
//! RTT the sender writes in its data headers, or [`VtpConfig::initial_sampling_period`]
//! while they carry none. At the end of period k:
//!
//! ```text
//! S_k = wire bytes that arrived in (start, end] / (end − start)
//! AR  = S_1                                          (first period)
//! AR  = σ·AR + (1 − σ)/2 · (S_k + S_{k−1})           (later ones; paper eq. 1)
//! ```
//!
//! S_k counts whole packets on the wire, as the sender's rate does, so that the two compare.
//! The paper (Section 3.1) has the receiver report the samples and the *sender* filter them;
//! here the receiver filters (PROTOCOLS.md §5.2, and [`VtpFeedback::achieved_rate`] is the
//! filtered value). Both give the same AR when no report is lost; filtering at the receiver
//! keeps every sample in the filter when one is.
//!
//! Losses are gaps in the sequence numbers, counted in the period in which the gap is seen. A
//! late (reordered) packet counts as received; if it fills a gap found in the same period it
//! also cancels that loss (the report is not sent yet), while a loss already reported stays
//! reported. Duplicates are ignored altogether, as is a packet so far below the highest
//! sequence number (more than [`REORDER_WINDOW`]) that the receiver no longer knows whether
//! it arrived. A fixed bitmap allocated once remembers which recent packets arrived: nothing
//! is allocated per packet.
//!
//! The receiver trusts data headers as a TCP receiver does: a forged packet with a huge
//! sequence number or RTT can stall its reports for good (it never panics).
//!
//! The report echoes the timestamp of the *newest* data packet received so far (highest
//! send timestamp) with the time since it arrived as `t_delay`: the sender's RTT sample
//! `now − t_echo − t_delay` is then exact even when the period ends on a late packet, and
//! successive reports carry strictly increasing `(t_echo, t_delay)`, which lets the sender
//! drop duplicated and reordered reports.

use fairstream_core::{DataSize, Duration, FlowId, Instant};

use super::VtpConfig;
use super::config::Params;
use super::{VtpData, VtpFeedback};
use crate::{Direction, Endpoint, EndpointStats, Header, MetricSink, Packet, udp_feedback_size};

/// How far below the highest sequence number the receiver remembers which packets arrived.
pub const REORDER_WINDOW: u64 = 4096;
const WORDS: usize = (REORDER_WINDOW / 64) as usize;

/// Which of the last [`REORDER_WINDOW`] sequence numbers arrived: bit `seq mod W`.
#[derive(Clone, Debug)]
struct SeenBits(Box<[u64; WORDS]>);

impl SeenBits {
    fn new() -> Self {
        Self(Box::new([0; WORDS]))
    }
    fn slot(seq: u64) -> (usize, u64) {
        let i = seq % REORDER_WINDOW;
        ((i / 64) as usize, 1u64 << (i % 64))
    }
    fn get(&self, seq: u64) -> bool {
        let (w, b) = Self::slot(seq);
        self.0[w] & b != 0
    }
    fn set(&mut self, seq: u64) {
        let (w, b) = Self::slot(seq);
        self.0[w] |= b;
    }
    /// Forgets `(from, to]` (the highest sequence number moves from `from` to `to`).
    fn advance(&mut self, from: u64, to: u64) {
        if to - from >= REORDER_WINDOW {
            self.0.fill(0);
        } else {
            for s in from + 1..=to {
                let (w, b) = Self::slot(s);
                self.0[w] &= !b;
            }
        }
    }
}

/// What a sampling period has seen so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Period {
    /// When it began (the arrival that ended the previous one; `None` before any packet).
    start: Option<Instant>,
    /// The highest sequence number when it began: gaps above it were found in this period.
    base: Option<u64>,
    bytes: u64,
    received: u64,
    lost: u64,
}

/// A VTP receiver: Achieved Rate measurement and one report per sampling period.
#[derive(Clone, Debug)]
pub struct VtpReceiver {
    flow: FlowId,
    sigma: f64,
    min_period_packets: u64,
    initial_period: Duration,
    seen: SeenBits,
    highest: Option<u64>,
    period: Period,
    /// Latest RTT the sender wrote in a data header (zero: none yet).
    rtt_hint: Duration,
    /// Timestamp of the newest data packet received and when it arrived.
    echo: Option<(Instant, Instant)>,
    /// Achieved Rate and the last sample, bytes/s.
    ar: Option<f64>,
    last_sample: Option<f64>,
    out: Option<Packet>,
    stats: EndpointStats,
    duplicates: u64,
}

impl VtpReceiver {
    /// A receiver for `flow` (it uses σ, the sampling period parameters of `config`).
    pub fn new(flow: FlowId, config: &VtpConfig) -> Self {
        let p = Params::new(config);
        Self {
            flow,
            sigma: p.sigma,
            min_period_packets: u64::from(p.min_period_packets),
            initial_period: p.initial_period,
            seen: SeenBits::new(),
            highest: None,
            period: Period::default(),
            rtt_hint: Duration::ZERO,
            echo: None,
            ar: None,
            last_sample: None,
            out: None,
            stats: EndpointStats::default(),
            duplicates: 0,
        }
    }

    /// The flow this receiver belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The Achieved Rate after the last completed period, bytes/s (`None` before the first).
    pub fn achieved_rate_bytes_per_sec(&self) -> Option<f64> {
        self.ar
    }

    /// The highest sequence number received (`None` before any packet).
    pub fn highest_seq(&self) -> Option<u64> {
        self.highest
    }

    /// Data packets ignored as duplicates (or as too old to tell).
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// The current sampling period length T.
    pub fn sampling_period(&self) -> Duration {
        if self.rtt_hint.is_zero() {
            self.initial_period
        } else {
            self.rtt_hint
        }
    }

    /// Accounts one data packet; returns whether it was new (not a duplicate).
    fn account(&mut self, now: Instant, d: &VtpData, size: DataSize, payload: u32) -> bool {
        let p = &mut self.period;
        match self.highest {
            None => {
                // Packets before the first one that arrived were lost.
                p.lost = p.lost.saturating_add(d.seq);
                self.seen.set(d.seq);
                self.highest = Some(d.seq);
                p.start = Some(now);
                p.base = None;
                if !d.rtt.is_zero() {
                    self.rtt_hint = d.rtt;
                }
                // The first packet opens the first period: it is the period's start, so
                // neither its bytes nor its arrival count in the period (S_k counts the
                // packets in (start, end]).
                self.echo = Some((d.timestamp, now));
                self.stats.app_bytes_received += u64::from(payload);
                return true;
            }
            Some(h) if d.seq > h => {
                p.lost = p.lost.saturating_add(d.seq - h - 1);
                self.seen.advance(h, d.seq);
                self.seen.set(d.seq);
                self.highest = Some(d.seq);
                if !d.rtt.is_zero() {
                    self.rtt_hint = d.rtt;
                }
            }
            Some(h) => {
                if h - d.seq >= REORDER_WINDOW || self.seen.get(d.seq) {
                    self.duplicates += 1;
                    return false;
                }
                // A late packet: it was counted lost when the gap was found; if that was in
                // this period, the loss has not been reported yet and is taken back.
                self.seen.set(d.seq);
                if p.base.is_none_or(|b| d.seq > b) {
                    p.lost = p.lost.saturating_sub(1);
                }
            }
        }
        p.bytes = p.bytes.saturating_add(size.as_bytes());
        p.received += 1;
        if self.echo.is_none_or(|(ts, _)| d.timestamp > ts) {
            self.echo = Some((d.timestamp, now));
        }
        self.stats.app_bytes_received += u64::from(payload);
        true
    }

    /// Ends the period at `now` if it is long and full enough, and queues its report.
    fn maybe_close_period(&mut self, now: Instant) {
        let Some(start) = self.period.start else {
            return;
        };
        let elapsed = now.saturating_since(start);
        if elapsed.is_zero()
            || elapsed < self.sampling_period()
            || self.period.received < self.min_period_packets
        {
            return;
        }
        let sample = self.period.bytes as f64 / elapsed.as_secs_f64();
        let ar = match (self.ar, self.last_sample) {
            (Some(ar), Some(prev)) => self.sigma * ar + (1.0 - self.sigma) / 2.0 * (sample + prev),
            _ => sample,
        };
        self.ar = Some(ar);
        self.last_sample = Some(sample);
        let (t_echo, arrived) = self.echo.unwrap_or((Instant::ZERO, now));
        // The report's counters are 16 bits on the wire.
        let wire16 = |v: u64| v.min(u64::from(u16::MAX)) as u32;
        let report = VtpFeedback {
            t_echo,
            t_delay: now.saturating_since(arrived),
            achieved_rate: fairstream_core::Bitrate::from_bps_f64(ar * 8.0),
            highest_seq: self.highest.unwrap_or(0),
            lost: wire16(self.period.lost),
            received: wire16(self.period.received),
        };
        let size = udp_feedback_size(VtpFeedback::WIRE_LEN);
        self.stats.count_sent(size);
        self.out = Some(Packet {
            flow: self.flow,
            direction: Direction::Reverse,
            size,
            payload: 0,
            sent_at: now,
            header: Header::VtpFeedback(report),
        });
        self.period = Period {
            start: Some(now),
            base: self.highest,
            ..Period::default()
        };
    }
}

impl Endpoint for VtpReceiver {
    /// Takes a data packet of this flow; anything else is ignored. A report, when the packet
    /// ends a sampling period, is ready at once through `poll_transmit` (one slot: the driver
    /// drains it after every call, as the crate's driving contract says).
    fn handle_packet(&mut self, now: Instant, packet: &Packet, _metrics: &mut dyn MetricSink) {
        let Header::VtpData(d) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Forward {
            return;
        }
        self.stats.packets_received += 1;
        if self.account(now, &d, packet.size, packet.payload) {
            self.maybe_close_period(now);
        }
    }

    fn handle_timeout(&mut self, _now: Instant, _metrics: &mut dyn MetricSink) {}

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        self.out.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
