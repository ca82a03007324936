//! The TFRC receiver (RFC 5348 §5–§6, PROTOCOLS.md §2.7): it finds lost packets from gaps in
//! the sequence numbers, folds losses within one RTT into one loss event, keeps the loss
//! history, and reports the receive rate X_recv and the loss event rate p once per RTT and at
//! once on a new loss event. With a loss discrimination algorithm (TFRC Wireless), the gaps it
//! classes as wireless losses never enter the loss history.
//!
//! Gaps wait in a small queue of holes until `ndupack` later packets have arrived; a hole of
//! any length is settled in time proportional to the loss events it starts (at most the
//! history's length), never to the packets it spans.

use crate::lda::metrics::{CONGESTION_LOSS, WIRELESS_LOSS};
use std::collections::VecDeque;

use fairstream_core::{Bitrate, Duration, FlowId, Instant};

use super::EquationForm;
use super::config::TfrcReceiverConfig;
use super::loss_history::{INTERVALS, LossHistory};
use crate::lda::{Arrival, Lda, LossClass}; // LDA-MERGE
use crate::tfrc::{LossRate, TfrcData, TfrcFeedback};
use crate::{Direction, Endpoint, EndpointStats, Header, MetricSink, Packet};

/// Holes kept before the oldest is settled regardless of `ndupack` (bounds memory whatever
/// the sender does).
const MAX_HOLES: usize = 64;

/// A run of missing sequence numbers and the packets either side of it.
#[derive(Clone, Copy, Debug)]
struct Hole {
    first: u64,
    last: u64,
    /// The packet received just before the gap (its number and send time), if any.
    before: Option<(u64, f64)>,
    /// The packet that revealed the gap.
    after: (u64, f64),
    /// Packets received beyond the hole since.
    later: u32,
    /// The sender's round carried by the packet that revealed the hole.
    round: u32,
}

impl Hole {
    /// Interpolated send time of missing packet `seq` (seconds, sender clock).
    fn send_time(&self, seq: u64) -> f64 {
        match self.before {
            Some((sb, tb)) => {
                let (sa, ta) = self.after;
                tb + (ta - tb) * (seq - sb) as f64 / (sa - sb) as f64
            }
            None => self.after.1,
        }
    }

    /// Send-time spacing of the missing packets (seconds per packet, ≥ 0).
    fn spacing(&self) -> f64 {
        match self.before {
            Some((sb, tb)) => ((self.after.1 - tb) / (self.after.0 - sb) as f64).max(0.0),
            None => 0.0,
        }
    }
}

/// Bytes and duration of the last feedback period, for receive rates over part of an RTT.
#[derive(Clone, Copy, Debug, Default)]
struct Period {
    bytes: u64,
    secs: f64,
}

/// The TFRC receiver of one (sub-)connection.
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    flow: FlowId,
    conn: u8,
    config: TfrcReceiverConfig,
    equation: EquationForm,
    lda: Option<Lda>,
    /// Highest sequence number received and its send time.
    highest: Option<(u64, f64)>,
    holes: VecDeque<Hole>,
    history: LossHistory,
    /// Send time of the packet that started the newest loss event.
    event_start: f64,
    /// The round of the hole that started it (for the precise-loss rule).
    event_round: u32,
    /// The sender's RTT, from the newest data header (seconds; 0 before it has one).
    rtt: f64,
    /// Segment size, from the newest data packet's payload (bytes).
    segment: f64,
    p: f64,
    /// Timestamp and arrival time of the newest data packet.
    last_data: Option<(Instant, Instant)>,
    bytes_since_report: u64,
    last_report: Option<Instant>,
    previous: Period,
    report_due: bool,
    timer: Option<Instant>,
    stats: EndpointStats,
}

impl TfrcReceiver {
    /// Bytes a receiver allocates when built (its loss-hole history).
    pub const HEAP_BYTES: usize = MAX_HOLES * size_of::<Hole>();

    /// A receiver for sub-connection `conn` of `flow`; `equation` is the sender's form (for
    /// the synthetic first loss interval); `lda` makes it a TFRC Wireless receiver.
    pub fn new(
        flow: FlowId,
        conn: u8,
        config: TfrcReceiverConfig,
        equation: EquationForm,
        lda: Option<Lda>,
    ) -> Self {
        Self {
            flow,
            conn,
            config,
            equation,
            lda,
            highest: None,
            holes: VecDeque::with_capacity(MAX_HOLES),
            history: LossHistory::new(config.discounting),
            event_start: 0.0,
            event_round: 0,
            rtt: 0.0,
            segment: 1.0,
            p: 0.0,
            last_data: None,
            bytes_since_report: 0,
            last_report: None,
            previous: Period::default(),
            report_due: false,
            timer: None,
            stats: EndpointStats::default(),
        }
    }

    /// The loss event rate now.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// The receive rate over the current period (the last one if it has just begun), bytes/s.
    fn receive_rate(&self, now: Instant) -> f64 {
        let Some(last) = self.last_report else {
            return 0.0;
        };
        let secs = now.saturating_since(last).as_secs_f64();
        if secs >= self.rtt || self.previous.secs <= 0.0 {
            if secs > 0.0 {
                self.bytes_since_report as f64 / secs
            } else {
                0.0
            }
        } else {
            // Less than an RTT since the last report (an early report on a loss event): the
            // rate over the last RTT, counting the previous period's bytes pro rata.
            let earlier = self.previous.bytes as f64 * ((self.rtt - secs) / self.previous.secs);
            (self.bytes_since_report as f64 + earlier.max(0.0)) / self.rtt
        }
    }

    fn on_data(
        &mut self,
        now: Instant,
        packet: &Packet,
        d: &TfrcData,
        metrics: &mut dyn MetricSink,
    ) {
        self.stats.packets_received += 1;
        self.stats.app_bytes_received += u64::from(packet.payload);
        self.bytes_since_report += u64::from(packet.payload);
        self.segment = f64::from(packet.payload.max(1));
        self.rtt = d.rtt.as_secs_f64();
        let ts = d.timestamp.as_secs_f64();
        let first = self.last_data.is_none();
        self.last_data = Some((d.timestamp, now));

        let class = self.lda.as_mut().and_then(|lda| {
            lda.on_arrival(Arrival {
                seq: d.seq,
                at: now,
                sent: d.timestamp,
            })
        });
        match self.highest {
            Some((h, _)) if d.seq <= h => self.fill(d.seq),
            _ => {
                let gap_first = self.highest.map_or(0, |(h, _)| h + 1);
                for hole in &mut self.holes {
                    hole.later = hole.later.saturating_add(1);
                }
                if d.seq > gap_first {
                    let n = d.seq - gap_first;
                    let wireless = match class {
                        Some((LossClass::Wireless, _)) => {
                            metrics.record(now, WIRELESS_LOSS.count(u64::from(clamp_u32(n))));
                            true
                        }
                        Some((LossClass::Congestion, _)) => {
                            metrics.record(now, CONGESTION_LOSS.count(u64::from(clamp_u32(n))));
                            false
                        }
                        None => false,
                    };
                    if !wireless {
                        if self.holes.len() == MAX_HOLES {
                            self.settle_oldest(now);
                        }
                        self.holes.push_back(Hole {
                            first: gap_first,
                            last: d.seq - 1,
                            before: self.highest,
                            after: (d.seq, ts),
                            later: 1, // the packet that revealed it came after it
                            round: d.round,
                        });
                    }
                }
                self.highest = Some((d.seq, ts));
            }
        }
        while self
            .holes
            .front()
            .is_some_and(|h| h.later >= self.config.ndupack)
        {
            self.settle_oldest(now);
        }
        let previous = self.p;
        let highest = self.highest.map_or(0, |(h, _)| h);
        self.p = self.history.loss_event_rate(highest);
        if self.p > previous || first {
            self.report_due = true;
        }
        if self.config.report_on_arrival
            && self
                .last_report
                .is_some_and(|t| now.saturating_since(t).as_secs_f64() >= self.rtt)
        {
            self.report_due = true;
        }
        if self.timer.is_none() && !first {
            self.arm_timer(self.last_report.unwrap_or(now));
        }
    }

    /// A late packet fills its place in a pending hole, splitting it if needed.
    fn fill(&mut self, seq: u64) {
        let Some(i) = self
            .holes
            .iter()
            .position(|h| h.first <= seq && seq <= h.last)
        else {
            return; // a duplicate, or too late: its loss is already counted
        };
        let hole = self.holes[i];
        let ts = hole.send_time(seq);
        match (seq == hole.first, seq == hole.last) {
            (true, true) => {
                self.holes.remove(i);
            }
            (true, false) => {
                self.holes[i].first = seq + 1;
                self.holes[i].before = Some((seq, ts));
            }
            (false, true) => {
                self.holes[i].last = seq - 1;
                self.holes[i].after = (seq, ts);
            }
            (false, false) => {
                self.holes[i].last = seq - 1;
                self.holes[i].after = (seq, ts);
                if self.holes.len() < MAX_HOLES {
                    self.holes.insert(
                        i + 1,
                        Hole {
                            first: seq + 1,
                            before: Some((seq, ts)),
                            ..hole
                        },
                    );
                }
            }
        }
    }

    /// Declares the oldest hole's packets lost and opens the loss events they start.
    fn settle_oldest(&mut self, now: Instant) {
        let Some(hole) = self.holes.pop_front() else {
            return;
        };
        let mut from = hole.first;
        if !self.history.has_loss() {
            let target = if hole.before.is_none() && self.rtt > 0.0 {
                self.segment / (2.0 * self.rtt) // the very first packets were lost
            } else {
                self.receive_rate(now)
            };
            let interval = if self.rtt > 0.0 && target > 0.0 {
                1.0 / self
                    .equation
                    .loss_rate_for(self.segment, self.rtt, 4.0 * self.rtt, target)
            } else {
                1.0
            };
            self.history.first_event(from, interval);
            self.event_start = hole.send_time(from);
            self.event_round = hole.round;
            if from == hole.last {
                return;
            }
            from += 1;
        }
        // Later events: the first missing packet sent more than an RTT after the newest
        // event's start, then one every `step` packets (send times are linear in a hole).
        let spacing = hole.spacing();
        let offset = self.event_start + self.rtt - hole.send_time(from);
        let skip = if offset < 0.0 {
            0.0
        } else if spacing > 0.0 {
            (offset / spacing).floor() + 1.0
        } else {
            return;
        };
        let span = (hole.last - from) as f64;
        if skip > span {
            return;
        }
        if self.config.precise_loss {
            // One event at most, and only in a later round than the previous one's.
            if hole.round.wrapping_sub(self.event_round) as i32 > 0 {
                let seq = from + skip as u64;
                let discount = self.history.open_discount(seq.saturating_sub(1));
                self.history.new_event(seq, discount);
                self.event_start = hole.send_time(seq);
                self.event_round = hole.round;
            }
            return;
        }
        let first_event = from + skip as u64;
        let step = if spacing > 0.0 {
            ((self.rtt / spacing).floor() + 1.0).min(span + 1.0) as u64
        } else {
            hole.last - first_event + 1
        };
        let events = (hole.last - first_event) / step + 1;
        // Only the newest INTERVALS + 1 events can still matter to the history.
        let skipped = events.saturating_sub(INTERVALS as u64 + 1);
        let mut seq = first_event + skipped * step;
        loop {
            let discount = self.history.open_discount(seq.saturating_sub(1));
            self.history.new_event(seq, discount);
            self.event_start = hole.send_time(seq);
            match seq.checked_add(step) {
                Some(next) if next <= hole.last => seq = next,
                _ => break,
            }
        }
    }

    fn arm_timer(&mut self, from: Instant) {
        self.timer = (self.rtt > 0.0).then(|| {
            from.saturating_add(Duration::from_secs_f64(
                self.config.feedback_timer * self.rtt,
            ))
        });
    }

    fn report(&mut self, now: Instant) -> Option<Packet> {
        let (t_recvdata, arrived) = self.last_data?;
        let x_recv = self.receive_rate(now);
        if let Some(last) = self.last_report {
            self.previous = Period {
                bytes: self.bytes_since_report,
                secs: now.saturating_since(last).as_secs_f64(),
            };
        }
        self.bytes_since_report = 0;
        self.last_report = Some(now);
        self.report_due = false;
        self.arm_timer(now);
        Some(Packet {
            flow: self.flow,
            direction: Direction::Reverse,
            size: self.config.feedback_size,
            payload: 0,
            sent_at: now,
            header: Header::TfrcFeedback(TfrcFeedback {
                conn: self.conn,
                t_recvdata,
                t_delay: now.saturating_since(arrived),
                x_recv: Bitrate::from_bps_f64(x_recv * 8.0),
                p: LossRate::from_f64(self.p),
            }),
        })
    }
}

fn clamp_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Endpoint for TfrcReceiver {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        if let Header::TfrcData(d) = &packet.header
            && d.conn == self.conn
        {
            self.on_data(now, packet, d, metrics);
        }
    }

    fn handle_timeout(&mut self, now: Instant, _metrics: &mut dyn MetricSink) {
        let Some(due) = self.timer else { return };
        if now < due {
            return;
        }
        if self.bytes_since_report > 0 || self.last_report.is_none() {
            self.report_due = true;
        } else {
            // Nothing arrived for a whole period: sleep until data comes back.
            self.timer = None;
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if !self.report_due {
            return None;
        }
        let packet = self.report(now)?;
        self.stats.count_sent(packet.size);
        Some(packet)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timer
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
