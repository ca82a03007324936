//! Token bucket filter with Linux `tbf` semantics: rate, burst, limit, optional peak rate (PROTOCOLS.md §8.2).
//!
//! Packets wait in a FIFO of at most `limit` bytes (the kernel's child `bfifo`); the head
//! leaves when the token bucket (depth `burst`, filled at `rate`) — and, with a peak rate,
//! a second bucket (depth `mtu`, filled at `peak_rate`) — holds enough tokens for it. Both
//! buckets start full. A packet larger than a bucket can ever hold (`burst`, or `mtu` with
//! a peak rate) is dropped on arrival, as the kernel does for non-GSO packets.
//!
//! Tokens are kept as exact integers in nanobits (10⁻⁹ bit): during `dt` nanoseconds a
//! bucket of `r` bit/s gains exactly `r · dt` nanobits and a packet of `L` bytes costs
//! `8 · 10⁹ · L`. There is no rounding anywhere except the final "not before" instant, which
//! is rounded up to the first nanosecond at which the head conforms; results are therefore
//! bit-identical across runs and platforms, and a saturated bucket spaces packets with no
//! cumulative drift.

use fairstream_core::{Bitrate, DataSize, Duration, Instant};
use fairstream_records::{Column, ColumnKind, Declared, Value};

use super::droptail::Fifo;
use super::{Dequeue, QueueLimit, QueuedPacket};

/// Token units (nanobits) per byte.
const NANOBITS_PER_BYTE: u128 = 8_000_000_000;

/// Parameters of a token bucket filter (tc-tbf(8) names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TbfConfig {
    /// Token rate (`rate`); the long-run rate packets may leave at.
    pub rate: Bitrate,
    /// Bucket depth (`burst`, `buffer`, `maxburst`): bytes that may leave back to back after
    /// an idle period; also the largest packet accepted.
    pub burst: DataSize,
    /// Bytes that may wait for tokens (`limit`); an arrival beyond it is dropped.
    pub limit: DataSize,
    /// Optional peak rate (`peakrate`): a second bucket of depth `mtu` filled at this rate
    /// bounds how fast a burst drains.
    pub peak_rate: Option<Bitrate>,
    /// Depth of the peak-rate bucket (`mtu`, `minburst`); ignored without a peak rate, and
    /// [`TbfConfig::DEFAULT_MTU`] if a peak rate is given without it. With a peak rate it is
    /// also the largest packet accepted.
    pub mtu: Option<DataSize>,
}

/// A token bucket's parameters in the link summary.
pub(super) static COLUMNS: [&Column; 4] = [&RATE, &BURST, &PEAK, &MTU];
static RATE: Column = Column::new(
    "tbf_rate_bps",
    ColumnKind::Count,
    "bit/s",
    "token bucket: the token rate",
);
static BURST: Column = Column::new(
    "tbf_burst_bytes",
    ColumnKind::Count,
    "bytes",
    "token bucket: the bucket's depth",
);
static PEAK: Column = Column::new(
    "tbf_peak_bps",
    ColumnKind::Count,
    "bit/s",
    "token bucket: the peak rate (null without one)",
);
static MTU: Column = Column::new(
    "tbf_mtu_bytes",
    ColumnKind::Count,
    "bytes",
    "token bucket: the peak bucket's depth (null without a peak rate)",
);

impl TbfConfig {
    /// Peak-bucket depth used when a peak rate is given without `mtu`: the Ethernet MTU.
    pub const DEFAULT_MTU: DataSize = DataSize::bytes(1500);

    /// The parameters, as the link summary shows them.
    pub(super) fn params(&self) -> Declared {
        let mut out = vec![
            (&RATE, Value::Count(self.rate.as_bps())),
            (&BURST, Value::Count(self.burst.as_bytes())),
        ];
        if let Some(peak) = self.peak_rate {
            let mtu = self.mtu.unwrap_or(Self::DEFAULT_MTU);
            out.push((&PEAK, Value::Count(peak.as_bps())));
            out.push((&MTU, Value::Count(mtu.as_bytes())));
        }
        out
    }

    /// A filter of `rate` with bucket depth `burst` and `limit` bytes of queue, no peak rate.
    pub fn new(rate: Bitrate, burst: DataSize, limit: DataSize) -> Self {
        Self {
            rate,
            burst,
            limit,
            peak_rate: None,
            mtu: None,
        }
    }

    /// The same filter with a peak-rate bucket of depth `mtu` filled at `peak_rate`.
    pub fn with_peak(self, peak_rate: Bitrate, mtu: DataSize) -> Self {
        Self {
            peak_rate: Some(peak_rate),
            mtu: Some(mtu),
            ..self
        }
    }

    /// A filter whose limit is given as the longest time a packet may wait (tc's `latency`):
    /// `limit = rate · latency + burst`, and with a peak `(peak_rate, mtu)` at most
    /// `peak_rate · latency + mtu` (bytes rounded down).
    pub fn with_latency(
        rate: Bitrate,
        burst: DataSize,
        latency: Duration,
        peak: Option<(Bitrate, DataSize)>,
    ) -> Self {
        // A limit past what 64 bits count is no limit: saturating keeps that meaning.
        let bytes_in = |r: Bitrate| r.data_in(latency).map_or(u64::MAX, DataSize::as_bytes);
        let mut limit = bytes_in(rate).saturating_add(burst.as_bytes());
        if let Some((peak_rate, mtu)) = peak {
            limit = limit.min(bytes_in(peak_rate).saturating_add(mtu.as_bytes()));
        }
        let cfg = Self::new(rate, burst, DataSize::bytes(limit));
        match peak {
            Some((peak_rate, mtu)) => cfg.with_peak(peak_rate, mtu),
            None => cfg,
        }
    }
}

/// One token bucket.
#[derive(Clone, Debug)]
struct Bucket {
    /// Fill rate, bit/s = nanobits per nanosecond.
    rate: u64,
    /// Depth, nanobits.
    depth: u128,
    /// Tokens at the last departure, nanobits.
    tokens: u128,
}

impl Bucket {
    fn full(rate: Bitrate, depth: DataSize) -> Self {
        let depth = u128::from(depth.as_bytes()) * NANOBITS_PER_BYTE;
        Self {
            rate: rate.as_bps(),
            depth,
            tokens: depth,
        }
    }

    /// Tokens after `dt_ns` more nanoseconds of filling.
    #[inline]
    fn tokens_after(&self, dt_ns: u64) -> u128 {
        let gained = u128::from(self.rate) * u128::from(dt_ns); // < 2^128: both factors < 2^64
        self.tokens.saturating_add(gained).min(self.depth)
    }

    /// Nanoseconds until `toks` grows to `cost` (0 if it already suffices), rounded up.
    #[inline]
    fn wait_ns(&self, toks: u128, cost: u128) -> u64 {
        if toks >= cost {
            0
        } else if self.rate == 0 {
            u64::MAX
        } else {
            let rate = u128::from(self.rate);
            u64::try_from((cost - toks).div_ceil(rate)).unwrap_or(u64::MAX)
        }
    }
}

/// A token bucket filter.
#[derive(Clone, Debug)]
pub struct Tbf {
    fifo: Fifo,
    limit: QueueLimit,
    /// Largest packet accepted, bytes.
    max_size: u64,
    bucket: Bucket,
    peak: Option<Bucket>,
    /// Time of the last departure (tokens are as of then).
    t_c: Instant,
}

impl Tbf {
    /// An empty filter with full buckets.
    pub fn new(config: TbfConfig) -> Self {
        let limit = QueueLimit::Bytes(config.limit);
        let peak = config
            .peak_rate
            .map(|p| Bucket::full(p, config.mtu.unwrap_or(TbfConfig::DEFAULT_MTU)));
        let mut max_size = config.burst.as_bytes();
        if config.peak_rate.is_some() {
            max_size = max_size.min(config.mtu.unwrap_or(TbfConfig::DEFAULT_MTU).as_bytes());
        }
        Self {
            fifo: Fifo::for_limit(limit),
            limit,
            max_size,
            bucket: Bucket::full(config.rate, config.burst),
            peak,
            t_c: Instant::ZERO,
        }
    }

    /// Offers `pkt`; gives it back as `Err` if it is larger than [`Tbf::max_size`] or would
    /// take the queue beyond its byte limit.
    #[inline]
    pub fn enqueue(&mut self, _now: Instant, pkt: QueuedPacket) -> Result<(), QueuedPacket> {
        if u64::from(pkt.size) > self.max_size || !self.fifo.fits(self.limit, pkt.size) {
            return Err(pkt);
        }
        self.fifo.push(pkt);
        Ok(())
    }

    /// The head packet if the buckets hold enough tokens for it at `now` (they are then
    /// charged), else the first instant at which they will, else [`Dequeue::Empty`].
    ///
    /// [`Dequeue::NotBefore`] is exact: asking at that instant yields the packet, asking a
    /// nanosecond earlier does not. A zero rate never conforms ([`Instant::MAX`]).
    pub fn dequeue(&mut self, now: Instant) -> Dequeue {
        let Some(head) = self.fifo.front() else {
            return Dequeue::Empty;
        };
        let cost = u128::from(head.size) * NANOBITS_PER_BYTE;
        let dt = now.saturating_since(self.t_c).as_nanos();
        let toks = self.bucket.tokens_after(dt);
        let mut wait = self.bucket.wait_ns(toks, cost);
        let ptoks = self.peak.as_ref().map(|p| {
            let ptoks = p.tokens_after(dt);
            wait = wait.max(p.wait_ns(ptoks, cost));
            ptoks
        });
        if wait > 0 {
            return Dequeue::NotBefore(now.saturating_add(Duration::from_nanos(wait)));
        }
        self.bucket.tokens = toks - cost;
        if let (Some(p), Some(ptoks)) = (self.peak.as_mut(), ptoks) {
            p.tokens = ptoks - cost;
        }
        self.t_c = self.t_c.max(now);
        // The head was just seen, so this is always a packet.
        self.fifo.pop().map_or(Dequeue::Empty, Dequeue::Packet)
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

    /// The largest packet the filter accepts: `burst`, or `min(burst, mtu)` with a peak rate.
    pub fn max_size(&self) -> DataSize {
        DataSize::bytes(self.max_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    fn pkt(slot: u32, size: u32) -> QueuedPacket {
        QueuedPacket {
            slot,
            size,
            enqueued_at: Instant::ZERO,
        }
    }

    /// Dequeues everything as a driver would (waking at each "not before" instant) from
    /// `start`; returns the departure instants in nanoseconds.
    fn drain(tbf: &mut Tbf, start: Instant) -> Vec<u64> {
        let mut t = start;
        let mut out = Vec::new();
        let mut expect_slot = None;
        loop {
            match tbf.dequeue(t) {
                Dequeue::Packet(p) => {
                    if let Some(s) = expect_slot {
                        assert_eq!(p.slot, s, "FIFO order");
                    }
                    expect_slot = Some(p.slot + 1);
                    out.push(t.as_nanos());
                }
                Dequeue::NotBefore(next) => {
                    assert!(next > t);
                    // A nanosecond early is still too early, and the answer does not change.
                    let mut probe = tbf.clone();
                    assert_eq!(
                        probe.dequeue(next - Duration::from_nanos(1)),
                        Dequeue::NotBefore(next)
                    );
                    t = next;
                }
                Dequeue::Empty => return out,
            }
        }
    }

    fn fill(tbf: &mut Tbf, n: u32, size: u32) {
        for i in 0..n {
            tbf.enqueue(Instant::ZERO, pkt(i, size)).unwrap(); // tests size the limit for n packets
        }
    }

    #[test]
    fn initial_burst_then_token_rate_spacing() {
        // 8 Mbit/s = 1 byte/µs; a 3000-byte bucket passes three 1000-byte packets at once.
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::mbps(8),
            DataSize::bytes(3000),
            DataSize::kbytes(100),
        ));
        fill(&mut tbf, 10, 1000);
        let got = drain(&mut tbf, Instant::ZERO);
        let want: Vec<u64> = [0, 0, 0, 1000, 2000, 3000, 4000, 5000, 6000, 7000]
            .iter()
            .map(|t| t * US)
            .collect();
        assert_eq!(got, want);
        assert_eq!(tbf.dequeue(Instant::from_nanos(8000 * US)), Dequeue::Empty);
    }

    #[test]
    fn not_before_instants_are_exact() {
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::mbps(8),
            DataSize::bytes(3000),
            DataSize::kbytes(100),
        ));
        fill(&mut tbf, 4, 1000);
        for _ in 0..3 {
            assert!(matches!(tbf.dequeue(Instant::ZERO), Dequeue::Packet(_)));
        }
        let due = Instant::from_nanos(1000 * US);
        assert_eq!(tbf.dequeue(Instant::ZERO), Dequeue::NotBefore(due));
        assert_eq!(
            tbf.dequeue(Instant::from_nanos(999_999)),
            Dequeue::NotBefore(due)
        );
        assert!(matches!(tbf.dequeue(due), Dequeue::Packet(p) if p.slot == 3));

        // 3 Mbit/s: a 1000-byte packet takes 8/3 ms. After the two-packet burst, packet k
        // leaves at ⌈(k − 1) · 8e6 / 3⌉ ns exactly: no drift over many packets.
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::mbps(3),
            DataSize::bytes(2000),
            DataSize::kbytes(1000),
        ));
        fill(&mut tbf, 1000, 1000);
        let got = drain(&mut tbf, Instant::ZERO);
        let want: Vec<u64> = (0..1000u64)
            .map(|k| (k.saturating_sub(1) * 8_000_000).div_ceil(3))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn idle_tokens_are_capped_at_burst() {
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::mbps(8),
            DataSize::bytes(2000),
            DataSize::kbytes(100),
        ));
        fill(&mut tbf, 2, 1000);
        assert_eq!(drain(&mut tbf, Instant::ZERO), vec![0, 0]);
        let later = Instant::from_nanos(10_000_000_000);
        for i in 0..4 {
            tbf.enqueue(later, pkt(i, 1000)).unwrap(); // 4 kB < 100 kB limit
        }
        let t0 = later.as_nanos();
        assert_eq!(
            drain(&mut tbf, later),
            vec![t0, t0, t0 + 1000 * US, t0 + 2000 * US]
        );
    }

    #[test]
    fn limit_drops_arrivals_beyond_the_queued_bytes() {
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::mbps(1),
            DataSize::bytes(1500),
            DataSize::bytes(2500),
        ));
        let t = Instant::ZERO;
        assert_eq!(tbf.enqueue(t, pkt(0, 1000)), Ok(()));
        assert_eq!(tbf.enqueue(t, pkt(1, 1000)), Ok(()));
        assert_eq!(tbf.enqueue(t, pkt(2, 1000)), Err(pkt(2, 1000)));
        assert_eq!(tbf.enqueue(t, pkt(3, 500)), Ok(()));
        assert_eq!(tbf.len_bytes(), 2500);
        assert_eq!(tbf.len_packets(), 3);
        // Departure frees room.
        assert!(matches!(tbf.dequeue(t), Dequeue::Packet(p) if p.slot == 0));
        assert_eq!(tbf.enqueue(t, pkt(4, 1000)), Ok(()));
    }

    #[test]
    fn oversize_packets_are_dropped() {
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::mbps(1),
            DataSize::bytes(1500),
            DataSize::kbytes(100),
        ));
        assert_eq!(tbf.max_size(), DataSize::bytes(1500));
        assert_eq!(tbf.enqueue(Instant::ZERO, pkt(0, 1501)), Err(pkt(0, 1501)));
        assert_eq!(tbf.enqueue(Instant::ZERO, pkt(1, 1500)), Ok(()));

        let cfg = TbfConfig::new(
            Bitrate::mbps(1),
            DataSize::bytes(5000),
            DataSize::kbytes(100),
        )
        .with_peak(Bitrate::mbps(2), DataSize::bytes(1000));
        let mut tbf = Tbf::new(cfg);
        assert_eq!(tbf.max_size(), DataSize::bytes(1000));
        assert_eq!(tbf.enqueue(Instant::ZERO, pkt(0, 1001)), Err(pkt(0, 1001)));
        assert_eq!(tbf.enqueue(Instant::ZERO, pkt(1, 1000)), Ok(()));

        let mut no_mtu = TbfConfig::new(
            Bitrate::mbps(1),
            DataSize::bytes(5000),
            DataSize::kbytes(100),
        );
        no_mtu.peak_rate = Some(Bitrate::mbps(2));
        assert_eq!(Tbf::new(no_mtu).max_size(), TbfConfig::DEFAULT_MTU);
    }

    #[test]
    fn peak_rate_spaces_the_burst() {
        // Rate 1 byte/µs, burst 3000 B; peak 2 bytes/µs with a 1000-byte bucket.
        let cfg = TbfConfig::new(
            Bitrate::mbps(8),
            DataSize::bytes(3000),
            DataSize::kbytes(100),
        )
        .with_peak(Bitrate::mbps(16), DataSize::bytes(1000));
        let mut tbf = Tbf::new(cfg);
        fill(&mut tbf, 8, 1000);
        let got = drain(&mut tbf, Instant::ZERO);
        // Peak-limited every 500 µs while the main bucket lasts, then 1 per ms.
        let want: Vec<u64> = [0, 500, 1000, 1500, 2000, 3000, 4000, 5000]
            .iter()
            .map(|t| t * US)
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn zero_rate_never_conforms_after_the_burst() {
        let mut tbf = Tbf::new(TbfConfig::new(
            Bitrate::ZERO,
            DataSize::bytes(1000),
            DataSize::kbytes(10),
        ));
        fill(&mut tbf, 2, 1000);
        assert!(matches!(tbf.dequeue(Instant::ZERO), Dequeue::Packet(_)));
        assert_eq!(
            tbf.dequeue(Instant::from_nanos(5)),
            Dequeue::NotBefore(Instant::MAX)
        );
    }

    #[test]
    fn latency_sets_the_limit_like_tc() {
        // 1 Mbit/s · 100 ms = 12 500 B, + 5000 B burst.
        let c = TbfConfig::with_latency(
            Bitrate::mbps(1),
            DataSize::bytes(5000),
            Duration::from_millis(100),
            None,
        );
        assert_eq!(c.limit, DataSize::bytes(17_500));
        // Rate bound 12 500 + 50 000 = 62 500 B; peak bound 2 Mbit/s · 100 ms + 1500 = 26 500 B.
        let p = Some((Bitrate::mbps(2), DataSize::bytes(1500)));
        let c = TbfConfig::with_latency(
            Bitrate::mbps(1),
            DataSize::bytes(50_000),
            Duration::from_millis(100),
            p,
        );
        assert_eq!(c.limit, DataSize::bytes(26_500));
        assert_eq!(
            (c.peak_rate, c.mtu),
            (Some(Bitrate::mbps(2)), Some(DataSize::bytes(1500)))
        );
    }
}
