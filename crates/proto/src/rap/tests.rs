//! RAP's tests: the AIMD steps against their formulas, one backoff per loss cluster, and
//! closed loops over the shared harness (a chaos channel it must survive, a drop-tail
//! bottleneck it must fill and share with nothing else).

use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant, RngStream};

use super::*;
use crate::closed_loop::{Bottleneck, Channel, Mangler, run};
use crate::{Direction, Endpoint, Header, MetricSink, NullSink, Packet, VecSink};

const FLOW: FlowId = FlowId(3);

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

fn sender(config: RapConfig) -> RapSender {
    RapSender::new(
        &FlowCtx::new(FLOW, Instant::ZERO, None, RngStream::from_seed(1)),
        config,
    )
}

fn ack(seq: u64, last_recv: u64, last_miss: u64, prev_recv: u64) -> Packet {
    Packet {
        flow: FLOW,
        direction: Direction::Reverse,
        size: DataSize::bytes(64),
        payload: 0,
        sent_at: Instant::ZERO,
        header: Header::RapAck(RapAck {
            seq,
            last_recv,
            last_miss,
            prev_recv,
        }),
    }
}

/// Fires the sender's timers up to `until`, returning the sequence numbers sent and when.
fn tick_until(s: &mut RapSender, until: Instant, m: &mut dyn MetricSink) -> Vec<(Instant, u64)> {
    let mut sent = Vec::new();
    while let Some(t) = s.poll_timeout().filter(|&t| t <= until) {
        s.handle_timeout(t, m);
        while let Some(p) = s.poll_transmit(t) {
            let Header::RapData(d) = p.header else {
                panic!("a sender sends data")
            };
            sent.push((t, d.seq));
        }
    }
    sent
}

#[test]
fn before_any_ack_it_paces_by_the_initial_interval_less_the_increase_steps() {
    let mut s = sender(RapConfig {
        initial_timeout: Duration::from_secs(10),
        ..RapConfig::default()
    });
    let sent = tick_until(&mut s, ms(4_500), &mut NullSink);
    // The increase step at 2 s (one initial SRTT in) finds the allowance sent and shrinks the
    // gap to 2·2/(2 + 2) = 1 s, before that instant's tick (ns-2 fires its timers in the order
    // it set them).
    assert_eq!(
        sent,
        vec![(ms(0), 1), (ms(2_000), 2), (ms(3_000), 3), (ms(4_000), 4)]
    );
}

#[test]
fn a_packet_unacknowledged_for_the_timeout_is_lost_and_its_tick_sends_nothing() {
    // ns-2's defaults: a 2 s gap and a 2 s timeout, so the second tick finds the first packet
    // lost, backs off to a 4 s gap and sends nothing.
    let mut s = sender(RapConfig::default());
    let sent = tick_until(&mut s, ms(4_500), &mut NullSink);
    assert_eq!(sent, vec![(ms(0), 1), (ms(4_000), 2)]);
    assert_eq!((s.backoffs(), s.lost()), (1, 1));
}

#[test]
fn the_first_ack_sets_the_gap_to_the_rtt_and_each_rtt_adds_alpha_packets() {
    let size_bits = 8.0 * RapConfig::default().packet_size.as_bytes() as f64;
    let mut s = sender(RapConfig {
        initial_interval: Duration::from_millis(10),
        initial_rtt: Duration::from_millis(100),
        ..RapConfig::default()
    });
    let mut r = RapReceiver::new(FLOW);
    // A lossless path of 50 ms each way, fast enough to add no queueing.
    let mut path = Bottleneck::new(Bitrate::gbps(100), 1 << 20, Duration::from_millis(50));
    let mut m = VecSink::default();
    let mut first_ack = None;
    run(&mut s, &mut r, &mut path, ms(1_000), &mut m, |s, _, now| {
        if s.srtt().is_some() {
            first_ack.get_or_insert_with(|| (now, s.interval()));
        }
    });
    let (at, gap) = first_ack.expect("an ACK came back");
    // 100 ms and the packet's 80 ns on the link.
    assert_eq!(at, Instant::from_nanos(100_000_080));
    assert_eq!(gap, Duration::from_nanos(100_000_080), "one packet per RTT");
    let rates: Vec<f64> = m.0.iter().filter_map(|(_, r)| r.of(&RATE)).collect();
    // The start's rate, the step at 100 ms (80 ns before the first ACK, with the initial SRTT),
    // the first ACK's, then one increase per RTT.
    assert_eq!(rates[2], size_bits / 0.1, "rates {rates:?}");
    assert_eq!(rates.len(), 3 + 8, "rates {rates:?}");
    // Every step adds α = 1 packet per SRTT = 100 ms.
    for w in rates[2..].windows(2) {
        assert!(
            (w[1] - w[0] - size_bits / 0.1).abs() < 2.0,
            "rates {rates:?}"
        );
    }
    assert_eq!(s.backoffs(), 0);
}

#[test]
fn a_loss_cluster_halves_the_rate_once() {
    let mut s = sender(RapConfig {
        initial_interval: Duration::from_millis(1),
        initial_rtt: Duration::from_millis(50),
        ..RapConfig::default()
    });
    let sent = tick_until(&mut s, ms(9), &mut NullSink);
    assert_eq!(sent.len(), 10);
    let mut m = VecSink::default();
    s.handle_packet(ms(50), &ack(1, 1, 0, 0), &mut m);
    let before = s.interval();
    // Packets 2 and 3 lost; 4, 5, 6 arrive.
    s.handle_packet(ms(51), &ack(4, 4, 3, 1), &mut m);
    assert_eq!(s.backoffs(), 0, "2 is two below the highest: not yet lost");
    s.handle_packet(ms(52), &ack(5, 5, 3, 1), &mut m);
    assert_eq!((s.backoffs(), s.lost()), (1, 1), "2 is three below");
    assert_eq!(s.interval(), before * 2, "β = 0.5 doubles the gap");
    s.handle_packet(ms(53), &ack(6, 6, 3, 1), &mut m);
    assert_eq!(
        (s.backoffs(), s.lost()),
        (1, 2),
        "3 was sent before the backoff"
    );
    assert_eq!(
        m.0.iter().filter(|(_, r)| r.is(&metrics::BACKOFF)).count(),
        1
    );
}

#[test]
fn losses_of_packets_sent_before_a_backoff_cause_no_second_one() {
    let mut s = sender(RapConfig {
        initial_interval: Duration::from_millis(1),
        initial_rtt: Duration::from_millis(50),
        ..RapConfig::default()
    });
    tick_until(&mut s, ms(19), &mut NullSink);
    s.handle_packet(ms(50), &ack(1, 1, 0, 0), &mut NullSink);
    s.handle_packet(ms(51), &ack(6, 6, 2, 1), &mut NullSink);
    assert_eq!(s.backoffs(), 1, "packet 2 lost");
    // Packets 7–9 were sent before that backoff: their loss is the same cluster.
    s.handle_packet(ms(52), &ack(13, 13, 9, 6), &mut NullSink);
    assert_eq!((s.backoffs(), s.lost()), (1, 4));
}

#[test]
fn without_acks_the_timeout_backs_off_and_the_gap_stays_bounded() {
    let config = RapConfig {
        initial_interval: Duration::from_millis(10),
        max_interval: Duration::from_secs(1),
        ..RapConfig::default()
    };
    let mut s = sender(config);
    let mut gaps = Vec::new();
    let mut sent = 0;
    for second in 1..=120 {
        sent += tick_until(&mut s, ms(second * 1000), &mut NullSink).len();
        gaps.push(s.interval());
    }
    // Each timeout halves the rate; the increase steps (which need only that packets left)
    // win some back, as in ns-2, but the gap stays near its bound, far from the initial 10 ms.
    assert!(s.backoffs() > 20, "{} backoffs", s.backoffs());
    assert!(
        gaps.iter().all(|&g| g <= Duration::from_secs(1)),
        "{gaps:?}"
    );
    assert!(
        gaps[60..].iter().all(|&g| g >= Duration::from_millis(250)),
        "{gaps:?}"
    );
    assert!(sent < 500, "{sent} packets sent into a dead path");
}

#[test]
fn nothing_is_sent_at_or_after_the_stop() {
    let mut s = RapSender::new(
        &FlowCtx::new(FLOW, ms(5), Some(ms(25)), RngStream::from_seed(1)),
        RapConfig {
            initial_interval: Duration::from_millis(10),
            ..RapConfig::default()
        },
    );
    assert_eq!(s.poll_timeout(), Some(ms(5)));
    let sent = tick_until(&mut s, ms(1_000), &mut NullSink);
    assert_eq!(sent, vec![(ms(5), 1), (ms(15), 2)]);
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn impossible_acks_are_ignored() {
    let mut s = sender(RapConfig::default());
    tick_until(&mut s, ms(0), &mut NullSink);
    for bogus in [
        ack(0, 1, 0, 0),
        ack(2, 2, 0, 0),
        ack(1, 1, 1, 0),
        ack(1, 5, 3, 3),
    ] {
        s.handle_packet(ms(10), &bogus, &mut NullSink);
    }
    assert_eq!(s.ignored_acks(), 4);
    assert_eq!(s.srtt(), None);
}

/// Drops, duplicates, delays and forges packets both ways.
struct Chaos {
    m: Mangler,
}

impl Chaos {
    fn forged(&mut self) -> Packet {
        let x = self.m.rng.next_u64();
        let mut pick = || self.m.pick(&[0, 1, u64::MAX, x % 3_000]);
        let mut p = ack(pick(), pick(), pick(), pick());
        if x.is_multiple_of(3) {
            p.direction = Direction::Forward;
            p.header = Header::RapData(RapData { seq: pick() });
        }
        p
    }
}

impl Channel for Chaos {
    fn forward(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        self.m.mangle(now, p, true, out);
        if self.m.rng.bernoulli(0.02) {
            let f = self.forged();
            let to_receiver = f.direction == Direction::Forward;
            out.push((now.saturating_add(self.m.delay()), f, to_receiver));
        }
    }
    fn reverse(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        self.m.mangle(now, p, false, out);
        if self.m.rng.bernoulli(0.05) {
            let f = self.forged();
            out.push((now.saturating_add(self.m.delay()), f, false));
        }
    }
}

#[test]
fn chaos_never_panics_and_keeps_the_gap_within_its_bounds() {
    for seed in 0..8u64 {
        let config = match seed % 4 {
            0 => RapConfig::default(),
            1 => RapConfig {
                packet_size: DataSize::ZERO,
                alpha: f64::NAN,
                beta: 7.0,
                rtt_gain: 0.0,
                initial_rtt: Duration::ZERO,
                initial_interval: Duration::ZERO,
                ..RapConfig::default()
            },
            2 => RapConfig {
                fine_grain: true,
                max_rate: Some(Bitrate::mbps(5)),
                initial_interval: Duration::from_millis(1),
                ..RapConfig::default()
            },
            _ => RapConfig {
                alpha: 50.0,
                beta: 0.0,
                timeout_srtt_factor: 0.0,
                timeout_deviation_factor: f64::INFINITY,
                max_interval: Duration::from_millis(1), // at least 1000 packets/s
                ..RapConfig::default()
            },
        };
        let mut s = sender(config);
        let mut r = RapReceiver::new(FLOW);
        let mut ch = Chaos {
            m: Mangler::new(
                RngStream::from_seed(seed),
                0.1,
                0.05,
                Duration::from_millis(20),
            ),
        };
        let mut events = 0u64;
        run(
            &mut s,
            &mut r,
            &mut ch,
            Instant::from_nanos(20_000_000_000),
            &mut NullSink,
            |s, _, now| {
                events += 1;
                let gap = s.interval();
                assert!(!gap.is_zero(), "seed {seed}: a zero gap");
                assert!(gap <= Duration::from_secs(64), "seed {seed}: gap {gap:?}");
                // A timer may be due now when a packet came first at this instant.
                if let Some(t) = s.poll_timeout() {
                    assert!(t >= now, "seed {seed}: timer {t:?} before {now:?}");
                }
            },
        );
        assert!(events > 100, "seed {seed}: only {events} events");
        assert!(
            s.ignored_acks() > 0,
            "seed {seed}: no forged ACK was caught"
        );
        assert!(r.stats().packets_sent > 0, "seed {seed}: no ACK sent");
    }
}

/// Runs RAP for 60 s through a 2 Mbit/s bottleneck (40 ms each way, 25 packets of buffer);
/// returns the wire rate it got through over the last 40 s, bit/s, and the sender.
fn through_bottleneck(p_loss: f64) -> (f64, RapSender) {
    let config = RapConfig {
        initial_rtt: Duration::from_millis(100),
        initial_interval: Duration::from_millis(100),
        ..RapConfig::default()
    };
    let mut s = sender(config);
    let mut r = RapReceiver::new(FLOW);
    let mut link = Bottleneck::new(Bitrate::mbps(2), 25, Duration::from_millis(40))
        .with_loss(p_loss, RngStream::from_seed(7));
    let mut at_20s = None;
    run(
        &mut s,
        &mut r,
        &mut link,
        Instant::from_nanos(60_000_000_000),
        &mut NullSink,
        |_, r, now| {
            if now >= Instant::from_nanos(20_000_000_000) {
                at_20s.get_or_insert_with(|| r.stats().packets_received);
            }
        },
    );
    let packets = r.stats().packets_received - at_20s.unwrap_or(0);
    (packets as f64 * 8000.0 / 40.0, s)
}

#[test]
fn fills_a_bottleneck_and_saws_below_it() {
    let (rate, s) = through_bottleneck(0.0);
    // AIMD with β = 0.5 on a buffer of about a third of the BDP keeps the link busy most of
    // the time, not all of it.
    assert!(rate > 0.6 * 2e6 && rate <= 2e6, "rate {rate}");
    assert!(s.backoffs() > 3, "never probed the buffer's end");
}

#[test]
fn random_losses_cut_it_as_they_cut_tcp() {
    let (clean, _) = through_bottleneck(0.0);
    let (lossy, s) = through_bottleneck(0.02);
    // With p = 2 % and an RTT near 100 ms, the AIMD rate is about 1.22/√p packets per RTT,
    // some 700 kbit/s: well below the link (RAP does not tell random loss from congestion).
    assert!(lossy < 0.7 * clean, "{lossy} against {clean}");
    assert!(s.backoffs() > 20);
}
