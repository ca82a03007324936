//! A TCP sender and sink joined by a tiny deterministic network: a forward bottleneck of fixed
//! rate with a drop-tail queue and a fixed one-way delay, a reverse path of fixed delay, and
//! optional losses chosen by packet number or drawn at random. Time jumps from event to event.

use fairstream_proto::metric::RTT;
use fairstream_proto::tcp::metrics::{BBR_MODE, CWND, FAST_RETRANSMIT, TIMEOUT};
use std::collections::{BTreeSet, VecDeque};

use fairstream_core::{Bitrate, Duration, FlowId, Instant, RngStream};
use fairstream_proto::tcp::{TcpConfig, TcpSender, TcpSink, TcpSinkConfig, TcpVariant};
use fairstream_proto::{Endpoint, FlowCtx, Metric, Packet, VecSink};

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
        let ctx = FlowCtx::at_zero(FlowId(0), 11);
        Self::with_ctx(&ctx, cfg, sink, fwd, rev, loss)
    }

    fn with_ctx(
        ctx: &FlowCtx,
        cfg: TcpConfig,
        sink: TcpSinkConfig,
        fwd: Link,
        rev: Link,
        loss: Loss,
    ) -> Self {
        Self {
            sender: TcpSender::new(ctx, cfg),
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
        assert_eq!(pair.count(FAST_RETRANSMIT.event()), 1);
        assert_eq!(pair.count(TIMEOUT.event()), 0);
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
    let ctx = FlowCtx::new(
        FlowId(0),
        Instant::from_nanos(SECS / 2),
        Some(limit(3)),
        RngStream::from_seed(11),
    );
    // The last few packets before the stop are lost and must be retransmitted after it.
    let loss = Loss::SentDuring(limit(3) - Duration::from_millis(5), limit(3));
    let c = TcpConfig::default();
    let mut pair = Pair::with_ctx(&ctx, c, TcpSinkConfig::default(), f, r, loss);
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

// ------------------------------------------------------------------ SACK, CUBIC, BBR, linux

use fairstream_proto::tcp::{BbrParams, Control, CubicParams};

/// A SACK sender of `packets` with `control`, and its receiver (SACK blocks, no delayed ACKs).
fn sack_pair(control: Control, packets: u64, fwd: Link, rev: Link, loss: Loss) -> Pair {
    let c = TcpConfig {
        variant: TcpVariant::Sack,
        control,
        window: 64,
        ..cfg(TcpVariant::Sack, packets)
    };
    Pair::new(c, TcpSinkConfig::for_sender(&c, None), fwd, rev, loss)
}

/// AIMD, CUBIC with HyStart++, and BBR.
fn controls() -> [Control; 3] {
    [
        Control::Aimd(fairstream_proto::tcp::Aimd),
        Control::Cubic(CubicParams {
            hystart: true,
            ..CubicParams::default()
        }),
        Control::Bbr(BbrParams::default()),
    ]
}

#[test]
fn sack_recovers_four_losses_of_a_window_in_one_recovery() {
    let lost = [60, 62, 64, 66];
    let (f, r) = clean_path();
    let mut sack = sack_pair(Control::default(), 200, f, r, drops(&lost));
    sack.run(limit(100));
    sack.assert_delivered_exactly_once(200);
    assert_eq!(sack.sender.timeouts(), 0);
    assert_eq!(sack.sender.fast_retransmits(), 1);
    // Each hole once, and at most one more: RFC 6675's rescue retransmission of the highest
    // unSACKed packet, sent once the receiver's window (64) holds new data back.
    for hole in lost {
        assert_eq!(sack.sent.iter().filter(|s| s.2 && s.1 == hole).count(), 1);
    }
    assert!(sack.sender.stats().retransmits <= 5);
    // The four holes go out within one round trip of each other (NewReno: one per round trip).
    let rtx: Vec<Instant> = sack.sent.iter().filter(|s| s.2).map(|s| s.0).collect();
    assert!(rtx[3] - rtx[0] < Duration::from_millis(45), "{rtx:?}");
    let (f, r) = clean_path();
    let mut newreno = Pair::new(
        cfg(TcpVariant::NewReno, 200),
        TcpSinkConfig::default(),
        f,
        r,
        drops(&lost),
    );
    newreno.run(limit(100));
    assert!(sack.now < newreno.now, "{} vs {}", sack.now, newreno.now);
    // The ACKs carried SACK blocks and paid for them: more than 40 bytes on average.
    let s = sack.sink.stats();
    assert!(s.bytes_sent > 40 * s.packets_sent);
}

#[test]
fn every_control_delivers_a_finite_transfer_once_through_drop_tail_and_random_loss() {
    for control in controls() {
        for delayed in [false, true] {
            let fwd = Link::new(Some(Bitrate::mbps(1)), Duration::from_millis(20), 8);
            let rev = Link::new(None, Duration::from_millis(20), usize::MAX);
            let mut pair = sack_pair(control, 300, fwd, rev, Loss::None);
            if delayed {
                pair.sink = TcpSink::new(
                    FlowId(0),
                    TcpSinkConfig {
                        delayed_ack: Some(Duration::from_millis(40)),
                        sack: true,
                        ..TcpSinkConfig::default()
                    },
                );
            }
            pair.run(limit(1000));
            pair.assert_delivered_exactly_once(300);
            if !matches!(control, Control::Bbr(_)) {
                assert!(pair.fwd.drops > 0, "{control:?}: the queue overflowed");
            }
        }
        for seed in 1..=3 {
            let (f, r) = clean_path();
            let loss = Loss::Random(RngStream::from_seed(seed), 0.2);
            let mut pair = sack_pair(control, 200, f, r, loss);
            pair.run(limit(1_000_000));
            pair.assert_delivered_exactly_once(200);
        }
    }
}

#[test]
fn sack_first_packet_and_syn_losses_recovered() {
    for lost in [0, 1] {
        let (f, r) = clean_path();
        let mut pair = sack_pair(Control::default(), 50, f, r, drops(&[lost]));
        pair.run(limit(100));
        pair.assert_delivered_exactly_once(50);
    }
}

/// One bulk flow for `secs` over 10 Mbit/s, 20 ms each way, a drop-tail queue of `queue`.
fn bulk(control: Control, queue: usize, secs: u64) -> Pair {
    let fwd = Link::new(Some(Bitrate::mbps(10)), Duration::from_millis(20), queue);
    let rev = Link::new(None, Duration::from_millis(20), usize::MAX);
    let c = TcpConfig {
        variant: TcpVariant::Sack,
        control,
        window: 10_000,
        packet_size: fairstream_core::DataSize::bytes(1040),
        ..TcpConfig::default()
    };
    let mut pair = Pair::new(c, TcpSinkConfig::for_sender(&c, None), fwd, rev, Loss::None);
    pair.run(limit(secs));
    pair
}

#[test]
fn bbr_fills_the_link_with_a_short_queue_and_probes_rtt() {
    // 10 Mbit/s is 1202 packets/s of 1040 B; BDP at 40 ms ≈ 48 packets; a 500-packet queue.
    let pair = bulk(controls()[2], 500, 30);
    let goodput = pair.sink.stats().app_bytes_received as f64 * 8.0 / 30.0;
    assert!(goodput > 9.0e6, "{goodput}");
    let b = pair.sender.bbr().unwrap();
    assert!(b.full_bw_reached());
    let bw = b.bandwidth();
    assert!((1100.0..1300.0).contains(&bw), "{bw} packets/s");
    assert_eq!(b.min_rtt().map(|d| d.as_millis_f64().round()), Some(41.0));
    // BBR keeps the queue near its 2×BDP cwnd bound, far below the 500 packets drop-tail allows.
    assert_eq!(pair.fwd.drops, 0);
    let rtts: Vec<f64> = pair
        .metrics
        .0
        .iter()
        .filter(|(t, _)| *t > limit(10))
        .filter_map(|(_, m)| m.of(&RTT).map(|secs| secs * 1e3))
        .collect();
    let mean = rtts.iter().sum::<f64>() / rtts.len() as f64;
    assert!(
        mean < 100.0,
        "mean RTT {mean} ms (500 packets of queue would be 450 ms more)"
    );
    // ProbeRTT ran at least twice in 30 s (every 10 s without a lower RTT).
    let probes = pair
        .metrics
        .0
        .iter()
        .filter(|(_, m)| m.of(&BBR_MODE) == Some(3.0))
        .count();
    assert!(probes >= 2, "{probes}");
    assert!(pair.sender.pacing_rate().is_some());
}

#[test]
fn cubic_fills_the_link_and_saws_at_beta() {
    let pair = bulk(controls()[1], 50, 60);
    let goodput = pair.sink.stats().app_bytes_received as f64 * 8.0 / 60.0;
    assert!(goodput > 9.0e6, "{goodput}");
    let c = pair.sender.controller().cubic().unwrap();
    assert!(c.w_max() > 50.0, "{}", c.w_max());
    // Each window reduction keeps 0.7 of the window (cwnd right after a fast retransmit).
    let cw: Vec<(Instant, f64)> = pair
        .metrics
        .0
        .iter()
        .filter_map(|(t, m)| m.of(&CWND).map(|w| (*t, w)))
        .collect();
    let frs: Vec<Instant> = pair
        .metrics
        .0
        .iter()
        .filter(|(_, m)| m.is(&FAST_RETRANSMIT))
        .map(|(t, _)| *t)
        .collect();
    assert!(frs.len() >= 3, "{}", frs.len());
    assert_eq!(pair.sender.timeouts(), 0);
    for &t in &frs[1..] {
        let before = cw.iter().rev().find(|(u, _)| *u < t).unwrap().1;
        let after = cw.iter().find(|(u, _)| *u >= t).unwrap().1;
        assert!(after < before && after > 0.5 * before, "{before} → {after}");
    }
}

#[test]
fn the_linux_preset_runs_timestamps_and_sack_and_delayed_acks() {
    let c = TcpConfig {
        packets: Some(2000),
        ..TcpConfig::default().linux()
    };
    assert_eq!(c.segment_payload(), 1448);
    let fwd = Link::new(Some(Bitrate::mbps(10)), Duration::from_millis(20), 30);
    let rev = Link::new(None, Duration::from_millis(20), usize::MAX);
    let mut pair = Pair::new(c, TcpSinkConfig::linux(), fwd, rev, Loss::None);
    pair.run(limit(100));
    assert!(pair.sender.is_complete());
    assert_eq!(pair.sink.stats().app_bytes_received, 2000 * 1448);
    assert!(pair.fwd.drops > 0);
    // Delayed ACKs: about one ACK per two packets.
    let ratio = pair.sink.stats().packets_sent as f64 / pair.sink.stats().packets_received as f64;
    assert!(ratio > 0.45 && ratio < 0.8, "{ratio}");
    // Every ACK of new data gives the estimator a sample; the metric records are once per RTT.
    let samples = pair.sender.rtt_samples();
    let acks = pair.sink.stats().packets_sent;
    assert!(
        samples as f64 > 0.8 * acks as f64 - 100.0,
        "{samples} of {acks}"
    );
    let records = pair.count_rtt_samples() as u64;
    assert!(
        records > 20 && records < samples / 5,
        "{records} of {samples}"
    );
}

impl Pair {
    fn count_rtt_samples(&self) -> usize {
        self.metrics.0.iter().filter(|(_, m)| m.is(&RTT)).count()
    }
}
