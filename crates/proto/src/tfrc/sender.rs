//! The TFRC sender (RFC 5348 §4, PROTOCOLS.md §2.4–§2.5): it paces packets at the allowed
//! rate X, which it sets on every feedback report from the RTT sample, the receive rates
//! reported in the last two RTTs and the loss event rate, by slow start while p = 0 and by
//! the throughput equation after; a no-feedback timer cuts the rate when reports stop.
//!
//! The application is greedy (it always has data), so a feedback interval is never
//! data-limited and RFC 5348 §8.2's data-limited rules never apply. All rates are in bytes of
//! segment (`s`, headers excluded) per second, as the equation's are.

use crate::metric::{RATE, RECEIVE_RATE, RTT, SRTT};
use crate::tfrc::metrics::{LOSS_EVENT_RATE, X_EQUATION};
use fairstream_core::{Bitrate, Duration, FlowId, Instant};

use super::config::{
    IncreaseRule, NoFeedbackRule, ReceiveLimit, SlowStartRule, TfrcConfig, TimeoutRule,
};
use crate::tcp::RttEstimator;
use crate::tfrc::{TfrcData, TfrcFeedback};
use crate::{Direction, Endpoint, EndpointStats, FlowCtx, Header, MetricSink, Packet};

/// Receive rates remembered (RFC 5348's X_recv_set holds those of the last two RTTs; with
/// one report per RTT that is three, and more are never needed).
const RECV_SET: usize = 8;

/// Smallest RTT sample accepted (a sample of zero or less is clamped to it).
const MIN_RTT: f64 = 1e-6;

/// The rate floor without `t_mbi_floor`, bytes/s: a positive number, so that a rate halved
/// without end (ns-2 has no floor) still spaces packets by a finite, if huge, gap.
const NO_FLOOR: f64 = 1e-9;

/// ns-2's `SMALLFLOAT`: the ramp of `slow_increase_` stops within this of the target rate.
const RAMP_EPSILON: f64 = 1e-7;

/// The TFRC sender of one (sub-)connection.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    flow: FlowId,
    conn: u8,
    pub(super) config: TfrcConfig,
    /// When the application starts sending, and when it stops (`None`: never).
    start: Instant,
    stop: Option<Instant>,
    /// Segment size s, bytes.
    s: f64,
    /// Allowed rate X and the equation's rate X_Bps, bytes/s.
    x: f64,
    x_eq: f64,
    /// The rate packets are spaced by: X, or X_inst with oscillation reduction.
    x_inst: f64,
    recv_set: [(f64, Instant); RECV_SET],
    recv_len: usize,
    /// Smoothed RTT R and deviation (seconds); `None` before the first report.
    rtt: Option<f64>,
    /// ns-2's tick-based estimator of t_RTO (used by [`TimeoutRule::Ns2Ticks`]).
    ticks: RttEstimator,
    last_sample: f64,
    sqmean: f64,
    /// Loss event rate last reported.
    p: f64,
    initial_rate: f64,
    /// When the rate last doubled in slow start.
    tld: Option<Instant>,
    /// When the rate last changed (ns-2's gradual increase and slow start).
    last_change: Instant,
    /// Before the first report with p > 0 (slow start).
    in_slow_start: bool,
    /// ns-2's `oldrate_` and `delta_`: the rate packets go at while `slow_increase` ramps to X,
    /// and the step per packet.
    old_rate: f64,
    delta: f64,
    /// X_recv of the latest report, bytes/s, 0 in the first report (ns-2's `maxrate_` / 2).
    x_recv_latest: f64,
    pub(super) no_feedback_at: Instant,
    next_send: Instant,
    last_send: Option<Instant>,
    seq: u64,
    /// Reports received plus no-feedback expiries (ns-2's `round_id`), carried in data
    /// packets for the receiver's precise-loss rule.
    round: u32,
    stats: EndpointStats,
}

impl TfrcSender {
    /// A sender for sub-connection `conn` of flow `ctx`, sending from the flow's start until
    /// its stop (TFRC draws no random numbers).
    pub fn new(ctx: &FlowCtx, conn: u8, config: TfrcConfig) -> Self {
        let (flow, start) = (ctx.id, ctx.start);
        let s = config.segment();
        let tick = match config.timeout {
            TimeoutRule::Ns2Ticks { tick } => tick,
            TimeoutRule::FourRtt => Duration::from_millis(100),
        };
        let x = config.first_rate.map_or(s, |r| {
            r.as_bytes_per_sec().max(s / config.t_mbi.as_secs_f64())
        });
        let mut sender = Self {
            flow,
            conn,
            config,
            start,
            stop: ctx.stop,
            s,
            x,
            x_eq: f64::INFINITY,
            x_inst: x,
            recv_set: [(f64::INFINITY, start); RECV_SET],
            recv_len: 1,
            rtt: None,
            ticks: RttEstimator::new(
                tick,
                Duration::ZERO,
                Duration::MAX,
                Duration::ZERO,
                Duration::ZERO,
            ),
            last_sample: 0.0,
            sqmean: 0.0,
            p: 0.0,
            initial_rate: x,
            tld: None,
            last_change: start,
            in_slow_start: true,
            old_rate: x,
            delta: 0.0,
            x_recv_latest: 0.0,
            no_feedback_at: start.saturating_add(match config.no_feedback {
                // RFC 5348 §4.2: 2 s; ns-2's `start()`: two packet times at the first rate.
                NoFeedbackRule::Rfc5348 => Duration::from_secs(2),
                NoFeedbackRule::Ns2 => Duration::from_secs_f64(2.0 * s / x),
            }),
            next_send: start,
            last_send: None,
            seq: 0,
            round: 0,
            stats: EndpointStats::default(),
        };
        sender.clamp_rate();
        sender
    }

    /// The allowed sending rate X, on the wire's bits for segments (headers excluded).
    pub fn rate(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.x * 8.0)
    }

    /// Changes the ceiling on the allowed rate (`TfrcConfig::max_rate`); the rate falls to it
    /// at once if it was above.
    pub fn set_max_rate(&mut self, max_rate: Bitrate) {
        if self.config.max_rate != max_rate {
            self.config.max_rate = max_rate;
            self.clamp_rate();
        }
    }

    /// The connection number its packets carry.
    pub fn conn(&self) -> u8 {
        self.conn
    }

    /// The smoothed RTT, once known.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt.map(Duration::from_secs_f64)
    }

    /// The latest RTT sample, seconds (0 before the first).
    pub fn last_rtt_sample(&self) -> f64 {
        self.last_sample
    }

    /// The loss event rate last reported.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// Whether the sender is still in slow start: no report with p > 0 yet.
    pub fn in_slow_start(&self) -> bool {
        self.in_slow_start
    }

    /// Whether the application still has data to send at `now`.
    fn sending(&self, now: Instant) -> bool {
        self.stop.is_none_or(|stop| now < stop)
    }

    fn min_rate(&self) -> f64 {
        if self.config.t_mbi_floor {
            self.s / self.config.t_mbi.as_secs_f64()
        } else {
            NO_FLOOR
        }
    }

    fn clamp_rate(&mut self) {
        let max = self.config.max_rate.as_bytes_per_sec().max(self.min_rate());
        if !self.x.is_finite() {
            self.x = max;
        }
        self.x = self.x.clamp(self.min_rate(), max);
        self.x_inst = if self.config.oscillation_reduction && self.last_sample > 0.0 {
            (self.x * self.sqmean / self.last_sample.sqrt()).clamp(self.min_rate(), max)
        } else {
            self.x
        };
        if let Some(last) = self.last_send {
            self.next_send = last.saturating_add(Duration::from_secs_f64(self.s / self.x_inst));
        }
    }

    /// The rate the next gap is reckoned at: X_inst, or while ns-2's `slow_increase_` ramps in
    /// slow start (from the third report on), the ramp's rate, one step higher per packet.
    fn pacing_rate(&mut self) -> f64 {
        if self.config.slow_increase
            && self.round > 2
            && self.in_slow_start
            && self.old_rate + RAMP_EPSILON < self.x
        {
            self.old_rate = (self.old_rate + self.delta).max(self.min_rate());
            self.old_rate
        } else {
            self.x_inst
        }
    }

    fn recv_max(&self) -> f64 {
        self.recv_set[..self.recv_len]
            .iter()
            .map(|e| e.0)
            .fold(0.0, f64::max)
    }

    /// Adds a report's X_recv and forgets those older than two RTTs (keeping the newest).
    fn update_recv_set(&mut self, now: Instant, x_recv: f64, rtt: f64) {
        let horizon = Duration::from_secs_f64(2.0 * rtt);
        let mut kept = 0;
        for i in 0..self.recv_len {
            let entry = self.recv_set[i];
            if now.saturating_since(entry.1) <= horizon {
                self.recv_set[kept] = entry;
                kept += 1;
            }
        }
        if kept == RECV_SET {
            self.recv_set.copy_within(1.., 0);
            kept -= 1;
        }
        self.recv_set[kept] = (x_recv, now);
        self.recv_len = kept + 1;
    }

    fn t_rto(&self, rtt: f64) -> f64 {
        match self.config.timeout {
            TimeoutRule::FourRtt => 4.0 * rtt,
            TimeoutRule::Ns2Ticks { .. } => self.ticks.rtxcur().as_secs_f64(),
        }
    }

    /// RFC 5348 §4.3 step 4 (and ns-2's gradual increase): the allowed rate from p, the
    /// receive limit and slow start.
    fn set_rate(&mut self, now: Instant, rtt: f64, recv_limit: f64) {
        if self.p > 0.0 {
            self.x_eq = self
                .config
                .equation
                .rate(self.s, rtt, self.p, self.t_rto(rtt));
            let target = self.x_eq.min(recv_limit);
            self.x = match self.config.increase {
                IncreaseRule::Gradual if target > self.x => {
                    let elapsed = now.saturating_since(self.last_change).as_secs_f64();
                    let step = self.s / rtt * (elapsed / rtt).min(2.0);
                    (self.x + step).min(target)
                }
                _ => target,
            };
            self.last_change = now;
        } else if self
            .tld
            .is_none_or(|t| now.saturating_since(t).as_secs_f64() >= rtt)
        {
            self.x = (2.0 * self.x).min(recv_limit).max(self.initial_rate);
            self.tld = Some(now);
            self.last_change = now;
        }
        self.clamp_rate();
    }

    fn on_feedback(&mut self, now: Instant, fb: &TfrcFeedback, metrics: &mut dyn MetricSink) {
        if fb.t_recvdata > now {
            return; // echoes a packet from the future: not a report of ours
        }
        self.round = self.round.wrapping_add(1);
        let sample = (now.saturating_since(fb.t_recvdata).as_secs_f64() - fb.t_delay.as_secs_f64())
            .max(MIN_RTT);
        let q = self.config.rtt_filter;
        let tick = self.ticks.tick().as_secs_f64();
        self.ticks
            .update_ticks((sample / tick + 0.5).floor() as i64);
        let rtt = match self.rtt {
            None => {
                self.sqmean = sample.sqrt();
                sample
            }
            Some(r) => {
                self.sqmean = self.config.sqrt_rtt_filter * self.sqmean
                    + (1.0 - self.config.sqrt_rtt_filter) * sample.sqrt();
                q * r + (1.0 - q) * sample
            }
        };
        let first = self.rtt.is_none();
        self.rtt = Some(rtt);
        self.last_sample = sample;
        if first && self.config.slow_start == SlowStartRule::Rfc5348 {
            // RFC 5348 §4.2: W_init = min(4s, max(2s, 4380 B)), sent over one RTT.
            let w_init = (4.0 * self.s).min((2.0 * self.s).max(4380.0));
            self.initial_rate = w_init / rtt;
            self.x = self.initial_rate;
            self.tld = Some(now);
        }
        let x_recv = fb.x_recv.as_bytes_per_sec();
        self.update_recv_set(now, x_recv, rtt);
        // ns-2 keeps only the latest report's X_recv, and none from the first report.
        self.x_recv_latest = if self.round > 1 && x_recv > 0.0 {
            x_recv
        } else {
            0.0
        };
        self.p = fb.p.value();
        let rate_before = self.x;
        match self.config.slow_start {
            SlowStartRule::Ns2 if self.in_slow_start && (first || self.p <= 0.0) => {
                self.ns2_slow_start(now, rtt);
                if self.config.send_on_report {
                    self.next_send = now;
                }
            }
            SlowStartRule::Ns2 if self.in_slow_start => {
                // `OUT_OF_SLOW_START`: the equation's rate, uncapped.
                self.in_slow_start = false;
                self.x_eq = self
                    .config
                    .equation
                    .rate(self.s, rtt, self.p, self.t_rto(rtt));
                self.x = self.x_eq;
                self.old_rate = self.x;
                self.last_change = now;
                self.clamp_rate();
            }
            _ => {
                if self.p > 0.0 {
                    self.in_slow_start = false;
                }
                let recv_limit = self.receive_limit(rtt);
                self.set_rate(now, rtt, recv_limit);
            }
        }
        self.restart_no_feedback(now, rate_before);
        metrics.record(now, RTT.secs(Duration::from_secs_f64(sample)));
        metrics.record(now, SRTT.secs(Duration::from_secs_f64(rtt)));
        metrics.record(now, RECEIVE_RATE.bps(fb.x_recv));
        metrics.record(now, LOSS_EVENT_RATE.at(self.p));
        if self.x_eq.is_finite() {
            metrics.record(now, X_EQUATION.bps(Bitrate::from_bps_f64(self.x_eq * 8.0)));
        }
        metrics.record(now, RATE.bps(self.rate()));
    }

    /// The receive limit of congestion avoidance, bytes/s (see [`ReceiveLimit`]).
    fn receive_limit(&self, rtt: f64) -> f64 {
        match self.config.receive_limit {
            ReceiveLimit::Set => 2.0 * self.recv_max(),
            ReceiveLimit::Latest => (2.0 * self.x_recv_latest).max(self.s / rtt),
        }
    }

    /// ns-2's `slowstart()` on a report (see [`SlowStartRule::Ns2`]); sets `old_rate` and the
    /// per-packet step `delta` of `slow_increase`.
    fn ns2_slow_start(&mut self, now: Instant, rtt: f64) {
        let s = self.s;
        // RFC 3390's initial window in packets, as ns-2's `rfc3390()` counts it.
        let k = if s <= 1095.0 {
            4.0
        } else if s < 2190.0 {
            3.0
        } else {
            2.0
        };
        let init = k * s / rtt;
        let ss_max = 2.0 * self.x_recv_latest;
        let step = |old: f64, new: f64| (new - old) / (new * rtt / s);
        if self.round <= 2 {
            self.old_rate = self.x;
            self.x = self.x.max(init);
            self.delta = step(self.old_rate, self.x);
            self.last_change = now;
        } else if ss_max > 0.0 {
            if self.x < ss_max && now.saturating_since(self.last_change).as_secs_f64() > rtt {
                self.old_rate = self.x;
                self.x = (2.0 * self.x).min(ss_max).max(s / rtt);
                self.delta = step(self.old_rate, self.x);
                self.last_change = now;
            } else if self.x > ss_max {
                self.x = ss_max / 2.0;
                self.old_rate = self.x;
                self.delta = 0.0;
                self.last_change = now;
            }
        } else {
            self.old_rate = self.x;
            self.x = s / rtt;
            self.delta = 0.0;
            self.last_change = now;
        }
        self.clamp_rate();
    }

    /// Restarts the no-feedback timer; `rate` is the rate ns-2 reckons it with (the rate
    /// before a report's update, after an expiry's halving; RFC 5348 uses the new rate).
    fn restart_no_feedback(&mut self, now: Instant, rate: f64) {
        let secs = match (self.rtt, self.config.no_feedback) {
            (None, NoFeedbackRule::Rfc5348) => 2.0,
            (None, NoFeedbackRule::Ns2) => 2.0 * self.s / rate,
            (Some(r), NoFeedbackRule::Rfc5348) => (4.0 * r).max(2.0 * self.s / self.x),
            (Some(r), NoFeedbackRule::Ns2) => (2.0 * r).max(2.0 * self.s / rate),
        };
        self.no_feedback_at = now.saturating_add(Duration::from_secs_f64(secs));
    }

    /// RFC 5348 §4.4 (the sender is never idle), or ns-2's plain halving.
    fn on_no_feedback(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.round = self.round.wrapping_add(1);
        match (self.rtt, self.config.no_feedback) {
            (Some(rtt), NoFeedbackRule::Rfc5348) if self.p > 0.0 => {
                let x_recv = self.recv_max();
                let limit = if self.x_eq > 2.0 * x_recv {
                    x_recv
                } else {
                    self.x_eq / 2.0
                };
                let limit = limit.max(self.min_rate());
                self.recv_set[0] = (limit / 2.0, now);
                self.recv_len = 1;
                self.set_rate(now, rtt, limit);
            }
            _ => {
                self.x /= 2.0;
                self.clamp_rate();
                if self.config.send_on_report {
                    self.next_send = now;
                }
            }
        }
        self.restart_no_feedback(now, self.x);
        metrics.record(now, RATE.bps(self.rate()));
    }
}

impl Endpoint for TfrcSender {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        if let Header::TfrcFeedback(fb) = &packet.header
            && fb.conn == self.conn
            && self.last_send.is_some()
        {
            self.on_feedback(now, fb, metrics);
        }
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if now >= self.no_feedback_at && self.sending(now) && self.last_send.is_some() {
            self.on_no_feedback(now, metrics);
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if now < self.next_send || now < self.start || !self.sending(now) {
            return None;
        }
        let gap = Duration::from_secs_f64(self.s / self.pacing_rate());
        // Keep the schedule unless it fell more than a gap behind (then restart it from now).
        self.next_send = if now.saturating_since(self.next_send) > gap {
            now.saturating_add(gap)
        } else {
            self.next_send.saturating_add(gap)
        };
        self.last_send = Some(now);
        let size = self.config.packet_size;
        let seq = self.seq;
        self.seq += 1;
        self.stats.count_sent(size);
        Some(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size,
            payload: self.s as u32,
            sent_at: now,
            header: Header::TfrcData(TfrcData {
                conn: self.conn,
                seq,
                timestamp: now,
                rtt: self.rtt().unwrap_or(Duration::ZERO),
                round: self.round,
            }),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let send = self.next_send.max(self.start);
        if !self.sending(send) {
            return None;
        }
        // The no-feedback timer runs once something was sent.
        Some(match self.last_send {
            Some(_) => send.min(self.no_feedback_at),
            None => send,
        })
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
