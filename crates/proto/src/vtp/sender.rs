//! The VTP sender (PROTOCOLS.md §5.3; Yang, Gerla, Sanadidi 2004, Sections 3-4) as a sans-IO
//! [`Endpoint`]: a greedy application paced at rate R, whose rate control reacts to the
//! receiver's reports.
//!
//! Pacing: packet k+1 leaves `s/R` after packet k, with R as it is when packet k+1 is due
//! (a rate change moves the next departure at once). Rate control (see [`super::control`]):
//! RTT samples `now − t_echo − t_delay` feed a smoothed RTT (gain 1/8) and a Spike detector;
//! a reported loss is a wireless loss in Spike's NORMAL state (no cut; it raises the error
//! estimate e) and a congestion loss in its SPIKE state (`R = γ·AR·(1 + e)`, HOLD for
//! `τ = RTT/(2(1 − γ))`, then `R = AR·(1 + e)` and INCREASE); in INCREASE the rate grows by
//! the paper's "equivalent window" rule at most once per RTT; no report for
//! [`VtpConfig::no_feedback_periods`] sampling periods cuts `R = γ·R` and HOLDs.
//!
//! Reports are checked before use; one is ignored (and counted in
//! [`VtpSender::ignored_reports`]) when it:
//! - names a packet never sent (`highest_seq` not below the packets sent, or `t_echo`
//!   outside the send times so far, in particular in the future);
//! - is not newer than the last report used: reports carry strictly increasing
//!   `(t_echo, t_delay)` (see [`super::receiver`]), so a duplicated or reordered report is
//!   recognised and dropped rather than counted twice.
//!
//! A report whose RTT sample is not positive (`t_delay ≥ now − t_echo`: the receiver claims
//! to have held the echo longer than the round trip) is used for its rate and losses, but its
//! RTT sample is ignored: it neither moves the smoothed RTT nor the Spike state.

use fairstream_core::{Bitrate, Duration, FlowId, Instant};

use super::VtpConfig;
use super::config::{DATA_HEADERS, Params};
use super::control::{Control, VtpMode};
use super::{VtpData, VtpFeedback};
use crate::{Direction, Endpoint, EndpointStats, FlowCtx, Header, MetricSink, Packet};

/// A VTP sender with a greedy application between its start and stop times.
#[derive(Clone, Debug)]
pub struct VtpSender {
    flow: FlowId,
    config: VtpConfig,
    /// When the application starts sending, and when it stops (`None`: never).
    start: Instant,
    stop: Option<Instant>,
    p: Params,
    ctl: Control,
    /// Data packets sent (the next sequence number).
    next_seq: u64,
    first_sent: Option<Instant>,
    last_sent: Option<Instant>,
    /// When the silence since the last report becomes a congestion signal.
    feedback_deadline: Option<Instant>,
    /// `(t_echo, t_delay)` of the last report used.
    last_report: Option<(Instant, Duration)>,
    payload: u32,
    stats: EndpointStats,
    ignored_reports: u64,
    started: bool,
}

impl VtpSender {
    /// The sender of flow `ctx`. Nothing is sent before the flow's start (which
    /// [`Endpoint::poll_timeout`] reports until then) nor at or after its stop. VTP draws no
    /// random numbers.
    pub fn new(ctx: &FlowCtx, config: VtpConfig) -> Self {
        let p = Params::new(&config);
        Self {
            flow: ctx.id,
            start: ctx.start,
            stop: ctx.stop,
            ctl: Control::new(&p, &config, ctx.start),
            next_seq: 0,
            first_sent: None,
            last_sent: None,
            feedback_deadline: None,
            last_report: None,
            payload: u32::try_from(p.size.as_bytes() - DATA_HEADERS).unwrap_or(u32::MAX),
            stats: EndpointStats::default(),
            ignored_reports: 0,
            started: false,
            p,
            config,
        }
    }

    // ----------------------------------------------------------------- getters

    /// The flow this sender belongs to.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &VtpConfig {
        &self.config
    }

    /// The sending rate R (whole packets on the wire), rounded to a bit per second.
    pub fn rate(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.ctl.rate() * 8.0)
    }

    /// The sending rate R, bytes per second, unrounded.
    pub fn rate_bytes_per_sec(&self) -> f64 {
        self.ctl.rate()
    }

    /// The rate floor now in force (one packet per smoothed RTT, at least 1 bit/s, at most
    /// the ceiling), bytes per second.
    pub fn min_rate_bytes_per_sec(&self) -> f64 {
        self.ctl.min_rate(&self.p)
    }

    /// The rate ceiling ([`VtpConfig::max_rate`], at least 1 bit/s), bytes per second.
    pub fn max_rate_bytes_per_sec(&self) -> f64 {
        self.p.max_rate
    }

    /// Whether the rate control is increasing or holding a reduced rate.
    pub fn mode(&self) -> VtpMode {
        self.ctl.mode()
    }

    /// The smoothed RTT (`None` before the first sample).
    pub fn srtt(&self) -> Option<Duration> {
        self.ctl.srtt().map(Duration::from_secs_f64)
    }

    /// RTT_prev: the smoothed RTT when the current round (of the increase rule) began.
    pub fn rtt_prev(&self) -> Option<Duration> {
        self.ctl.rtt_prev().map(Duration::from_secs_f64)
    }

    /// The wireless loss fraction estimate e.
    pub fn wireless_loss_estimate(&self) -> f64 {
        self.ctl.e()
    }

    /// Whether the Spike detector is in its spike (congestion) state.
    pub fn in_spike(&self) -> bool {
        self.ctl.in_spike()
    }

    /// The Achieved Rate of the last report used (`None` before any).
    pub fn achieved_rate(&self) -> Option<Bitrate> {
        self.ctl.ar().map(|ar| Bitrate::from_bps_f64(ar * 8.0))
    }

    /// Reports ignored as bogus, duplicated or out of date.
    pub fn ignored_reports(&self) -> u64 {
        self.ignored_reports
    }

    /// Rate cuts on congestion losses so far.
    pub fn congestion_cuts(&self) -> u64 {
        self.ctl.congestion_cuts()
    }

    /// Rate cuts on silence (no report for the configured number of periods) so far.
    pub fn silence_cuts(&self) -> u64 {
        self.ctl.silence_cuts()
    }

    // ----------------------------------------------------------------- internals

    fn stopped_at(&self, t: Instant) -> bool {
        self.stop.is_some_and(|stop| t >= stop)
    }

    /// When the next data packet is due (`None` once the application has stopped).
    fn send_due(&self) -> Option<Instant> {
        let t = match self.last_sent {
            None => self.start,
            Some(last) => last.saturating_add(self.ctl.gap(&self.p)),
        };
        (!self.stopped_at(t)).then_some(t)
    }

    /// Re-arms the silence deadline from `now`.
    fn arm_deadline(&mut self, now: Instant) {
        let wait = self
            .ctl
            .sampling_period(&self.p)
            .saturating_mul(u64::from(self.p.no_feedback_periods));
        self.feedback_deadline = Some(now.saturating_add(wait));
    }

    /// Fires whatever is due at `now`: the first rate record, the end of a hold, silence.
    fn on_time(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if !self.started && now >= self.start && !self.stopped_at(self.start) {
            self.started = true;
            self.ctl.record_rate(now, metrics);
        }
        self.ctl.end_hold_if_due(now, &self.p, metrics);
        if self.feedback_deadline.is_some_and(|d| now >= d) && !self.stopped_at(now) {
            self.ctl.silence(now, self.next_seq, &self.p, metrics);
            self.arm_deadline(now);
        }
    }

    /// Whether `fb` is a genuine report newer than the last one used.
    fn plausible(&self, now: Instant, fb: &VtpFeedback) -> bool {
        let (Some(first), Some(last)) = (self.first_sent, self.last_sent) else {
            return false;
        };
        fb.highest_seq < self.next_seq
            && fb.t_echo >= first
            && fb.t_echo <= last
            && fb.t_echo <= now
            && self
                .last_report
                .is_none_or(|prev| (fb.t_echo, fb.t_delay) > prev)
    }

    fn on_report(&mut self, now: Instant, fb: &VtpFeedback, metrics: &mut dyn MetricSink) {
        if !self.plausible(now, fb) {
            self.ignored_reports += 1;
            return;
        }
        self.last_report = Some((fb.t_echo, fb.t_delay));
        let sample = now
            .saturating_since(fb.t_echo)
            .as_nanos()
            .saturating_sub(fb.t_delay.as_nanos());
        let sample = (sample > 0).then_some(Duration::from_nanos(sample));
        self.ctl
            .on_report(now, fb, sample, self.next_seq, &self.p, metrics);
        self.arm_deadline(now);
    }
}

impl Endpoint for VtpSender {
    /// Takes a report of this flow; anything else is ignored.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let Header::VtpFeedback(fb) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Reverse {
            return;
        }
        self.stats.packets_received += 1;
        self.on_time(now, metrics);
        self.on_report(now, &fb, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.on_time(now, metrics);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        let due = self.send_due()?;
        if due > now {
            return None;
        }
        if self.first_sent.is_none() {
            self.first_sent = Some(now);
            self.ctl.start_rounds(now);
            self.arm_deadline(now);
        }
        self.last_sent = Some(now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.stats.count_sent(self.p.size);
        Some(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size: self.p.size,
            payload: self.payload,
            sent_at: now,
            header: Header::VtpData(VtpData {
                seq,
                timestamp: now,
                rtt: self.srtt().unwrap_or(Duration::ZERO),
            }),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [
            self.send_due(),
            self.ctl.hold_until(),
            self.feedback_deadline,
        ]
        .into_iter()
        .flatten()
        .filter(|&t| !self.stopped_at(t))
        .min()
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
