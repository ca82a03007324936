//! Conformance tests of MULTFRC's connection rule as a state machine (no simulator).

use crate::metric::RTT;
use crate::multfrc::metrics::{CONNECTION_TARGET, CONNECTIONS};
use fairstream_core::{Bitrate, Duration, FlowId, Instant};

use super::*;
use crate::tfrc::{LossRate, TfrcFeedback};
use crate::{Direction, Endpoint, FlowCtx, Header, Packet, VecSink};

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

fn report(conn: u8, echo: Instant, delay: Duration) -> Packet {
    Packet {
        flow: FlowId(0),
        direction: Direction::Reverse,
        size: crate::udp_feedback_size(TfrcFeedback::WIRE_LEN),
        payload: 0,
        sent_at: echo,
        header: Header::TfrcFeedback(TfrcFeedback {
            conn,
            t_recvdata: echo,
            t_delay: delay,
            x_recv: Bitrate::mbps(10),
            p: LossRate::from_f64(0.01),
        }),
    }
}

/// Drives the sender for `periods` update periods in which every open connection gets one
/// report with an RTT sample of `rtt_ms(period)`; returns the (n, N) after each update.
fn drive(
    sender: &mut MultfrcSender,
    from: u64,
    periods: u64,
    rtt_ms: impl Fn(u64) -> u64,
) -> Vec<(f64, usize)> {
    let mut sink = VecSink::default();
    let mut out = Vec::new();
    let mut now = from;
    for k in 0..periods {
        let rtt = rtt_ms(k);
        // Let every connection send, then report on each with this period's RTT.
        for _ in 0..4 {
            while sender.poll_transmit(ms(now)).is_some() {}
            now += 1;
        }
        let conns: Vec<u8> = sender.conns.iter().map(|c| c.conn()).collect();
        for c in conns {
            sender.handle_packet(
                ms(now + rtt),
                &report(c, ms(now), Duration::ZERO),
                &mut sink,
            );
        }
        now = sender.next_update.as_nanos() / 1_000_000 + 1;
        now = now.max(from);
        sender.handle_timeout(ms(now), &mut sink);
        out.push(sender.connections());
    }
    out
}

#[test]
fn opens_connections_while_the_rtt_stays_near_its_minimum() {
    let mut s = MultfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), MultfrcConfig::default());
    assert_eq!(s.connections(), (1.0, 1));
    // Constant RTT: below (1 + α)·rtt_min every period, so n += 1/n: 1, 2, 2.5, 2.9, 3.24, …
    let steps = drive(&mut s, 0, 5, |_| 100);
    let ns: Vec<f64> = steps.iter().map(|x| x.0).collect();
    let mut n = 1.0f64;
    for got in &ns {
        n += 1.0 / n;
        assert!((got - n).abs() < 1e-9, "{ns:?}");
    }
    assert_eq!(steps[0].1, 2);
    assert_eq!(steps[4].1, (n.round()) as usize);
}

#[test]
fn the_rate_cap_holds_for_the_aggregate_of_the_connections() {
    let cap = Bitrate::kbps(1200);
    let mut capped = MultfrcConfig::default();
    capped.tfrc.sender.max_rate = cap;
    let mut s = MultfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), capped);
    let mut free = MultfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), MultfrcConfig::default());
    // Constant RTT: the connections multiply (1, 2, 2.5, 2.9, 3.24, 3.55, …), and each one's
    // equation allows about 0.9 Mbit/s (s = 948 B, R = 100 ms, p = 0.01).
    let steps = drive(&mut s, 0, 6, |_| 100);
    drive(&mut free, 0, 6, |_| 100);
    assert!(
        steps.iter().all(|&(_, open)| open >= 2) && steps[5].1 == 4,
        "{steps:?}"
    );
    assert!(
        free.rate() > cap,
        "uncapped {} is above the cap",
        free.rate()
    );
    assert!(
        s.rate() <= cap,
        "{} with {} connections",
        s.rate(),
        s.conns.len()
    );
    let share = Bitrate::bps(cap.as_bps() / 4);
    assert!(s.conns.iter().all(|c| c.rate() <= share));
}

#[test]
fn closes_a_connection_when_the_rtt_rises() {
    let mut s = MultfrcSender::new(
        &FlowCtx::at_zero(FlowId(0), 1),
        MultfrcConfig {
            initial: 4.0,
            ..MultfrcConfig::default()
        },
    );
    assert_eq!(s.connections().1, 4);
    // The first period sets rtt_min = 100 ms; then 130 ms > 1.2·100: n −= 1 each period.
    let steps = drive(&mut s, 0, 4, |k| if k == 0 { 100 } else { 130 });
    assert_eq!(steps[1], (4.0 + 0.25 - 1.0, 3));
    assert_eq!(steps[2], (4.25 - 2.0, 2));
    assert_eq!(steps[3], (1.25, 1));
    // Never below one connection.
    let more = drive(&mut s, 2000, 2, |_| 200);
    assert_eq!(more[1], (1.0, 1));
}

#[test]
fn records_n_and_the_connection_count() {
    let mut s = MultfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), MultfrcConfig::default());
    let mut sink = VecSink::default();
    while s.poll_transmit(Instant::ZERO).is_some() {}
    s.handle_packet(
        ms(100),
        &report(0, Instant::ZERO, Duration::ZERO),
        &mut sink,
    );
    s.handle_timeout(ms(1000), &mut sink);
    assert!(
        sink.0
            .iter()
            .any(|(_, m)| m.of(&CONNECTION_TARGET) == Some(2.0))
    );
    assert!(sink.0.iter().any(|(_, m)| m.of(&CONNECTIONS) == Some(2.0)));
    assert!(sink.0.iter().any(|(_, m)| m.is(&RTT)));
}

#[test]
fn the_receiver_keeps_one_tfrc_receiver_per_connection() {
    let config = MultfrcConfig::default();
    let mut tx = MultfrcSender::new(
        &FlowCtx::at_zero(FlowId(0), 1),
        MultfrcConfig {
            initial: 3.0,
            ..config
        },
    );
    let mut rx = MultfrcReceiver::new(FlowId(0), config);
    let mut sink = VecSink::default();
    let mut conns = std::collections::BTreeSet::new();
    let mut reports = 0;
    for t in 0..5000u64 {
        while let Some(p) = tx.poll_transmit(ms(t)) {
            if let Header::TfrcData(d) = p.header {
                conns.insert(d.conn);
            }
            rx.handle_packet(ms(t + 50), &p, &mut sink);
        }
        rx.handle_timeout(ms(t + 50), &mut sink);
        while let Some(r) = rx.poll_transmit(ms(t + 50)) {
            reports += 1;
            tx.handle_packet(ms(t + 100), &r, &mut sink);
        }
        tx.handle_timeout(ms(t), &mut sink);
    }
    assert!(conns.len() >= 3, "{conns:?}");
    assert!(reports > 3 * 10);
    assert_eq!(rx.stats().packets_received, tx.stats().packets_sent);
}

#[test]
fn shuffled_dropped_duplicated_and_bogus_packets_never_break_either_end() {
    use fairstream_core::RngStream;
    let max = Bitrate::mbps(50);
    for seed in 0..100 {
        let mut g = RngStream::from_seed(seed);
        let mut config = MultfrcConfig::default();
        config.tfrc.sender.max_rate = max;
        let mut tx = MultfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), config);
        let mut rx = MultfrcReceiver::new(FlowId(0), config);
        let mut sink = VecSink::default();
        let mut now = Instant::ZERO;
        let mut in_flight: Vec<Packet> = Vec::new();
        for _ in 0..3000 {
            now += Duration::from_micros(g.next_u64() % 20_000);
            tx.handle_timeout(now, &mut sink);
            rx.handle_timeout(now, &mut sink);
            while let Some(p) = tx.poll_transmit(now) {
                in_flight.push(p);
            }
            while let Some(p) = rx.poll_transmit(now) {
                in_flight.push(p);
            }
            for t in [tx.poll_timeout(), rx.poll_timeout()].into_iter().flatten() {
                assert!(t > now, "seed {seed}: timer {t} at {now}");
            }
            if in_flight.is_empty() {
                continue;
            }
            let i = (g.next_u64() % in_flight.len() as u64) as usize;
            let mut p = in_flight.swap_remove(i);
            match g.next_u64() % 8 {
                0 => continue,
                1 => in_flight.push(p),
                2 => match &mut p.header {
                    Header::TfrcData(d) => {
                        d.conn = (g.next_u64() % 256) as u8;
                        d.seq = g.next_u64() >> (g.next_u64() % 64);
                    }
                    Header::TfrcFeedback(f) => {
                        f.conn = (g.next_u64() % 256) as u8;
                        f.t_recvdata = Instant::from_nanos(g.next_u64() >> 20);
                        f.x_recv = Bitrate::bps(g.next_u64() >> (g.next_u64() % 64));
                        f.p = LossRate::from_f64((g.next_u64() % 3) as f64 / 2.0);
                    }
                    _ => {}
                },
                _ => {}
            }
            match p.direction {
                Direction::Forward => rx.handle_packet(now, &p, &mut sink),
                Direction::Reverse => tx.handle_packet(now, &p, &mut sink),
            }
            let (n, open) = tx.connections();
            assert!(
                n.is_finite() && (1.0..=20.0).contains(&n),
                "seed {seed}: n {n}"
            );
            assert!((1..=20).contains(&open), "seed {seed}: {open} connections");
            let r = tx.rate().as_bps();
            assert!(
                r > 0 && r <= open as u64 * max.as_bps() + 1,
                "seed {seed}: rate {r}"
            );
        }
        sink.0.clear();
    }
}

#[test]
fn a_period_judges_only_connections_that_reported_and_left_slow_start() {
    let mut s = MultfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), MultfrcConfig::default());
    let mut sink = VecSink::default();
    while s.poll_transmit(ms(0)).is_some() {}
    // A report with p = 0: connection 0 is still in slow start, so the period (low RTT) is
    // discarded and n stays 1.
    let mut slow = report(0, ms(0), Duration::ZERO);
    if let Header::TfrcFeedback(f) = &mut slow.header {
        f.p = LossRate::ZERO;
    }
    s.handle_packet(ms(100), &slow, &mut sink);
    let due = s.next_update;
    s.handle_timeout(due, &mut sink);
    assert_eq!(s.connections(), (1.0, 1));
    // Its next report carries p > 0: out of slow start; the following period judges: n = 2.
    while s.poll_transmit(due).is_some() {}
    s.handle_packet(
        due + Duration::from_millis(100),
        &report(0, due, Duration::ZERO),
        &mut sink,
    );
    let next = s.next_update.max(due + Duration::from_millis(100));
    s.handle_timeout(next, &mut sink);
    assert_eq!(s.connections(), (2.0, 2));
    // The new connection 1 has not reported: a period with connection 0's report alone is
    // discarded, so n does not grow on the RTT before connection 1 loads the path.
    while s.poll_transmit(next).is_some() {}
    s.handle_packet(
        next + Duration::from_millis(100),
        &report(0, next, Duration::ZERO),
        &mut sink,
    );
    let after = s.next_update.max(next + Duration::from_millis(100));
    s.handle_timeout(after, &mut sink);
    assert_eq!(s.connections(), (2.0, 2));
    let targets = sink
        .0
        .iter()
        .filter(|(_, m)| m.is(&CONNECTION_TARGET))
        .count();
    assert_eq!(targets, 1, "only the judged period records n");
}
