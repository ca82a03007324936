//! The media-scaling receiver (paper 001, Section 2; PROTOCOLS.md §6): it decides the scale and
//! reports it.
//!
//! State: the scale (starting at the configured initial scale, 0), the highest sequence number
//! received, the time of the last arrival, the *checkpoint* (the time of the last scale change
//! or the last increase check) and whether a loss was seen since it. The RTT is the one the
//! sender writes in its data headers ([`ScalingConfig::initial_rtt`] until they carry one).
//!
//! - **Loss** (a data packet whose sequence number is above the highest + 1): the scale is
//!   halved (integer division), the checkpoint moves to now, and a report goes out at once.
//!   With [`ScalingConfig::one_decrease_per_rtt`] (the default), a loss found within one RTT of
//!   the last decrease does not halve again but still marks the period as lossy.
//! - **Timeout**: nothing has arrived for `TOI` (RTT if RTT > Max_Intrvl, else
//!   Max_Intrvl + α·RTT) since the last arrival: the scale is halved and reported, and the
//!   timeout re-armed for another TOI. A timeout at scale 0 reports once more and then the
//!   receiver goes idle (no timers) until data arrives again: the sender has stopped or the
//!   path is dead, and it must not keep the run alive.
//! - **Increase**: one RTT after the checkpoint, if no loss was seen since it and at least one
//!   packet arrived, the scale rises by one (at most 4). Either way the checkpoint moves to now
//!   and a report goes out (one per RTT while data flows, so that a lost report is repaired;
//!   ns-2's `MmApp` receiver also reports every RTT).
//!
//! The first data packet opens the checkpoint and is reported at once (as ns-2's receiver
//! does), which gives the sender its first RTT sample a round trip after it starts. A packet
//! below the highest sequence number (late or duplicated) counts as an arrival for the timeout
//! but is never a loss, nor does it take one back. Packets missing before the first one that
//! arrives count as a loss.
//!
//! It counts the frames that arrive whole (every fragment of the frame; a frame missing one is not
//! delivered) and plays them out through the streamer's player model (`fairstream_media::playout`,
//! with `decode::Decoder` deciding which frames a decoder could show): a live player that starts
//! once `prebuffer` of media is buffered, stalls on an empty buffer, and counts frames delivered,
//! decodable at their turn and late, stalls, their time, its start-up delay, the frames' RFC 3550
//! jitter and the media buffered, recorded at every checkpoint (the flow summary's media
//! columns). MPEG_APP's frames are the trace's (a frame its scale skips plays as a hole), at its
//! frame interval; MM_APP's untyped frames sit on a grid of their send times.
//!
//! The receiver trusts data headers as a TCP receiver does: a forged packet with a huge
//! sequence number or RTT can blind its loss detection or slow its checkpoints (it never
//! panics). It allocates nothing after it is built.
//!
//! [`ScalingConfig::initial_rtt`]: super::ScalingConfig::initial_rtt
//! [`ScalingConfig::one_decrease_per_rtt`]: super::ScalingConfig::one_decrease_per_rtt

use crate::media_scaling::metrics::{RECEIVER_SCALE, SCALE_TIMEOUT};
use fairstream_core::{Duration, FlowId, Instant};
use fairstream_media::Playout;

use super::config::{FrameClock, MAX_SCALE, Player, Rule};
use crate::media_scaling::{MediaData, MediaFeedback};
use crate::player::record_playout;
use crate::{Direction, Endpoint, EndpointStats, Header, MetricSink, Packet, udp_feedback_size};

/// A media-scaling receiver (MM_APP or MPEG_APP).
#[derive(Clone, Debug)]
pub struct MediaReceiver {
    flow: FlowId,
    rule: Rule,
    scale: u8,
    highest: Option<u64>,
    /// The sender's RTT from the data headers (zero: none yet).
    rtt_hint: Duration,
    last_arrival: Option<Instant>,
    checkpoint: Instant,
    loss_since_checkpoint: bool,
    received_since_checkpoint: u64,
    last_decrease: Option<Instant>,
    timeout_at: Option<Instant>,
    idle: bool,
    /// Timestamp of the newest data packet received and when it arrived.
    echo: Option<(Instant, Instant)>,
    report_due: bool,
    reports: u32,
    stats: EndpointStats,
    losses: u64,
    timeouts: u64,
    late: u64,
    /// The frame being reassembled: its number, fragments got and fragments in all.
    assembling: Option<(u64, u16, u16)>,
    frames_delivered: u64,
    /// The player, and where each frame sits on its timeline.
    playout: Playout,
    clock: FrameClock,
}

impl MediaReceiver {
    /// A receiver for `flow` with the sanitised scaling rule (Max_Intrvl worked out).
    pub(super) fn new(flow: FlowId, rule: Rule, player: Player) -> Self {
        Self {
            flow,
            scale: rule.initial_scale,
            rule,
            highest: None,
            rtt_hint: Duration::ZERO,
            last_arrival: None,
            checkpoint: Instant::ZERO,
            loss_since_checkpoint: false,
            received_since_checkpoint: 0,
            last_decrease: None,
            timeout_at: None,
            idle: false,
            echo: None,
            report_due: false,
            reports: 0,
            stats: EndpointStats::default(),
            losses: 0,
            timeouts: 0,
            late: 0,
            assembling: None,
            frames_delivered: 0,
            playout: Playout::new(player.playout),
            clock: player.clock,
        }
    }

    // ----------------------------------------------------------------- getters

    /// The flow this receiver belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The scale it decided last.
    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// The RTT its rules use: the sender's estimate from the data, or the initial RTT.
    pub fn rtt(&self) -> Duration {
        if self.rtt_hint.is_zero() {
            self.rule.initial_rtt
        } else {
            self.rtt_hint
        }
    }

    /// The timeout TOI at the current RTT.
    pub fn toi(&self) -> Duration {
        self.rule.toi(self.rtt())
    }

    /// Max_Intrvl, as the rule uses it.
    pub fn max_interval(&self) -> Duration {
        self.rule.max_interval
    }

    /// The highest sequence number received (`None` before any packet).
    pub fn highest_seq(&self) -> Option<u64> {
        self.highest
    }

    /// Packets found missing from sequence gaps so far.
    pub fn losses(&self) -> u64 {
        self.losses
    }

    /// Timeouts (TOI without an arrival) so far.
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }

    /// Packets that arrived below the highest sequence number (late or duplicated).
    pub fn late_packets(&self) -> u64 {
        self.late
    }

    /// Reports sent so far.
    pub fn reports(&self) -> u32 {
        self.reports
    }

    /// When data last arrived (`None` before any).
    pub fn last_arrival(&self) -> Option<Instant> {
        self.last_arrival
    }

    /// Whether it has gone quiet after timing out at scale 0.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    // ----------------------------------------------------------------- internals

    fn set_scale(&mut self, now: Instant, scale: u8, metrics: &mut dyn MetricSink) {
        if scale != self.scale {
            self.scale = scale;
            metrics.record(now, RECEIVER_SCALE.count(u64::from(scale)));
        }
    }

    /// Opens a new checkpoint at `now`.
    fn checkpoint_at(&mut self, now: Instant) {
        self.checkpoint = now;
        self.loss_since_checkpoint = false;
        self.received_since_checkpoint = 0;
    }

    /// Halves the scale at `now` and reports it.
    fn decrease(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.set_scale(now, self.scale / 2, metrics);
        self.last_decrease = Some(now);
        self.checkpoint_at(now);
        self.report_due = true;
    }

    /// A loss found at `now`.
    fn on_loss(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        let rtt = self.rtt();
        let recent = self
            .last_decrease
            .is_some_and(|t| now < t.saturating_add(rtt));
        if self.rule.one_decrease_per_rtt && recent {
            self.loss_since_checkpoint = true;
        } else {
            self.decrease(now, metrics);
        }
    }

    fn on_data(&mut self, now: Instant, d: &MediaData, payload: u32, metrics: &mut dyn MetricSink) {
        if !d.rtt.is_zero() {
            self.rtt_hint = d.rtt;
        }
        if self.idle {
            self.idle = false;
            self.checkpoint_at(now);
        }
        self.last_arrival = Some(now);
        if self.echo.is_none_or(|(ts, _)| d.timestamp > ts) {
            self.echo = Some((d.timestamp, now));
        }
        match self.highest {
            None => {
                self.highest = Some(d.seq);
                self.checkpoint_at(now);
                self.received_since_checkpoint = 1;
                self.stats.app_bytes_received += u64::from(payload);
                self.report_due = true;
                if d.seq > 0 {
                    self.losses = self.losses.saturating_add(d.seq);
                    self.on_loss(now, metrics);
                }
            }
            Some(h) if d.seq > h => {
                self.highest = Some(d.seq);
                self.received_since_checkpoint += 1;
                self.stats.app_bytes_received += u64::from(payload);
                if d.seq > h + 1 {
                    self.losses = self.losses.saturating_add(d.seq - h - 1);
                    self.on_loss(now, metrics);
                }
            }
            Some(_) => self.late += 1,
        }
        self.timeout_at = Some(now.saturating_add(self.toi()));
        self.reassemble(now, d);
    }

    /// Counts frame `d.frame` delivered once all its fragments arrived (a frame missing one is
    /// not) and hands it to the player; a piece of it extends the player's buffer.
    fn reassemble(&mut self, now: Instant, d: &MediaData) {
        let index = self.clock.index(d);
        let got = match self.assembling {
            Some((frame, got, _)) if frame == d.frame => got + 1,
            _ => 1,
        };
        if got >= d.fragments {
            self.assembling = None;
            self.frames_delivered += 1;
            self.playout.arrive(now, index);
        } else {
            self.assembling = Some((d.frame, got, d.fragments));
            self.playout.seen(now, index);
        }
    }

    /// The player.
    pub fn playout(&self) -> &Playout {
        &self.playout
    }

    /// Frames received whole so far.
    pub fn frames_delivered(&self) -> u64 {
        self.frames_delivered
    }

    /// When the next increase check is due (`None` before data or when idle).
    fn check_due(&self) -> Option<Instant> {
        (self.highest.is_some() && !self.idle).then(|| self.checkpoint.saturating_add(self.rtt()))
    }

    /// Fires whatever is due at `now`: the timeout first (it decides a period that also
    /// reaches its check at the same instant), then the increase check.
    fn on_time(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if self.idle {
            return;
        }
        if self.timeout_at.is_some_and(|t| now >= t) {
            self.timeouts += 1;
            metrics.record(now, SCALE_TIMEOUT.event());
            let was_zero = self.scale == 0;
            self.decrease(now, metrics);
            if was_zero {
                self.idle = true;
                self.timeout_at = None;
                return;
            }
            self.timeout_at = Some(now.saturating_add(self.toi()));
        }
        if self.check_due().is_some_and(|t| now >= t) {
            if !self.loss_since_checkpoint && self.received_since_checkpoint > 0 {
                self.set_scale(now, (self.scale + 1).min(MAX_SCALE), metrics);
            }
            self.checkpoint_at(now);
            self.report_due = true;
            self.playout.advance(now);
            record_playout(&self.playout, now, metrics);
        }
    }

    fn report(&mut self, now: Instant) -> Packet {
        let (t_echo, arrived) = self.echo.unwrap_or((Instant::ZERO, now));
        let fb = MediaFeedback {
            scale: self.scale,
            number: self.reports,
            t_echo,
            t_delay: now.saturating_since(arrived),
            highest_seq: self.highest.unwrap_or(0),
        };
        self.reports = self.reports.wrapping_add(1);
        let size = udp_feedback_size(MediaFeedback::WIRE_LEN);
        self.stats.count_sent(size);
        Packet {
            flow: self.flow,
            direction: Direction::Reverse,
            size,
            payload: 0,
            sent_at: now,
            header: Header::MediaFeedback(fb),
        }
    }
}

impl Endpoint for MediaReceiver {
    /// Takes a data packet of this flow; anything else is ignored.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let Header::MediaData(d) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Forward {
            return;
        }
        self.stats.packets_received += 1;
        // Timers due before this arrival fire first (a driver calls them in time order; this
        // only matters when it does not).
        self.on_time(now, metrics);
        self.on_data(now, &d, packet.payload, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.on_time(now, metrics);
    }

    /// The report, if one is due: at most one per call of a handler.
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if !self.report_due {
            return None;
        }
        self.report_due = false;
        Some(self.report(now))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.idle {
            return None;
        }
        [self.timeout_at, self.check_due()]
            .into_iter()
            .flatten()
            .min()
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
