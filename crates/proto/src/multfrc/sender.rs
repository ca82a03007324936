//! MULTFRC's sending side: up to `max_connections` TFRC senders, a period timer that adjusts
//! the target n from the RTT samples of all of them (inverse increase, additive decrease), and
//! the opening and closing of connections to follow round(n). Connections get fresh numbers
//! (wrapping at 256) so that a receiver never mistakes a new connection for an old one.

use crate::metric::{RATE, RTT};
use crate::multfrc::metrics::{CONNECTION_TARGET, CONNECTIONS};
use fairstream_core::{Bitrate, Duration, Instant};

use super::MultfrcConfig;
use crate::tfrc::TfrcSender;
use crate::{Endpoint, EndpointStats, FlowCtx, Metric, MetricSink, NullSink, Packet};

/// Takes the connections' RTT samples into the period's sums and forwards them (so the flow's
/// mean RTT counts them); their other records (per-connection rates) stay out of the flow's.
struct RttTap<'a> {
    inner: &'a mut dyn MetricSink,
    sum: &'a mut f64,
    count: &'a mut u32,
    min: &'a mut f64,
    /// Set when the connection this report is for gave an RTT sample.
    sampled: bool,
}

impl MetricSink for RttTap<'_> {
    fn record(&mut self, now: Instant, metric: Metric) {
        if let Some(secs) = metric.of(&RTT) {
            *self.sum += secs;
            *self.count += 1;
            *self.min = self.min.min(secs);
            self.sampled = true;
            self.inner.record(now, metric);
        }
    }
}

/// A set of connection numbers (0 to 255).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ConnSet([u128; 2]);

impl ConnSet {
    fn insert(&mut self, conn: u8) {
        self.0[usize::from(conn >> 7)] |= 1u128 << (conn & 127);
    }
    fn contains(&self, conn: u8) -> bool {
        self.0[usize::from(conn >> 7)] & (1u128 << (conn & 127)) != 0
    }
}

/// The MULTFRC sender.
#[derive(Clone, Debug)]
pub struct MultfrcSender {
    /// The flow; each connection opened runs from its opening to the flow's stop.
    ctx: FlowCtx,
    config: MultfrcConfig,
    pub(super) conns: Vec<TfrcSender>,
    /// Number the next opened connection gets.
    next_conn: u8,
    n: f64,
    rtt_min: f64,
    rtt_min_since: Instant,
    /// RTT samples of the current period, and the connections that gave one.
    rtt_sum: f64,
    rtt_count: u32,
    reported: ConnSet,
    pub(super) next_update: Instant,
    /// Counters of connections already closed.
    closed: EndpointStats,
}

impl MultfrcSender {
    /// Bytes a sender for `config` allocates when built.
    pub fn heap_bytes(config: &MultfrcConfig) -> usize {
        config.max_connections.clamp(1, 128) as usize * size_of::<TfrcSender>()
    }

    /// The sender of flow `ctx`.
    pub fn new(ctx: &FlowCtx, config: MultfrcConfig) -> Self {
        let cap = config.max_connections.clamp(1, 128) as usize;
        let start = ctx.start;
        let mut sender = Self {
            ctx: ctx.clone(),
            config,
            conns: Vec::with_capacity(cap),
            next_conn: 0,
            n: config.initial.clamp(1.0, cap as f64),
            rtt_min: f64::INFINITY,
            rtt_min_since: start,
            rtt_sum: 0.0,
            rtt_count: 0,
            reported: ConnSet::default(),
            next_update: start,
            closed: EndpointStats::default(),
        };
        sender.resize(start);
        sender.next_update = start + Duration::from_secs(1);
        sender
    }

    /// The target n (real) and the connections open.
    pub fn connections(&self) -> (f64, usize) {
        (self.n, self.conns.len())
    }

    /// The sum of the connections' allowed rates.
    pub fn rate(&self) -> Bitrate {
        Bitrate::bps(self.conns.iter().map(|c| c.rate().as_bps()).sum())
    }

    fn max_connections(&self) -> usize {
        self.config.max_connections.clamp(1, 128) as usize
    }

    /// Opens or closes connections until round(n) are open.
    fn resize(&mut self, now: Instant) {
        let target = (self.n.round() as usize).clamp(1, self.max_connections());
        while self.conns.len() < target {
            let conn = FlowCtx {
                start: now,
                ..self.ctx.clone()
            };
            let (sender, _) = self.config.tfrc.pair(&conn, self.next_conn);
            self.conns.push(sender);
            self.next_conn = self.next_conn.wrapping_add(1);
        }
        while self.conns.len() > target {
            // Close the connection with the lowest allowed rate.
            let Some((i, _)) = self
                .conns
                .iter()
                .enumerate()
                .min_by_key(|(_, c)| c.rate().as_bps())
            else {
                break;
            };
            let gone = self.conns.swap_remove(i).stats();
            self.closed.packets_sent += gone.packets_sent;
            self.closed.bytes_sent += gone.bytes_sent;
        }
        // The ceiling is the aggregate's: each open connection gets an equal share.
        let open = self.conns.len().max(1) as u64;
        let share = Bitrate::bps(self.config.tfrc.sender.max_rate.as_bps() / open);
        for c in &mut self.conns {
            c.set_max_rate(share);
        }
    }

    /// Whether the period's RTT can judge the connections open: each of them reported in it and
    /// none is still in slow start.
    fn settled(&self) -> bool {
        self.conns
            .iter()
            .all(|c| self.reported.contains(c.conn()) && !c.in_slow_start())
    }

    /// One period's rule: n += β/n while the mean RTT stays below (1 + α)·rtt_min, else n −= β;
    /// a period that cannot judge (see [`Self::settled`]) is discarded.
    fn update(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if let Some(reset) = self.config.rtt_min_reset
            && now.saturating_since(self.rtt_min_since) >= reset
        {
            self.rtt_min = f64::INFINITY;
            self.rtt_min_since = now;
        }
        let period = if self.rtt_count > 0 {
            let avg = self.rtt_sum / f64::from(self.rtt_count);
            if self.settled() {
                let beta = self.config.beta;
                if avg < (1.0 + self.config.alpha) * self.rtt_min {
                    self.n += beta / self.n;
                } else {
                    self.n = (self.n - beta).max(1.0);
                }
                self.n = self.n.min(self.max_connections() as f64);
                self.resize(now);
                metrics.record(now, CONNECTION_TARGET.at(self.n));
                metrics.record(now, CONNECTIONS.count(self.conns.len() as u64));
                metrics.record(now, RATE.bps(self.rate()));
            }
            avg
        } else {
            // No sample this period (no feedback yet): look again in a second.
            1.0
        };
        self.rtt_sum = 0.0;
        self.rtt_count = 0;
        self.reported = ConnSet::default();
        let period = self
            .config
            .update_period
            .unwrap_or_else(|| Duration::from_secs_f64(period.max(1e-3)));
        self.next_update = now + period.max(Duration::from_millis(1));
    }
}

impl Endpoint for MultfrcSender {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        let crate::Header::TfrcFeedback(fb) = &packet.header else {
            return;
        };
        let Some(conn) = self.conns.iter_mut().find(|c| c.conn() == fb.conn) else {
            return; // a report for a connection already closed
        };
        let mut tap = RttTap {
            inner: metrics,
            sum: &mut self.rtt_sum,
            count: &mut self.rtt_count,
            min: &mut self.rtt_min,
            sampled: false,
        };
        conn.handle_packet(now, packet, &mut tap);
        if tap.sampled {
            self.reported.insert(fb.conn);
        }
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        for c in &mut self.conns {
            c.handle_timeout(now, &mut NullSink);
        }
        if now >= self.next_update && !self.ctx.stopped_at(now) && now >= self.ctx.start {
            self.update(now, metrics);
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.conns.iter_mut().find_map(|c| c.poll_transmit(now))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let conns = self.conns.iter().filter_map(|c| c.poll_timeout()).min()?;
        Some(conns.min(self.next_update))
    }

    fn stats(&self) -> EndpointStats {
        let mut s = self.closed;
        for c in &self.conns {
            let cs = c.stats();
            s.packets_sent += cs.packets_sent;
            s.bytes_sent += cs.bytes_sent;
        }
        s
    }
}
