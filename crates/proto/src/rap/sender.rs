//! The RAP sender (Rejaie, Handley, Estrin 1999; ns-2's `Agent/RAP`) as a sans-IO
//! [`Endpoint`]: a greedy application paced one packet per inter-packet gap (IPG), the gap
//! moved by additive increase and multiplicative decrease of the rate.
//!
//! - **Increase**, once per smoothed RTT when the application sent at least
//!   [`RapConfig::min_send_fraction`] of what the gap allowed: `IPG ← IPG·SRTT/(α·IPG + SRTT)`,
//!   the rate growing by α packets per RTT.
//! - **Decrease**, on a loss found by an ACK or by the loss timeout (see [`super::history`]):
//!   `IPG ← IPG/β`; every packet in flight then becomes inactive (one backoff per loss
//!   cluster), and the next increase is one SRTT away.
//! - The timer-based detection runs at each IPG tick, before sending: a tick that finds a loss
//!   sends nothing.
//! - RTT: samples from the ACKs (`now` less the packet's departure) through
//!   `SRTT ← SRTT + δ·(sample − SRTT)`, the mean deviation likewise, and the loss timeout
//!   `μ·SRTT + φ·deviation`. The first ACK sets the gap to SRTT: one packet per RTT.
//! - Fine-grain adaptation (optional): the gap is paced as `IPG·FRTT/XRTT`.
//!
//! Where this differs from ns-2: ns-2 starts its RTT filter from the first sample only for
//! the first RAP agent of a simulation (a `static` flag); here every sender does. Its IPG has
//! no upper bound; here [`RapConfig::max_interval`] bounds it. Its `overhead_` jitter (0 by
//! default) is not modelled.
//!
//! An ACK is ignored (counted in [`RapSender::ignored_acks`]) when it names a packet never
//! sent or a hole that cannot be (`last_miss` not below `last_recv`, `prev_recv` not below
//! `last_miss`).

use fairstream_core::{Bitrate, Duration, FlowId, Instant};

use super::config::{DATA_HEADERS, MIN_RTT_SECS, Params};
use super::history::History;
use super::metrics::BACKOFF;
use super::{RapAck, RapConfig, RapData};
use crate::metric::{RATE, RTT, SRTT};
use crate::{Direction, Endpoint, EndpointStats, FlowCtx, Header, MetricSink, Packet};

/// The RTT filters: the smoothed RTT and mean deviation, the loss timeout, and fine-grain
/// adaptation's short- and long-term RTTs (seconds).
#[derive(Clone, Copy, Debug)]
struct RttFilter {
    srtt: f64,
    deviation: f64,
    timeout: f64,
    frtt: f64,
    xrtt: f64,
    sampled: bool,
}

impl RttFilter {
    fn new(c: &RapConfig) -> Self {
        let srtt = c.initial_rtt.as_secs_f64().max(MIN_RTT_SECS);
        Self {
            srtt,
            deviation: 0.0,
            timeout: c.initial_timeout.as_secs_f64().max(MIN_RTT_SECS),
            frtt: srtt,
            xrtt: srtt,
            sampled: false,
        }
    }

    fn update(&mut self, sample: f64, p: &Params) {
        if !self.sampled {
            self.sampled = true;
            self.srtt = sample;
            self.frtt = sample;
            self.xrtt = sample;
            self.deviation = 0.0;
        }
        let diff = sample - self.srtt;
        self.srtt += p.rtt_gain * diff;
        self.deviation += p.rtt_gain * (diff.abs() - self.deviation);
        self.timeout = p.mu * self.srtt + p.phi * self.deviation;
        self.frtt = (1.0 - p.kfrtt) * self.frtt + p.kfrtt * sample;
        self.xrtt = (1.0 - p.kxrtt) * self.xrtt + p.kxrtt * sample;
    }

    /// The smoothed RTT the rate control works with, at least [`MIN_RTT_SECS`].
    fn srtt(&self) -> f64 {
        self.srtt.max(MIN_RTT_SECS)
    }
}

/// A RAP sender with a greedy application between its start and stop times.
#[derive(Clone, Debug)]
pub struct RapSender {
    flow: FlowId,
    config: RapConfig,
    start: Instant,
    stop: Option<Instant>,
    p: Params,
    rtt: RttFilter,
    /// The inter-packet gap, seconds.
    ipg: f64,
    history: History,
    /// The next sequence number (from 1).
    next_seq: u64,
    /// The next IPG tick and the next increase step (`None` before the start).
    next_tick: Option<Instant>,
    next_increase: Option<Instant>,
    /// Packets sent since the last increase step.
    sent_since_increase: u64,
    /// A packet the last tick allows, until the driver drains it.
    due: bool,
    heard: bool,
    payload: u32,
    backoffs: u64,
    lost: u64,
    ignored_acks: u64,
    stats: EndpointStats,
}

impl RapSender {
    /// The sender of flow `ctx`. Nothing is sent before the flow's start (which
    /// [`Endpoint::poll_timeout`] reports until then) nor at or after its stop. RAP draws no
    /// random numbers.
    pub fn new(ctx: &FlowCtx, config: RapConfig) -> Self {
        let p = Params::new(&config);
        Self {
            flow: ctx.id,
            start: ctx.start,
            stop: ctx.stop,
            rtt: RttFilter::new(&config),
            ipg: p.bound(config.initial_interval.as_secs_f64()),
            history: History::default(),
            next_seq: 1,
            next_tick: None,
            next_increase: None,
            sent_since_increase: 0,
            due: false,
            heard: false,
            payload: u32::try_from(p.size.as_bytes() - DATA_HEADERS).unwrap_or(u32::MAX),
            backoffs: 0,
            lost: 0,
            ignored_acks: 0,
            stats: EndpointStats::default(),
            p,
            config,
        }
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &RapConfig {
        &self.config
    }

    /// The rate the gap allows (whole packets on the wire).
    pub fn rate(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.p.size.as_bytes() as f64 * 8.0 / self.ipg)
    }

    /// The inter-packet gap.
    pub fn interval(&self) -> Duration {
        Duration::from_secs_f64(self.ipg)
    }

    /// The smoothed RTT (`None` before the first sample).
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt
            .sampled
            .then(|| Duration::from_secs_f64(self.rtt.srtt))
    }

    /// The loss timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.rtt.timeout)
    }

    /// Packets sent whose fate no ACK or timeout has settled yet.
    pub fn unsettled(&self) -> usize {
        self.history.len()
    }

    /// Multiplicative decreases so far.
    pub fn backoffs(&self) -> u64 {
        self.backoffs
    }

    /// Packets found lost so far (inactive ones included).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// ACKs ignored as naming a packet never sent or an impossible hole.
    pub fn ignored_acks(&self) -> u64 {
        self.ignored_acks
    }

    fn stopped_at(&self, t: Instant) -> bool {
        self.stop.is_some_and(|stop| t >= stop)
    }

    fn record_rate(&self, now: Instant, metrics: &mut dyn MetricSink) {
        metrics.record(now, RATE.bps(self.rate()));
    }

    /// The wait until the next tick: the gap, or with fine-grain adaptation `IPG·FRTT/XRTT`.
    fn wait(&self) -> Duration {
        let ipg = if self.config.fine_grain {
            self.ipg * self.rtt.frtt.max(MIN_RTT_SECS) / self.rtt.xrtt.max(MIN_RTT_SECS)
        } else {
            self.ipg
        };
        Duration::from_secs_f64(self.p.bound(ipg)).max(Duration::from_nanos(1))
    }

    fn srtt_wait(&self) -> Duration {
        Duration::from_secs_f64(self.rtt.srtt())
    }

    /// The multiplicative decrease.
    fn back_off(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.ipg = self.p.bound(self.ipg / self.p.beta);
        self.history.deactivate(self.next_seq);
        self.next_increase = Some(now.saturating_add(self.srtt_wait()));
        self.backoffs += 1;
        metrics.record(now, BACKOFF.event());
        self.record_rate(now, metrics);
    }

    /// The increase step, due once per SRTT.
    fn on_increase_step(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        let allowed = self.rtt.srtt() / self.ipg;
        if self.sent_since_increase as f64 >= self.p.min_send_fraction * allowed {
            let srtt = self.rtt.srtt();
            self.ipg = self
                .p
                .bound(self.ipg * srtt / (self.p.alpha * self.ipg + srtt));
            self.record_rate(now, metrics);
        }
        self.sent_since_increase = 0;
        self.next_increase = Some(now.saturating_add(self.srtt_wait()));
    }

    /// The IPG tick: the timer-based detection, then a packet unless it found a loss.
    fn on_tick(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        let timeout = Duration::from_secs_f64(self.rtt.timeout.max(MIN_RTT_SECS));
        let losses = self.history.on_timer(now, timeout);
        self.lost += losses.total();
        if losses.active > 0 {
            self.back_off(now, metrics);
        } else {
            self.due = true;
        }
        self.next_tick = Some(now.saturating_add(self.wait()));
    }

    /// Whether `ack` could come from a receiver of what was sent.
    fn plausible(&self, ack: &RapAck) -> bool {
        let sent = 1..self.next_seq;
        sent.contains(&ack.seq)
            && sent.contains(&ack.last_recv)
            && ack.seq <= ack.last_recv
            && ack.last_miss < ack.last_recv
            && (ack.last_miss == 0 || ack.prev_recv < ack.last_miss)
    }

    fn on_ack(&mut self, now: Instant, ack: &RapAck, metrics: &mut dyn MetricSink) {
        if !self.plausible(ack) {
            self.ignored_acks += 1;
            return;
        }
        if let Some(sent) = self.history.take(ack.seq) {
            let sample = now.saturating_since(sent);
            self.rtt.update(sample.as_secs_f64(), &self.p);
            metrics.record(now, RTT.secs(sample));
            metrics.record(now, SRTT.secs(Duration::from_secs_f64(self.rtt.srtt)));
        }
        if !self.heard {
            self.heard = true;
            self.ipg = self.p.bound(self.rtt.srtt());
            self.record_rate(now, metrics);
        }
        let losses = self.history.on_ack(ack);
        self.lost += losses.total();
        if losses.active > 0 {
            self.back_off(now, metrics);
        }
    }

    /// Starts the timers at the flow's start: the increase step at once (which finds nothing
    /// sent, so does not increase), then the first tick.
    fn begin(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        self.next_increase = Some(now);
        self.next_tick = Some(now);
        self.record_rate(now, metrics);
    }
}

impl Endpoint for RapSender {
    /// Takes an ACK of this flow; anything else is ignored.
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let Header::RapAck(ack) = packet.header else {
            return;
        };
        if packet.flow != self.flow || packet.direction != Direction::Reverse {
            return;
        }
        self.stats.packets_received += 1;
        self.on_ack(now, &ack, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if self.stopped_at(now) {
            return;
        }
        if self.next_tick.is_none() {
            if now < self.start {
                return;
            }
            self.begin(now, metrics);
        }
        if self.next_increase.is_some_and(|t| t <= now) {
            self.on_increase_step(now, metrics);
        }
        if self.next_tick.is_some_and(|t| t <= now) {
            self.on_tick(now, metrics);
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if !std::mem::take(&mut self.due) || self.stopped_at(now) {
            return None;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.history.push(seq, now);
        self.sent_since_increase += 1;
        self.stats.count_sent(self.p.size);
        Some(Packet {
            flow: self.flow,
            direction: Direction::Forward,
            size: self.p.size,
            payload: self.payload,
            sent_at: now,
            header: Header::RapData(RapData { seq }),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let next = match self.next_tick {
            None => Some(self.start),
            Some(tick) => self.next_increase.map_or(Some(tick), |i| Some(i.min(tick))),
        };
        next.filter(|&t| !self.stopped_at(t))
    }

    fn stats(&self) -> EndpointStats {
        self.stats
    }
}
