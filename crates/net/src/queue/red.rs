//! RED (Floyd & Jacobson 1993) as in ns-2 `Queue/RED`, with gentle mode (PROTOCOLS.md §8.1).
//!
//! The algorithm follows ns-2.35 `queue/red.cc` (`enque`, `estimator`, `drop_early`,
//! `calculate_p_new`, `modify_p`) without ECN, adaptive RED or the experimental "cautious"
//! modes:
//!
//! - the average is an EWMA of the instantaneous queue length seen by each arrival
//!   (before it joins), decayed by `(1 − w_q)^m` after an idle period, with
//!   `m = ⌊ptc · idle time⌋` and `ptc = link rate / (8 · mean_pktsize)`;
//! - an arrival may be dropped early only if `avg ≥ min_th` and more than one unit
//!   (packet, or byte when the queue is measured in bytes) is already queued;
//! - the first such arrival after the average crossed `min_th` only restarts the count;
//! - later ones are dropped with the base probability `p_b` (linear up to `max_th`, then
//!   linear from `max_p` to 1 up to `2 · max_th` in gentle mode, else 1), uniformised by the
//!   count since the last drop (`wait` or classic form) and scaled by `size / mean_pktsize`
//!   in byte mode;
//! - an arrival that does not fit under the limit is dropped ("forced"), and the count
//!   restarts.
//!
//! Dropped arrivals are handed back; RED never drops a packet that is already queued.

use fairstream_core::{Bitrate, DataSize, Duration, Instant, RngStream};
use fairstream_records::{Column, ColumnKind, Declared, Value};

use super::droptail::Fifo;
use super::{Dequeue, QueueLimit, QueuedPacket};

/// Parameters of a RED queue (ns-2 names in parentheses).
///
/// `None` thresholds and weight are resolved from the link when the queue is built, as
/// ns-2.35 does for `q_weight_ = -1`, `thresh_ = 0`, `maxthresh_ = 0`. Thresholds are given
/// in packets; when the queue is measured in bytes they are multiplied by `mean_pktsize`.
///
/// [`Default`] gives the ns-2.35 defaults; [`RedConfig::floyd_jacobson_1993`] and
/// [`RedConfig::ns2_classic`] give the paper's and pre-2001 ns-2 parameter sets.
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// EWMA weight `w_q` (`q_weight_`); `None`: `1 − exp(−1/(10 · RTT · ptc))` with
    /// `RTT = max(0.1 s, 3 · (link delay + 1/ptc))`.
    pub q_weight: Option<f64>,
    /// Minimum threshold in packets (`thresh_`); `None`: `max(5, target_delay · ptc / 2)`.
    pub min_th: Option<f64>,
    /// Maximum threshold in packets (`maxthresh_`); `None`: `3 · min_th`.
    pub max_th: Option<f64>,
    /// Drop probability at `max_th` (`1/linterm_`).
    pub max_p: f64,
    /// Gentle RED (`gentle_`): between `max_th` and `2 · max_th` the probability rises
    /// linearly from `max_p` to 1 instead of jumping to 1.
    pub gentle: bool,
    /// Uniformise with `p_b / (2 − count · p_b)` and no drop while `count · p_b < 1`
    /// (`wait_`), instead of the paper's `p_b / (1 − count · p_b)`.
    pub wait: bool,
    /// Byte mode (`bytes_`): the count since the last drop is measured in mean-sized
    /// packets (`⌊count_bytes / mean_pktsize⌋`) and the drop probability is scaled by
    /// `size / mean_pktsize`.
    pub byte_mode: bool,
    /// Measure the queue, and so the average and the thresholds, in bytes
    /// (`queue_in_bytes_`); thresholds are then `packets · mean_pktsize`.
    pub queue_in_bytes: bool,
    /// Mean packet size (`mean_pktsize_`), for byte mode, the thresholds in bytes and `ptc`.
    pub mean_pktsize: DataSize,
    /// Target queueing delay of the automatic `min_th` (`targetdelay_`).
    pub target_delay: Duration,
    /// Hard limit; an arrival that does not fit is dropped (forced drop).
    pub limit: QueueLimit,
}

impl Default for RedConfig {
    /// ns-2.35 defaults: automatic `w_q`, `min_th`, `max_th`; `max_p` 0.1; gentle; wait;
    /// byte mode with the queue in bytes; 500-byte mean packets; target delay 5 ms;
    /// limit 50 packets.
    fn default() -> Self {
        Self {
            q_weight: None,
            min_th: None,
            max_th: None,
            max_p: 0.1,
            gentle: true,
            wait: true,
            byte_mode: true,
            queue_in_bytes: true,
            mean_pktsize: DataSize::bytes(500),
            target_delay: Duration::from_millis(5),
            limit: QueueLimit::Packets(50),
        }
    }
}

impl RedConfig {
    /// The Floyd & Jacobson (1993) recommended parameters: `w_q` 0.002, `min_th` 5,
    /// `max_th` 15 packets, `max_p` 1/50, not gentle, packet mode; `wait` on and a limit of
    /// 50 packets as in ns-2 of the time.
    ///
    /// The paper's own uniformisation is `p_b / (1 − count · p_b)`, i.e. `wait: false`;
    /// set it explicitly to reproduce the paper's algorithm rather than its ns-2 rendering.
    pub fn floyd_jacobson_1993() -> Self {
        Self {
            max_p: 1.0 / 50.0,
            ..Self::ns2_classic()
        }
    }

    /// ns-2 classic (pre-2001) defaults: `w_q` 0.002, `min_th` 5, `max_th` 15 packets,
    /// `max_p` 0.1, not gentle, wait, packet mode, limit 50 packets.
    pub fn ns2_classic() -> Self {
        Self {
            q_weight: Some(0.002),
            min_th: Some(5.0),
            max_th: Some(15.0),
            max_p: 0.1,
            gentle: false,
            wait: true,
            byte_mode: false,
            queue_in_bytes: false,
            mean_pktsize: DataSize::bytes(500),
            target_delay: Duration::from_millis(5),
            limit: QueueLimit::Packets(50),
        }
    }
}

/// Raises `base` to an integer power by binary exponentiation: O(log e), and the same
/// result on every platform (no libm).
fn pow_u64(mut base: f64, mut e: u64) -> f64 {
    let mut acc = 1.0;
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        e >>= 1;
        if e > 0 {
            base *= base;
        }
    }
    acc
}

/// A RED queue built for a link.
#[derive(Clone, Debug)]
pub struct Red {
    fifo: Fifo,
    limit: QueueLimit,
    rng: RngStream,

    // Resolved parameters.
    w_q: f64,
    /// Thresholds in queue units (packets, or bytes when `queue_in_bytes`).
    min_th: f64,
    max_th: f64,
    /// `max_th − min_th`, or 1 if they are equal (as ns-2).
    th_diff: f64,
    max_p: f64,
    gentle: bool,
    wait: bool,
    byte_mode: bool,
    queue_in_bytes: bool,
    mean_pktsize: u64,
    /// Link rate, bit/s, for the idle-time packet count.
    link_bps: u64,

    // State.
    avg: f64,
    count: u64,
    count_bytes: u64,
    old: bool,
    idle: bool,
    idle_since: Instant,
    early_drops: u64,
    forced_drops: u64,
}

/// RED's resolved parameters in the link summary.
pub(super) static COLUMNS: [&Column; 6] = [&W_Q, &MIN_TH, &MAX_TH, &MAX_P, &IN_BYTES, &MEAN_SIZE];
static W_Q: Column = Column::new(
    "red_w_q",
    ColumnKind::Real,
    "",
    "RED: the EWMA weight of the average queue, as resolved (automatic or given)",
);
static MIN_TH: Column = Column::new(
    "red_min_th",
    ColumnKind::Real,
    "packets, or bytes with red_queue_in_bytes",
    "RED: the minimum threshold, as resolved",
);
static MAX_TH: Column = Column::new(
    "red_max_th",
    ColumnKind::Real,
    "packets, or bytes with red_queue_in_bytes",
    "RED: the maximum threshold, as resolved",
);
static MAX_P: Column = Column::new(
    "red_max_p",
    ColumnKind::Real,
    "",
    "RED: the drop probability at the maximum threshold",
);
static IN_BYTES: Column = Column::new(
    "red_queue_in_bytes",
    ColumnKind::Flag,
    "",
    "RED: whether the average and the thresholds are measured in bytes",
);
static MEAN_SIZE: Column = Column::new(
    "red_mean_pktsize_bytes",
    ColumnKind::Count,
    "bytes",
    "RED: the mean packet size (byte mode, thresholds in bytes)",
);

impl Red {
    /// The resolved parameters, as the link summary shows them.
    pub(super) fn params(&self) -> Declared {
        vec![
            (&W_Q, Value::Real(self.w_q)),
            (&MIN_TH, Value::Real(self.min_th)),
            (&MAX_TH, Value::Real(self.max_th)),
            (&MAX_P, Value::Real(self.max_p)),
            (&IN_BYTES, Value::Flag(self.queue_in_bytes)),
            (&MEAN_SIZE, Value::Count(self.mean_pktsize)),
        ]
    }

    /// Builds `config` for a link of `link_rate` and propagation delay `link_delay`,
    /// resolving the automatic parameters; `rng` drives the early drops.
    ///
    /// A zero `mean_pktsize` is taken as 1 byte. On a zero-rate link the automatic `w_q`
    /// falls back to 0.002 (the ns-2 formula is undefined there) and `min_th` to 5 packets.
    pub fn new(
        config: RedConfig,
        link_rate: Bitrate,
        link_delay: Duration,
        rng: RngStream,
    ) -> Self {
        let mean_pktsize = config.mean_pktsize.as_bytes().max(1);
        // Packets of mean size per second the link can carry.
        let ptc = link_rate.as_bps_f64() / (8.0 * mean_pktsize as f64);
        let w_q = config.q_weight.unwrap_or_else(|| {
            if ptc > 0.0 {
                let rtt = (3.0 * (link_delay.as_secs_f64() + 1.0 / ptc)).max(0.1);
                1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
            } else {
                0.002
            }
        });
        let min_th_pkts = config
            .min_th
            .unwrap_or_else(|| (config.target_delay.as_secs_f64() * ptc / 2.0).max(5.0));
        let max_th_pkts = config.max_th.unwrap_or(3.0 * min_th_pkts);
        let scale = if config.queue_in_bytes {
            mean_pktsize as f64
        } else {
            1.0
        };
        let (min_th, max_th) = (min_th_pkts * scale, max_th_pkts * scale);
        let th_diff = if max_th == min_th {
            1.0
        } else {
            max_th - min_th
        };
        Self {
            fifo: Fifo::for_limit(config.limit),
            limit: config.limit,
            rng,
            w_q,
            min_th,
            max_th,
            th_diff,
            max_p: config.max_p,
            gentle: config.gentle,
            wait: config.wait,
            byte_mode: config.byte_mode,
            queue_in_bytes: config.queue_in_bytes,
            mean_pktsize,
            link_bps: link_rate.as_bps(),
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            // ns-2 resets the queue as idle since time zero.
            idle: true,
            idle_since: Instant::ZERO,
            early_drops: 0,
            forced_drops: 0,
        }
    }

    /// Offers `pkt` at `now`; gives it back as `Err` if RED drops it (early or forced).
    pub fn enqueue(&mut self, now: Instant, pkt: QueuedPacket) -> Result<(), QueuedPacket> {
        let size = u64::from(pkt.size);
        let q = if self.queue_in_bytes {
            self.fifo.bytes() as f64
        } else {
            self.fifo.len() as f64
        };

        // Average, decayed over an idle period as if m mean-sized packets had arrived to
        // an empty queue: m = ⌊ptc · idle⌋ = ⌊link_bps · idle_ns / (8 · mean · 1e9)⌋, exact.
        let m = if self.idle {
            self.idle = false;
            let idle_ns = u128::from(now.saturating_since(self.idle_since).as_nanos());
            let m = u128::from(self.link_bps) * idle_ns
                / (8 * u128::from(self.mean_pktsize) * 1_000_000_000);
            u64::try_from(m).unwrap_or(u64::MAX)
        } else {
            0
        };
        let keep = 1.0 - self.w_q;
        let decayed = if m == 0 {
            self.avg
        } else {
            self.avg * pow_u64(keep, m)
        };
        self.avg = decayed * keep + self.w_q * q;

        self.count += 1;
        self.count_bytes += size;

        let mut early = false;
        if self.avg >= self.min_th && q > 1.0 {
            if !self.old {
                // Just crossed min_th (or the queue just became non-trivial): restart the count.
                self.old = true;
                self.count = 1;
                self.count_bytes = size;
            } else {
                early = self.drop_early(size);
            }
        } else {
            self.old = false;
        }

        if !self.fifo.fits(self.limit, pkt.size) {
            self.count = 0;
            self.count_bytes = 0;
            self.forced_drops += 1;
            return Err(pkt);
        }
        if early {
            self.early_drops += 1;
            return Err(pkt);
        }
        self.fifo.push(pkt);
        Ok(())
    }

    /// Decides an early drop of an arrival of `size` bytes; resets the count if it drops.
    fn drop_early(&mut self, size: u64) -> bool {
        let avg = self.avg;
        let p_b = if avg < self.max_th {
            self.max_p * (avg - self.min_th) / self.th_diff
        } else if self.gentle {
            (self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th).min(1.0)
        } else {
            1.0
        };
        let c = if self.byte_mode {
            (self.count_bytes / self.mean_pktsize) as f64 // integer division, as ns-2
        } else {
            self.count as f64
        };
        let cp = c * p_b;
        let mut p_a = if self.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        if self.byte_mode && p_a < 1.0 {
            p_a = p_a * size as f64 / self.mean_pktsize as f64;
        }
        // P(u < p_a) = p_a for u uniform in [0, 1); draw only when the outcome is random.
        let drop = if p_a <= 0.0 {
            false
        } else if p_a >= 1.0 {
            true
        } else {
            self.rng.uniform() < p_a
        };
        if drop {
            self.count = 0;
            self.count_bytes = 0;
        }
        drop
    }

    /// The head packet, or [`Dequeue::Empty`]. Taking the last packet starts an idle period
    /// at `now`.
    pub fn dequeue(&mut self, now: Instant) -> Dequeue {
        match self.fifo.pop() {
            Some(pkt) => {
                if self.fifo.is_empty() {
                    self.idle = true;
                    self.idle_since = now;
                }
                Dequeue::Packet(pkt)
            }
            None => Dequeue::Empty,
        }
    }

    /// Packets waiting.
    #[inline]
    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    /// Bytes waiting.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    /// The average queue length as of the last arrival, in queue units (packets, or bytes
    /// when the queue is measured in bytes).
    #[inline]
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The EWMA weight in use.
    pub fn q_weight(&self) -> f64 {
        self.w_q
    }

    /// The minimum threshold in use, in queue units.
    pub fn min_th(&self) -> f64 {
        self.min_th
    }

    /// The maximum threshold in use, in queue units.
    pub fn max_th(&self) -> f64 {
        self.max_th
    }

    /// Whether the queue, the average and the thresholds are measured in bytes.
    pub fn queue_in_bytes(&self) -> bool {
        self.queue_in_bytes
    }

    /// Arrivals dropped early (randomly) so far.
    pub fn early_drops(&self) -> u64 {
        self.early_drops
    }

    /// Arrivals dropped because they did not fit under the limit so far.
    pub fn forced_drops(&self) -> u64 {
        self.forced_drops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn pkt(slot: u32, size: u32) -> QueuedPacket {
        QueuedPacket {
            slot,
            size,
            enqueued_at: Instant::ZERO,
        }
    }

    fn red(config: RedConfig, seed: u64) -> Red {
        Red::new(
            config,
            Bitrate::mbps(10),
            Duration::from_millis(10),
            RngStream::from_seed(seed),
        )
    }

    /// Packet mode, `avg = q` exactly (w_q = 1), thresholds 5/15, max_p 0.1, roomy limit.
    fn instant_avg(gentle: bool, wait: bool) -> RedConfig {
        RedConfig {
            q_weight: Some(1.0),
            min_th: Some(5.0),
            max_th: Some(15.0),
            max_p: 0.1,
            gentle,
            wait,
            byte_mode: false,
            queue_in_bytes: false,
            limit: QueueLimit::Packets(10_000),
            ..RedConfig::default()
        }
    }

    /// Holds the queue at `hold_pkts` packets of `size` bytes and offers `n` arrivals
    /// (each accepted one is followed by one departure, so every arrival sees the same
    /// queue); returns the fraction dropped.
    fn drop_fraction(r: &mut Red, hold_pkts: usize, size: u32, n: u32) -> f64 {
        let t = Instant::ZERO;
        let mut slot = 0;
        // Fill behind RED's back: the regions under test may drop every arrival.
        while r.len_packets() < hold_pkts {
            r.fifo.push(pkt(slot, size));
            slot += 1;
        }
        // One uncounted arrival: the first one above min_th only restarts the count.
        if r.enqueue(t, pkt(slot, size)).is_ok() {
            let _ = r.dequeue(t);
        }
        slot += 1;
        let mut drops = 0u32;
        for _ in 0..n {
            match r.enqueue(t, pkt(slot, size)) {
                Ok(()) => assert!(matches!(r.dequeue(t), Dequeue::Packet(_))),
                Err(_) => drops += 1,
            }
            slot += 1;
            assert_eq!(r.len_packets(), hold_pkts);
        }
        f64::from(drops) / f64::from(n)
    }

    /// Long-run drop fraction of a renewal process in which the k-th arrival after a drop
    /// (k = 1, 2, …) is dropped with probability `p_a(k)`: 1 / E[inter-drop arrivals].
    fn renewal_fraction(p_a: impl Fn(u64) -> f64) -> f64 {
        let (mut survive, mut mean) = (1.0, 0.0);
        for k in 1..1_000_000 {
            mean += survive;
            survive *= 1.0 - p_a(k).clamp(0.0, 1.0);
            if survive < 1e-15 {
                break;
            }
        }
        1.0 / mean
    }

    fn wait_p(p_b: f64, c: f64) -> f64 {
        let cp = c * p_b;
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    }

    fn assert_close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want,
            "got {got}, want {want} (±{}%)",
            rel * 100.0
        );
    }

    #[test]
    fn defaults_are_ns2_35() {
        let c = RedConfig::default();
        assert_eq!((c.q_weight, c.min_th, c.max_th), (None, None, None));
        assert_eq!(c.max_p, 0.1);
        assert!(c.gentle && c.wait && c.byte_mode && c.queue_in_bytes);
        assert_eq!(c.mean_pktsize, DataSize::bytes(500));
        assert_eq!(c.limit, QueueLimit::Packets(50));
        let fj = RedConfig::floyd_jacobson_1993();
        assert_eq!(
            (fj.q_weight, fj.min_th, fj.max_th),
            (Some(0.002), Some(5.0), Some(15.0))
        );
        assert_eq!(fj.max_p, 0.02);
        assert!(!fj.gentle && fj.wait && !fj.byte_mode && !fj.queue_in_bytes);
    }

    #[test]
    fn auto_parameters_for_a_10mbps_link() {
        // ptc = 10e6 / (8 · 500) = 2500 packets/s.
        // 10 ms delay: RTT = 3 · (0.01 + 0.0004) = 0.0312 s → 0.1 s; w_q = 1 − e^(−1/2500).
        // min_th = max(5, 0.005 · 2500 / 2 = 6.25) = 6.25 packets; max_th = 18.75.
        let r = red(RedConfig::default(), 1);
        assert!((r.q_weight() - (1.0 - (-1.0f64 / 2500.0).exp())).abs() < 1e-15);
        assert!((r.q_weight() - 3.9992e-4).abs() < 1e-7);
        assert!(r.queue_in_bytes());
        assert_eq!(r.min_th(), 6.25 * 500.0);
        assert_eq!(r.max_th(), 18.75 * 500.0);

        let packets = RedConfig {
            byte_mode: false,
            queue_in_bytes: false,
            ..RedConfig::default()
        };
        let r = red(packets.clone(), 1);
        assert_eq!((r.min_th(), r.max_th()), (6.25, 18.75));

        // 100 ms delay: RTT = 3 · 0.1004 = 0.3012 s.
        let r = Red::new(
            packets.clone(),
            Bitrate::mbps(10),
            Duration::from_millis(100),
            RngStream::from_seed(1),
        );
        let want = 1.0 - (-1.0 / (10.0 * 0.3012 * 2500.0f64)).exp();
        assert!(
            (r.q_weight() - want).abs() < 1e-15,
            "{} vs {want}",
            r.q_weight()
        );

        // 1 Mbps: ptc = 250, target queue 1.25 → min_th = 5, max_th = 15.
        let r = Red::new(
            packets,
            Bitrate::mbps(1),
            Duration::from_millis(10),
            RngStream::from_seed(1),
        );
        assert_eq!((r.min_th(), r.max_th()), (5.0, 15.0));
        assert!((r.q_weight() - (1.0 - (-1.0f64 / 250.0).exp())).abs() < 1e-15);

        // Explicit values win.
        let r = red(RedConfig::floyd_jacobson_1993(), 1);
        assert_eq!((r.q_weight(), r.min_th(), r.max_th()), (0.002, 5.0, 15.0));
    }

    #[test]
    fn avg_stays_zero_when_arrivals_find_the_queue_empty() {
        let mut r = red(RedConfig::default(), 1);
        for i in 0..10_000u64 {
            let t = Instant::from_nanos(i * 100_000);
            assert_eq!(r.enqueue(t, pkt(0, 1000)), Ok(()));
            assert!(matches!(r.dequeue(t), Dequeue::Packet(_)));
            assert_eq!(r.avg(), 0.0);
        }
        assert_eq!(r.early_drops() + r.forced_drops(), 0);
    }

    #[test]
    fn no_early_drop_with_at_most_one_packet_queued() {
        // avg = q = 1 ≥ min_th = 0.5 (and ≥ max_th): only the "q > 1" guard prevents drops.
        let c = RedConfig {
            min_th: Some(0.5),
            max_th: Some(1.0),
            ..instant_avg(true, true)
        };
        let mut r = red(c.clone(), 3);
        assert_eq!(drop_fraction(&mut r, 1, 1000, 20_000), 0.0);
        assert_eq!(r.avg(), 1.0);
        // With two queued the same average region drops.
        let mut r = red(c, 3);
        assert!(drop_fraction(&mut r, 2, 1000, 20_000) > 0.5);
    }

    #[test]
    fn linear_region_drop_rate_matches_uniformised_p_b() {
        // avg = 10: p_b = 0.1 · (10 − 5) / (15 − 5) = 0.05.
        let p_b = 0.05;
        let mut r = red(instant_avg(true, true), 11);
        let got = drop_fraction(&mut r, 10, 1000, 300_000);
        assert_close(got, renewal_fraction(|k| wait_p(p_b, k as f64)), 0.03);
        // Inter-drop gaps are uniform on about [1/p_b, 2/p_b]: rate ≈ 2/(3/p_b).
        assert!((got - 2.0 * p_b / 3.0).abs() < 0.002, "{got}");

        let mut r = red(instant_avg(true, false), 12);
        let got = drop_fraction(&mut r, 10, 1000, 300_000);
        let want = renewal_fraction(|k| {
            let cp = k as f64 * p_b;
            if cp < 1.0 { p_b / (1.0 - cp) } else { 1.0 }
        });
        assert_close(got, want, 0.03);
        assert_eq!(r.forced_drops(), 0);
    }

    #[test]
    fn gentle_region_between_max_th_and_twice_max_th() {
        // avg = 20: p_b = 0.1 + 0.9 · (20 − 15) / 15 = 0.4.
        let p_b = 0.4;
        let mut r = red(instant_avg(true, true), 21);
        let got = drop_fraction(&mut r, 20, 1000, 200_000);
        let want = renewal_fraction(|k| wait_p(p_b, k as f64));
        assert!((want - 1.0 / 3.5).abs() < 1e-12);
        assert_close(got, want, 0.02);

        let mut r = red(instant_avg(true, false), 22);
        let got = drop_fraction(&mut r, 20, 1000, 200_000);
        let want = renewal_fraction(|k| {
            let cp = k as f64 * p_b;
            if cp < 1.0 { p_b / (1.0 - cp) } else { 1.0 }
        });
        assert_close(got, want, 0.02);

        // Not gentle: every arrival above max_th is dropped.
        let mut r = red(instant_avg(false, true), 23);
        assert_eq!(drop_fraction(&mut r, 20, 1000, 10_000), 1.0);
        // Gentle beyond 2 · max_th: likewise.
        let mut r = red(instant_avg(true, true), 24);
        assert_eq!(drop_fraction(&mut r, 31, 1000, 10_000), 1.0);
    }

    #[test]
    fn byte_mode_counts_bytes_and_scales_by_size() {
        // Queue in bytes: thresholds 2500 B / 7500 B. Holding five 1000-byte packets
        // (5000 B): p_b = 0.1 · 2500 / 5000 = 0.05; c = ⌊count · 1000 / 500⌋ = 2 · count,
        // and p_a is doubled (size / mean_pktsize = 2) while below 1.
        let p_b = 0.05;
        let c = RedConfig {
            byte_mode: true,
            queue_in_bytes: true,
            limit: QueueLimit::Packets(10_000),
            ..instant_avg(true, true)
        };
        let mut r = red(c, 31);
        assert_eq!((r.min_th(), r.max_th()), (2500.0, 7500.0));
        let got = drop_fraction(&mut r, 5, 1000, 300_000);
        let want = renewal_fraction(|k| {
            let p = wait_p(p_b, 2.0 * k as f64);
            if p < 1.0 { p * 2.0 } else { p }
        });
        assert_close(got, want, 0.03);
        // Packet-mode counting would give a clearly different rate.
        let packet_mode = renewal_fraction(|k| wait_p(p_b, k as f64));
        assert!((got - packet_mode).abs() > 0.1 * packet_mode);
    }

    #[test]
    fn byte_mode_count_is_whole_mean_sized_packets() {
        // 400-byte packets held at 26 (10 400 B, gentle region): c = ⌊400 · count / 500⌋ as
        // in ns-2 (integer division), and p_a is scaled by 0.8.
        let c = RedConfig {
            byte_mode: true,
            queue_in_bytes: true,
            limit: QueueLimit::Packets(10_000),
            ..instant_avg(true, true)
        };
        let p_b = 0.1 + 0.9 * (10_400.0 - 7500.0) / 7500.0;
        let p_a = |c: f64| {
            let p = wait_p(p_b, c);
            if p < 1.0 { p * 0.8 } else { p }
        };
        let want = renewal_fraction(|k| p_a(((400 * k) / 500) as f64));
        let mut r = red(c, 41);
        let got = drop_fraction(&mut r, 26, 400, 300_000);
        assert_close(got, want, 0.03);
        let fractional = renewal_fraction(|k| p_a(400.0 * k as f64 / 500.0));
        assert!(
            (want - fractional).abs() > 0.1 * want,
            "{want} vs {fractional}"
        );
    }

    #[test]
    fn crossing_min_th_restarts_the_count_without_dropping() {
        // avg = q = 10: p_b = 0.5 · (10 − 5) / 10 = 0.25. The first arrival above min_th sets
        // count = 1 and is kept; the next ones have count 2, 3, … With wait, p_a = 0 while
        // count < 4, and p_a(4) = 0.25, p_a(5) = 1/3, p_a(6) = 1/2, p_a(7) = 1: the first drop
        // is the 3rd to 6th arrival after the crossing one, each with probability 1/4.
        let c = RedConfig {
            max_p: 0.5,
            ..instant_avg(true, true)
        };
        let t = Instant::ZERO;
        // Fills the queue to 10 and returns which arrival after the crossing one is dropped first.
        let first_drop = |r: &mut Red, slot: &mut u32| {
            while r.len_packets() < 10 {
                r.fifo.push(pkt(*slot, 1000));
                *slot += 1;
            }
            assert_eq!(
                r.enqueue(t, pkt(*slot, 1000)),
                Ok(()),
                "the crossing arrival is kept"
            );
            let _ = r.dequeue(t);
            (1..=8usize)
                .find(|_| {
                    *slot += 1;
                    match r.enqueue(t, pkt(*slot, 1000)) {
                        Ok(()) => {
                            let _ = r.dequeue(t);
                            false
                        }
                        Err(_) => true,
                    }
                })
                .expect("a drop by count 7") // p_a(7) = 1
        };
        let mut seen = [[0u32; 9]; 2];
        for seed in 0..400 {
            let mut r = red(c.clone(), seed);
            let mut slot = 0;
            seen[0][first_drop(&mut r, &mut slot)] += 1;
            // Dip below min_th for one arrival (avg = 3), then cross again.
            while r.len_packets() > 3 {
                let _ = r.dequeue(t);
            }
            slot += 1;
            assert_eq!(r.enqueue(t, pkt(slot, 1000)), Ok(()));
            seen[1][first_drop(&mut r, &mut slot)] += 1;
        }
        for s in &seen {
            assert_eq!(s[..3].iter().sum::<u32>(), 0, "{seen:?}");
            assert_eq!(s[7..].iter().sum::<u32>(), 0, "{seen:?}");
            for n in &s[3..7] {
                assert!((70..=130).contains(n), "{seen:?}");
            }
        }
    }

    #[test]
    fn forced_drop_at_the_limit() {
        for limit in [
            QueueLimit::Packets(5),
            QueueLimit::Bytes(DataSize::bytes(5000)),
        ] {
            let c = RedConfig {
                q_weight: Some(1e-9),
                limit,
                ..RedConfig::default()
            };
            let mut r = red(c, 5);
            let t = Instant::ZERO;
            for i in 0..5 {
                assert_eq!(r.enqueue(t, pkt(i, 1000)), Ok(()));
            }
            assert_eq!(r.enqueue(t, pkt(5, 1000)), Err(pkt(5, 1000)));
            assert_eq!((r.forced_drops(), r.early_drops()), (1, 0));
            assert_eq!(
                (r.count, r.count_bytes),
                (0, 0),
                "a forced drop restarts the count"
            );
            assert_eq!(r.len_packets(), 5);
            assert!(matches!(r.dequeue(t), Dequeue::Packet(p) if p.slot == 0));
            assert_eq!(r.enqueue(t, pkt(6, 1000)), Ok(()));
        }
    }

    #[test]
    fn idle_time_decays_the_average() {
        // 10 Mbps, 500-byte mean packets: ptc = 2500/s. Thresholds out of reach.
        let c = RedConfig {
            q_weight: Some(0.1),
            min_th: Some(100.0),
            max_th: Some(300.0),
            byte_mode: false,
            queue_in_bytes: false,
            limit: QueueLimit::Packets(1000),
            ..RedConfig::default()
        };
        let mut r = red(c, 7);
        let t0 = Instant::from_nanos(MS);
        for i in 0..10 {
            r.enqueue(t0, pkt(i, 1000)).unwrap(); // far below every threshold and the limit
        }
        while r.dequeue(t0) != Dequeue::Empty {}
        let avg0 = r.avg();
        assert!(avg0 > 1.0);
        let mut busy = r.clone();

        // Idle 2.1 ms: m = ⌊2500 · 0.0021⌋ = 5, so avg = avg0 · 0.9^6 + 0.1 · 0.
        let t1 = t0 + Duration::from_micros(2100);
        r.enqueue(t1, pkt(100, 1000)).unwrap(); // far below every threshold and the limit
        assert!(
            (r.avg() - avg0 * 0.9f64.powi(6)).abs() < 1e-12,
            "{} vs {}",
            r.avg(),
            avg0 * 0.9f64.powi(6)
        );

        // Without idling (a packet still queued) only one EWMA step applies.
        busy.enqueue(t0, pkt(200, 1000)).unwrap(); // as above
        busy.enqueue(t1, pkt(201, 1000)).unwrap(); // as above
        assert!(r.avg() < busy.avg());

        // A long idle period empties the average.
        while r.dequeue(t1) != Dequeue::Empty {}
        r.enqueue(t1 + Duration::from_secs(1000), pkt(300, 1000))
            .unwrap(); // as above
        assert_eq!(r.avg(), 0.0);
    }

    #[test]
    fn same_seed_same_drops() {
        let run = |seed: u64| {
            let mut r = red(
                RedConfig {
                    min_th: Some(2.0),
                    max_th: Some(6.0),
                    ..RedConfig::default()
                },
                seed,
            );
            let mut trace = Vec::new();
            let mut t = Instant::ZERO;
            for i in 0..50_000u32 {
                t += Duration::from_micros(300);
                trace.push(r.enqueue(t, pkt(i, 200 + (i % 7) * 200)).is_ok());
                if i % 4 != 0 {
                    let _ = r.dequeue(t);
                }
                if i % 1000 == 999 {
                    while r.dequeue(t) != Dequeue::Empty {}
                }
            }
            (trace, r.avg().to_bits(), r.early_drops(), r.forced_drops())
        };
        let a = run(9);
        assert!(a.2 > 0 && a.3 > 0, "{} early, {} forced", a.2, a.3);
        assert_eq!(a, run(9));
        assert_ne!(a.0, run(10).0);
    }

    #[test]
    fn pow_u64_matches_repeated_multiplication() {
        let mut acc = 1.0f64;
        for e in 0..200u64 {
            assert!(
                (pow_u64(0.999, e) - acc).abs() <= 1e-13 * acc.max(1e-300),
                "{e}"
            );
            acc *= 0.999;
        }
        assert_eq!(pow_u64(0.5, 0), 1.0);
        assert_eq!(pow_u64(0.9, u64::MAX), 0.0);
    }
}
