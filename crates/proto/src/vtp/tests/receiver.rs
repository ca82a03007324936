//! Receiver conformance: sampling periods, the AR filter, loss counting, the echo.

use super::*;
use crate::NullSink;

/// Delivers data packet `seq` (sent at `seq` ms, RTT header 100 ms) at `at`; returns the
/// report it triggers, if any.
fn arrive(r: &mut VtpReceiver, seq: u64, at: Instant) -> Option<VtpFeedback> {
    let sent = Instant::from_nanos(seq.saturating_mul(1_000_000));
    let out = feed(r, at, &data(seq, sent, dms(100)), &mut NullSink);
    assert!(out.len() <= 1, "one report per arrival at most");
    out.first().map(|p| {
        assert_eq!(p.direction, Direction::Reverse);
        assert_eq!(p.size, REPORT);
        assert_eq!(p.sent_at, at);
        as_report(p)
    })
}

#[test]
fn achieved_rate_filter_over_three_periods() {
    let mut r = receiver();
    // Period 1 opens with packet 0 at 0 and holds packets 1..=10 (10 ms apart): it ends with
    // packet 10 at 100 ms (T = 100 ms from the header). S1 = 10 000 B / 0.1 s = 100 000 B/s,
    // and the first period sets AR = S1 = 100 000 B/s = 800 kbit/s.
    assert!(arrive(&mut r, 0, ms(0)).is_none());
    for seq in 1..10 {
        assert!(arrive(&mut r, seq, ms(10 * seq)).is_none());
    }
    let f1 = arrive(&mut r, 10, ms(100)).expect("period 1 ends");
    assert_eq!(f1.achieved_rate, Bitrate::kbps(800));
    assert_eq!((f1.highest_seq, f1.lost, f1.received), (10, 0, 10));
    assert_eq!((f1.t_echo, f1.t_delay), (ms(10), Duration::ZERO));

    // Period 2: packets 11..=15 at 120..=200 ms: S2 = 5 000 B / 0.1 s = 50 000 B/s;
    // AR = 0.9·100 000 + 0.05·(50 000 + 100 000) = 97 500 B/s = 780 kbit/s.
    for (i, seq) in (11..15).enumerate() {
        assert!(arrive(&mut r, seq, ms(120 + 20 * i as u64)).is_none());
    }
    let f2 = arrive(&mut r, 15, ms(200)).expect("period 2 ends");
    assert_eq!(f2.achieved_rate, Bitrate::kbps(780));
    assert_eq!((f2.highest_seq, f2.lost, f2.received), (15, 0, 5));

    // Period 3: packets 16..=35 every 5 ms over 205..=300 ms: S3 = 20 000 B / 0.1 s =
    // 200 000 B/s; AR = 0.9·97 500 + 0.05·(200 000 + 50 000) = 100 250 B/s = 802 kbit/s.
    for (i, seq) in (16..35).enumerate() {
        assert!(arrive(&mut r, seq, ms(205 + 5 * i as u64)).is_none());
    }
    let f3 = arrive(&mut r, 35, ms(300)).expect("period 3 ends");
    assert_eq!(f3.achieved_rate, Bitrate::kbps(802));
    assert_eq!(
        r.achieved_rate_bytes_per_sec().map(f64::round),
        Some(100_250.0)
    );
    assert_eq!(r.stats().packets_received, 36);
    assert_eq!(r.stats().app_bytes_received, 36 * u64::from(PAYLOAD));
    assert_eq!(r.stats().packets_sent, 3);
    assert_eq!(r.stats().bytes_sent, 3 * REPORT.as_bytes());
}

#[test]
fn period_needs_t_and_four_packets_and_uses_initial_period_without_rtt() {
    let mut r = receiver();
    let no_rtt = |seq: u64| data(seq, ms(seq), Duration::ZERO);
    feed(&mut r, ms(0), &no_rtt(0), &mut NullSink);
    assert_eq!(r.sampling_period(), dms(100));
    // Long enough (≥ 100 ms) but too few packets: no report until the fourth.
    for (seq, at) in [(1, 150), (2, 300), (3, 450)] {
        assert!(feed(&mut r, ms(at), &no_rtt(seq), &mut NullSink).is_empty());
    }
    let out = feed(&mut r, ms(600), &no_rtt(4), &mut NullSink);
    // S = 4 000 B / 0.6 s = 6 666.67 B/s = 53 333.33 bit/s.
    assert_eq!(as_report(&out[0]).achieved_rate, Bitrate::bps(53_333));
    // Four packets but shorter than T: no report.
    let mut r = receiver();
    for seq in 0..8 {
        assert!(
            feed(
                &mut r,
                ms(seq * 10),
                &data(seq, ms(seq), dms(100)),
                &mut NullSink
            )
            .is_empty()
        );
    }
}

#[test]
fn losses_count_gaps_once_and_ignore_duplicates() {
    let mut r = receiver();
    assert!(arrive(&mut r, 0, ms(0)).is_none());
    arrive(&mut r, 1, ms(10));
    arrive(&mut r, 3, ms(20)); // 2 missing: lost 1
    arrive(&mut r, 2, ms(30)); // late, same period: the loss is taken back
    arrive(&mut r, 5, ms(40)); // 4 missing: lost 1
    arrive(&mut r, 5, ms(50)); // duplicate: ignored
    let f = arrive(&mut r, 6, ms(100)).expect("period 1 ends");
    assert_eq!((f.lost, f.received, f.highest_seq), (1, 5, 6));

    arrive(&mut r, 4, ms(110)); // late, its loss already reported: received only
    arrive(&mut r, 10, ms(120)); // 7, 8, 9 missing: lost 3
    arrive(&mut r, 7, ms(130)); // late, same period: lost 2
    arrive(&mut r, 3, ms(140)); // duplicate of an old one: ignored
    let f = arrive(&mut r, 11, ms(200)).expect("period 2 ends");
    assert_eq!((f.lost, f.received, f.highest_seq), (2, 4, 11));
    assert_eq!(f.t_delay, Duration::ZERO);

    // A period that ends on a late packet echoes the newest packet (14) with its hold time.
    arrive(&mut r, 12, ms(210));
    arrive(&mut r, 13, ms(220));
    arrive(&mut r, 14, ms(230));
    let f = arrive(&mut r, 9, ms(300)).expect("period 3 ends");
    assert_eq!((f.lost, f.received, f.highest_seq), (0, 4, 14));
    assert_eq!((f.t_echo, f.t_delay), (ms(14), dms(70)));

    assert_eq!(r.duplicates(), 2);
    assert_eq!(r.stats().packets_received, 16);
    // 14 distinct packets 0..=14 without 8.
    assert_eq!(r.stats().app_bytes_received, 14 * u64::from(PAYLOAD));
}

#[test]
fn packets_missing_before_the_first_are_losses() {
    let mut r = receiver();
    arrive(&mut r, 3, ms(0));
    for seq in 4..8 {
        arrive(&mut r, seq, ms(20 * (seq - 3)));
    }
    let f = arrive(&mut r, 8, ms(150)).expect("period ends");
    assert_eq!((f.lost, f.received), (3, 5));
}

#[test]
fn far_reordering_and_huge_gaps_are_safe() {
    let mut r = receiver();
    arrive(&mut r, 0, ms(0));
    arrive(&mut r, 10_000, ms(10)); // 9 999 lost
    arrive(&mut r, 5, ms(20)); // too old to tell: ignored
    arrive(&mut r, 9_999, ms(30)); // late, same period
    arrive(&mut r, 10_001, ms(40));
    let f = arrive(&mut r, 10_002, ms(100)).expect("period ends");
    assert_eq!((f.lost, f.received), (9_998, 4));
    // The 16-bit counters of the wire saturate: 99 999 lost.
    arrive(&mut r, 110_002, ms(110));
    arrive(&mut r, 110_003, ms(120));
    arrive(&mut r, 110_004, ms(130));
    let f = arrive(&mut r, 110_005, ms(200)).expect("period ends");
    assert_eq!((f.lost, f.received), (u32::from(u16::MAX), 4));
    // The largest sequence number: nothing after it is new, nothing overflows.
    arrive(&mut r, u64::MAX, ms(210));
    for seq in 0..4 {
        assert!(arrive(&mut r, 200_000 + seq, ms(300 + seq)).is_none());
    }
    assert!(arrive(&mut r, u64::MAX, ms(400)).is_none());
    assert_eq!(r.highest_seq(), Some(u64::MAX));
}

#[test]
fn other_flows_and_reports_are_ignored() {
    let mut r = receiver();
    let mut other = data(0, ms(0), dms(100));
    other.flow = FlowId(9);
    feed(&mut r, ms(0), &other, &mut NullSink);
    feed(&mut r, ms(0), &report(fb(ms(0), 1, 0, 0, 0)), &mut NullSink);
    let mut backwards = data(0, ms(0), dms(100));
    backwards.direction = Direction::Reverse;
    feed(&mut r, ms(0), &backwards, &mut NullSink);
    assert_eq!(r.stats().packets_received, 0);
    assert_eq!(r.highest_seq(), None);
    assert_eq!(r.poll_timeout(), None);
}
