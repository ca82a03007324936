//! A TCP sender and sink joined by a tiny deterministic network: a forward bottleneck of fixed
//! rate with a drop-tail queue and a fixed one-way delay, a reverse path of fixed delay, and
//! optional losses chosen by packet number or drawn at random. Time jumps from event to event.

use std::collections::{BTreeSet, VecDeque};

use fairstream_core::{Bitrate, Duration, FlowId, Instant, RngStream};
use fairstream_proto::tcp::{TcpConfig, TcpSender, TcpSink, TcpSinkConfig, TcpVariant};
use fairstream_proto::{Endpoint, Metric, Packet, VecSink};

/// A one-way link: FIFO serialisation at `rate` (none: infinitely fast), a drop-tail limit on
/// packets in the system, then `delay`.
struct Link {
    rate: Option<Bitrate>,
    delay: Duration,
    limit: usize,
    busy_until: Instant,
    departures: VecDeque<Instant>,
    in_flight: VecDeque<(Instant, Packet)>,
    drops: u64,
}

impl Link {
    fn new(rate: Option<Bitrate>, delay: Duration, limit: usize) -> Self {
        Self {
            rate,
            delay,
            limit,
            busy_until: Instant::ZERO,
            departures: VecDeque::new(),
            in_flight: VecDeque::new(),
            drops: 0,
        }
    }

    fn send(&mut self, now: Instant, p: Packet) {
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        if self.departures.len() >= self.limit {
            self.drops += 1;
            return;
        }
        let tx = self
            .rate
            .map_or(Duration::ZERO, |r| r.transmit_time(p.size));
        let dep = self.busy_until.max(now) + tx;
        self.busy_until = dep;
        self.departures.push_back(dep);
        self.in_flight.push_back((dep + self.delay, p));
    }

    fn next_arrival(&self) -> Option<Instant> {
        self.in_flight.front().map(|(t, _)| *t)
    }
}

/// Which packets the network drops besides queue overflow.
enum Loss {
    None,
    /// Drop the first transmission of these data packet numbers.
    FirstTransmission(BTreeSet<i64>),
    /// Drop the first transmission of data packets sent during `[from, to)`.
    SentDuring(Instant, Instant),
    /// Drop each packet (data and ACK) with this probability.
    Random(RngStream, f64),
}

struct Pair {
    sender: TcpSender,
    sink: TcpSink,
    fwd: Link,
    rev: Link,
    loss: Loss,
    now: Instant,
    metrics: VecSink,
    /// Cumulative ACKs as sent by the sink, in order.
    acks: Vec<i64>,
    /// Data packets as sent by the sender: (time, packet number, retransmission).
    sent: Vec<(Instant, i64, bool)>,
}

impl Pair {
    fn new(cfg: TcpConfig, sink: TcpSinkConfig, fwd: Link, rev: Link, loss: Loss) -> Self {
        Self {
            sender: TcpSender::new(FlowId(0), cfg, &mut RngStream::from_seed(11)),
            sink: TcpSink::new(FlowId(0), sink),
            fwd,
            rev,
            loss,
            now: Instant::ZERO,
            metrics: VecSink::default(),
            acks: Vec::new(),
            sent: Vec::new(),
        }
    }

    fn lost(&mut self, p: &Packet) -> bool {
        let now = self.now;
        match &mut self.loss {
            Loss::None => false,
            Loss::FirstTransmission(set) => {
                let h = p.tcp().expect("TCP only");
                !h.is_ack && !h.flags.retransmit && set.remove(&h.seq)
            }
            Loss::SentDuring(from, to) => {
                let h = p.tcp().expect("TCP only");
                !h.is_ack && !h.flags.retransmit && (*from..*to).contains(&now)
            }
            Loss::Random(rng, prob) => rng.bernoulli(*prob),
        }
    }

    fn flush(&mut self) {
        let now = self.now;
        while let Some(p) = self.sender.poll_transmit(now) {
            let h = p.tcp().expect("TCP data");
            self.sent.push((now, h.seq, h.flags.retransmit));
            if !self.lost(&p) {
                self.fwd.send(now, p);
            }
        }
        while let Some(p) = self.sink.poll_transmit(now) {
            self.acks.push(p.tcp().expect("TCP ACK").ack);
            if !self.lost(&p) {
                self.rev.send(now, p);
            }
        }
    }

    /// Runs until nothing is left to happen, the transfer completed, or `limit`.
    fn run(&mut self, limit: Instant) {
        loop {
            let next = [
                self.fwd.next_arrival(),
                self.rev.next_arrival(),
                self.sink.poll_timeout(),
                self.sender.poll_timeout(),
            ];
            let Some(t) = next.iter().flatten().min().copied() else {
                break;
            };
            if t > limit || self.sender.is_complete() {
                break;
            }
            assert!(t >= self.now, "time never runs backwards");
            self.now = t;
            if next[0] == Some(t) {
                let (_, p) = self.fwd.in_flight.pop_front().expect("an arrival is due");
                self.sink.handle_packet(t, &p, &mut self.metrics);
            } else if next[1] == Some(t) {
                let (_, p) = self.rev.in_flight.pop_front().expect("an arrival is due");
                self.sender.handle_packet(t, &p, &mut self.metrics);
            } else if next[2] == Some(t) {
                self.sink.handle_timeout(t, &mut self.metrics);
            } else {
                self.sender.handle_timeout(t, &mut self.metrics);
            }
            self.flush();
        }
    }

    fn count(&self, metric: Metric) -> usize {
        self.metrics.0.iter().filter(|(_, m)| *m == metric).count()
    }

    /// Checks that every packet of a finite transfer of `n` was delivered once, in order.
    fn assert_delivered_exactly_once(&self, n: u64) {
        assert!(
            self.sender.is_complete(),
            "transfer incomplete at {}",
            self.now
        );
        assert_eq!(self.sink.cumulative_ack(), n as i64);
        assert_eq!(self.sink.stats().app_bytes_received, n * 1000);
        assert!(
            self.acks.windows(2).all(|w| w[0] <= w[1]),
            "cumulative ACKs never go back"
        );
    }
}

const SECS: u64 = 1_000_000_000;

fn limit(secs: u64) -> Instant {
    Instant::from_nanos(secs * SECS)
}

fn cfg(variant: TcpVariant, packets: u64) -> TcpConfig {
    TcpConfig {
        variant,
        packets: Some(packets),
        ..TcpConfig::default()
    }
}

/// 10 Mbit/s, 20 ms each way, a queue that never overflows with window 20.
fn clean_path() -> (Link, Link) {
    (
        Link::new(Some(Bitrate::mbps(10)), Duration::from_millis(20), 1000),
        Link::new(None, Duration::from_millis(20), usize::MAX),
    )
}

fn drops(seqs: &[i64]) -> Loss {
    Loss::FirstTransmission(seqs.iter().copied().collect())
}

#[test]
fn lossless_transfer_delivers_everything_without_retransmission() {
    for variant in [TcpVariant::Reno, TcpVariant::NewReno] {
        let (f, r) = clean_path();
        let mut pair = Pair::new(
            cfg(variant, 200),
            TcpSinkConfig::default(),
            f,
            r,
            Loss::None,
        );
        pair.run(limit(100));
        pair.assert_delivered_exactly_once(200);
        assert_eq!(pair.sender.stats().retransmits, 0);
        assert_eq!(pair.sender.stats().packets_sent, 201);
        assert!(pair.sender.cwnd() >= 20.0);
        assert_eq!(pair.sender.poll_timeout(), None);
    }
}

#[test]
fn single_drop_one_fast_retransmit_no_timeout() {
    for variant in [TcpVariant::Reno, TcpVariant::NewReno] {
        let (f, r) = clean_path();
        let mut pair = Pair::new(
            cfg(variant, 200),
            TcpSinkConfig::default(),
            f,
            r,
            drops(&[60]),
        );
        pair.run(limit(100));
        pair.assert_delivered_exactly_once(200);
        assert_eq!(pair.sender.timeouts(), 0, "{variant:?}");
        assert_eq!(pair.sender.fast_retransmits(), 1, "{variant:?}");
        assert_eq!(pair.sender.stats().retransmits, 1, "{variant:?}");
        assert_eq!(pair.count(Metric::FastRetransmit), 1);
        assert_eq!(pair.count(Metric::Timeout), 0);
    }
}

#[test]
fn multiple_drops_in_one_window_newreno_recovers_reno_needs_timeout() {
    let lost = [60, 62, 64, 66];
    let run = |variant| {
        let (f, r) = clean_path();
        let mut pair = Pair::new(
            cfg(variant, 200),
            TcpSinkConfig::default(),
            f,
            r,
            drops(&lost),
        );
        pair.run(limit(100));
        pair.assert_delivered_exactly_once(200);
        pair
    };
    let newreno = run(TcpVariant::NewReno);
    assert_eq!(newreno.sender.timeouts(), 0);
    assert_eq!(newreno.sender.fast_retransmits(), 1);
    assert_eq!(newreno.sender.stats().retransmits, 4);
    let reno = run(TcpVariant::Reno);
    assert!(
        reno.sender.timeouts() >= 1,
        "Reno recovers several losses of a window only by timeout"
    );
    assert!(
        reno.now > newreno.now,
        "Reno finishes later: {} vs {}",
        reno.now,
        newreno.now
    );
}

#[test]
fn drop_tail_bottleneck_finite_transfer_delivered_exactly_once_in_order() {
    for variant in [TcpVariant::Reno, TcpVariant::NewReno] {
        for delayed_ack in [None, Some(Duration::from_millis(100))] {
            let fwd = Link::new(Some(Bitrate::mbps(1)), Duration::from_millis(20), 8);
            let rev = Link::new(None, Duration::from_millis(20), usize::MAX);
            let c = TcpConfig {
                window: 64,
                ..cfg(variant, 200)
            };
            let mut pair = Pair::new(
                c,
                TcpSinkConfig {
                    delayed_ack,
                    ..TcpSinkConfig::default()
                },
                fwd,
                rev,
                Loss::None,
            );
            pair.run(limit(1000));
            assert!(pair.fwd.drops > 0, "the queue overflowed");
            pair.assert_delivered_exactly_once(200);
            assert!(pair.sender.stats().retransmits > 0);
        }
    }
}

#[test]
fn first_data_packet_dropped_recovered() {
    for variant in [TcpVariant::Reno, TcpVariant::NewReno] {
        let (f, r) = clean_path();
        let mut pair = Pair::new(
            cfg(variant, 50),
            TcpSinkConfig::default(),
            f,
            r,
            drops(&[1]),
        );
        pair.run(limit(100));
        pair.assert_delivered_exactly_once(50);
    }
}

#[test]
fn lost_syn_retried_after_initial_rto() {
    let (f, r) = clean_path();
    let mut pair = Pair::new(
        cfg(TcpVariant::NewReno, 20),
        TcpSinkConfig::default(),
        f,
        r,
        drops(&[0]),
    );
    pair.run(limit(100));
    pair.assert_delivered_exactly_once(20);
    assert_eq!(pair.sender.timeouts(), 1);
    assert!(pair.now > limit(3));
    assert_eq!(pair.sender.initial_window(), 1.0);
}

#[test]
fn heavy_random_loss_transfer_completes() {
    for (seed, variant, delayed_ack) in [
        (1, TcpVariant::NewReno, None),
        (2, TcpVariant::Reno, None),
        (3, TcpVariant::NewReno, Some(Duration::from_millis(100))),
        (4, TcpVariant::Reno, Some(Duration::from_millis(100))),
    ] {
        let (f, r) = clean_path();
        let loss = Loss::Random(RngStream::from_seed(seed), 0.3);
        let mut pair = Pair::new(
            cfg(variant, 200),
            TcpSinkConfig {
                delayed_ack,
                ..TcpSinkConfig::default()
            },
            f,
            r,
            loss,
        );
        pair.run(limit(1_000_000));
        pair.assert_delivered_exactly_once(200);
        assert!(pair.sender.timeouts() > 0);
    }
}

#[test]
fn ftp_source_with_stop_stops_and_drains() {
    let (f, r) = clean_path();
    let c = TcpConfig {
        start: Instant::from_nanos(SECS / 2),
        stop: Some(limit(3)),
        ..TcpConfig::default()
    };
    // The last few packets before the stop are lost and must be retransmitted after it.
    let loss = Loss::SentDuring(limit(3) - Duration::from_millis(5), limit(3));
    let mut pair = Pair::new(c, TcpSinkConfig::default(), f, r, loss);
    pair.run(limit(100));
    assert!(pair.sender.is_complete());
    let sent = pair.sender.max_seq();
    assert!(sent > 100);
    assert_eq!(pair.sink.cumulative_ack(), sent);
    // Nothing before the start, no new data after the stop; everything sent was delivered.
    assert!(
        pair.sent
            .iter()
            .all(|(t, _, _)| *t >= Instant::from_nanos(SECS / 2))
    );
    assert!(pair.sent.iter().all(|(t, _, rtx)| *t < limit(3) || *rtx));
    assert!(
        pair.sent.iter().any(|(t, _, _)| *t >= limit(3)),
        "the lost packets are retransmitted after the stop"
    );
    assert_eq!(pair.sink.stats().app_bytes_received, sent as u64 * 1000);
}
