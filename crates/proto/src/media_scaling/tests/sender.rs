//! Sender conformance: MM_APP's pacing per scale (and its dither), MPEG_APP's frame selection
//! per scale (paper 001's Table 2) and packetisation, the checks on reports, the RTT filter, the
//! feedback timeout, the stop.

use crate::media_scaling::metrics::SCALE;
use crate::metric::{FEEDBACK_TIMEOUT, FRAMES_SENT, RTT, SRTT};
use fairstream_media::{FrameType, GopPattern, scale};

use super::*;
use crate::{Metric, NullSink, VecSink};

/// A sender's scaling rule with the feedback timeout off (step plans space reports freely).
fn quiet(initial_scale: u8) -> ScalingConfig {
    ScalingConfig {
        initial_scale,
        feedback_timeout_rtts: 0.0,
        ..ScalingConfig::default()
    }
}

fn mm(c: MmAppConfig) -> MediaSender {
    MediaSender::mm_app(&FlowCtx::at_zero(FLOW, 3), &c)
}

fn mpeg(c: &MpegAppConfig) -> MediaSender {
    c.build(&FlowCtx::at_zero(FLOW, 3)).0
}

/// Flow [`FLOW`] running from `start` to `stop`.
fn running(start: Instant, stop: Option<Instant>) -> FlowCtx {
    FlowCtx::new(FLOW, start, stop, RngStream::from_seed(3))
}

fn times(ps: &[Packet]) -> Vec<u64> {
    ps.iter().map(|p| p.sent_at.as_nanos()).collect()
}

#[test]
fn mm_app_paces_at_the_rate_of_its_scale_and_follows_reports_at_once() {
    let mut s = mm(MmAppConfig {
        scaling: quiet(0),
        ..MmAppConfig::default()
    });
    let mut m = VecSink::default();
    // 1000 B at 300 kbit/s: one packet per 26 666 667 ns.
    let sent = run_until(&mut s, ms(85), &mut m);
    assert_eq!(times(&sent), [0, 26_666_667, 53_333_334, 80_000_001]);
    for (k, p) in sent.iter().enumerate() {
        let d = as_data(p);
        assert_eq!(
            (p.size, u64::from(p.payload)),
            (DataSize::bytes(1000), PAYLOAD)
        );
        assert_eq!(
            (d.seq, d.frame, d.fragment, d.fragments),
            (k as u64, k as u64, 0, 1)
        );
        assert_eq!(
            (d.scale, d.kind, d.rtt, d.timestamp),
            (0, None, Duration::ZERO, p.sent_at)
        );
    }
    // A report at 85 ms (scale 2, echoing packet 0: RTT sample 85 ms): 700 kbit/s, one packet
    // per 11 428 571 ns, counted from the last departure: at once.
    feed(&mut s, ms(85), &report(fb(2, 0, ms(0), 0)), &mut m);
    assert_eq!(s.scale(), 2);
    assert_eq!(s.srtt(), Some(dms(85)));
    let sent = run_until(&mut s, ms(110), &mut m);
    assert_eq!(times(&sent), [91_428_572, 102_857_143]);
    assert_eq!(as_data(&sent[0]).rtt, dms(85));
    assert_eq!(as_data(&sent[0]).scale, 2);
    assert_eq!(
        m.0.iter()
            .map(|&(_, x)| x)
            .filter(|x| !x.is(&FRAMES_SENT))
            .collect::<Vec<_>>(),
        [
            SCALE.count(0),
            RTT.secs(dms(85)),
            SRTT.secs(dms(85)),
            SCALE.count(2)
        ]
    );
    assert_eq!(s.frames_sent(), 6);
    assert!(m.0.contains(&(
        ms(85) + Duration::from_nanos(6_428_572),
        FRAMES_SENT.count(5)
    )));
    assert_eq!(s.stats().packets_sent, 6);
    assert_eq!(s.stats().bytes_sent, 6000);
    assert_eq!(s.stats().packets_received, 1);
}

#[test]
fn mm_app_dither_keeps_the_mean_rate() {
    let mut s = mm(MmAppConfig {
        random: true,
        scaling: quiet(0),
        ..MmAppConfig::default()
    });
    let sent = run_until(&mut s, ms(60_000), &mut NullSink);
    let t = times(&sent);
    let nominal = 26_666_667.0;
    for w in t.windows(2) {
        let gap = (w[1] - w[0]) as f64;
        assert!(
            (0.5 * nominal - 1.0..1.5 * nominal + 1.0).contains(&gap),
            "{gap}"
        );
    }
    let mean = (t[t.len() - 1] - t[0]) as f64 / (t.len() - 1) as f64;
    assert!((mean / nominal - 1.0).abs() < 0.02, "mean gap {mean}");
    assert!(t.windows(2).any(|w| w[1] - w[0] < 20_000_000));
}

/// The frames MPEG_APP sends over two GOPs at `scale`, as letters per GOP position.
fn sent_frames_at(scale_now: u8) -> (String, MediaSender) {
    let mut s = mpeg(&MpegAppConfig {
        scaling: quiet(scale_now),
        ..MpegAppConfig::default()
    });
    let sent = run_until(&mut s, ms(600) - Duration::from_nanos(1), &mut NullSink);
    let mut letters = vec!['.'; 18];
    for p in &sent {
        let d = as_data(p);
        assert_eq!(d.scale, scale_now);
        letters[d.frame as usize] = d.kind.expect("typed").letter();
    }
    (letters.into_iter().collect(), s)
}

#[test]
fn mpeg_app_sends_the_frames_of_table2_at_each_scale() {
    let pattern = GopPattern::ibbpbbpbb();
    for s in 0..=4u8 {
        let (letters, sender) = sent_frames_at(s);
        let row = scale::policy(&pattern, s);
        assert_eq!(letters, format!("{row}{row}"), "scale {s}");
        let sent = row.chars().filter(|&c| c != '.').count() as u64 * 2;
        assert_eq!(sender.frames_sent(), sent);
        assert_eq!(sender.frames_skipped(), 18 - sent);
    }
    assert_eq!(sent_frames_at(3).0, "I.BP.BP.BI.BP.BP.B");
}

#[test]
fn mpeg_app_splits_frames_into_packets_sent_back_to_back() {
    let mut s = mpeg(&MpegAppConfig {
        scaling: quiet(4),
        ..MpegAppConfig::default()
    });
    let sent = run_until(&mut s, ms(300) - Duration::from_nanos(1), &mut NullSink);
    // I 11 000 B: 7 packets of 1442 B + 906 B, all at 0; B 2000 B: 1442 + 558 at 33.3 ms;
    // P 8000 B: 5 × 1442 + 790 at 100 ms. 58 B of headers on each.
    let frame = |n: u64| -> Vec<(u64, u16, u16)> {
        sent.iter()
            .filter(|p| as_data(p).frame == n)
            .map(|p| (p.size.as_bytes(), as_data(p).fragment, as_data(p).fragments))
            .collect()
    };
    let mut i = vec![(1500, 0, 8); 8];
    for (k, x) in i.iter_mut().enumerate() {
        x.1 = k as u16;
    }
    i[7].0 = 964;
    assert_eq!(frame(0), i);
    assert_eq!(frame(1), [(1500, 0, 2), (616, 1, 2)]);
    assert_eq!(
        frame(3).iter().map(|x| x.0).collect::<Vec<_>>(),
        [1500, 1500, 1500, 1500, 1500, 848]
    );
    assert!(
        sent.iter()
            .filter(|p| as_data(p).frame == 0)
            .all(|p| p.sent_at == ms(0))
    );
    assert!(
        sent.iter()
            .filter(|p| as_data(p).frame == 1)
            .all(|p| p.sent_at.as_nanos() == 33_333_333)
    );
    let seqs: Vec<u64> = sent.iter().map(|p| as_data(p).seq).collect();
    assert_eq!(seqs, (0..32).collect::<Vec<_>>());
    let bytes: u64 = sent.iter().map(|p| p.size.as_bytes()).sum();
    assert_eq!(bytes, 40_856);
    assert_eq!(
        sent.iter().map(|p| u64::from(p.payload)).sum::<u64>(),
        39_000
    );
    // The next pass starts at 300 ms with frame 9.
    let next = run_until(&mut s, ms(300), &mut NullSink);
    assert_eq!((as_data(&next[0]).frame, next.len()), (9, 8));
    assert_eq!(as_data(&next[0]).kind, Some(FrameType::I));
}

#[test]
fn reports_are_checked_before_use() {
    let mut s = mm(MmAppConfig {
        scaling: quiet(0),
        ..MmAppConfig::default()
    });
    // Before anything was sent, no report is plausible.
    feed(&mut s, ms(0), &report(fb(3, 0, ms(0), 0)), &mut NullSink);
    assert_eq!((s.scale(), s.ignored_reports()), (0, 1));
    run_until(&mut s, ms(100), &mut NullSink); // packets 0..=3, sent 0 to 80 ms
    for bogus in [
        fb(3, 0, ms(0), 4),     // names packet 4, never sent
        fb(3, 0, ms(90), 0),    // echoes a time after the last packet
        fb(3, 0, ms(1_000), 0), // echoes the future
        fb(5, 0, ms(0), 0),     // no such scale
    ] {
        feed(&mut s, ms(100), &report(bogus), &mut NullSink);
    }
    assert_eq!((s.scale(), s.ignored_reports()), (0, 5));
    feed(&mut s, ms(100), &report(fb(3, 7, ms(0), 3)), &mut NullSink);
    assert_eq!(s.scale(), 3);
    // Not newer than report 7: a duplicate, or a late one.
    for n in [7, 2] {
        feed(&mut s, ms(101), &report(fb(1, n, ms(0), 3)), &mut NullSink);
    }
    assert_eq!((s.scale(), s.ignored_reports()), (3, 7));
    // Another flow's report, or one travelling the wrong way, is not even counted.
    let mut other = report(fb(1, 9, ms(0), 3));
    other.flow = FlowId(9);
    let mut wrong = report(fb(1, 9, ms(0), 3));
    wrong.direction = Direction::Forward;
    feed(&mut s, ms(102), &other, &mut NullSink);
    feed(&mut s, ms(102), &wrong, &mut NullSink);
    assert_eq!(
        (s.scale(), s.ignored_reports(), s.stats().packets_received),
        (3, 7, 8)
    );
}

#[test]
fn rtt_samples_feed_a_filter_with_gain_one_tenth() {
    let mut s = mm(MmAppConfig {
        scaling: quiet(0),
        ..MmAppConfig::default()
    });
    run_until(&mut s, ms(100), &mut NullSink);
    // Sample 100 ms (the first sets the filter), then 200 ms − 20 ms held = 180 ms:
    // 0.9 × 100 + 0.1 × 180 = 108 ms.
    feed(&mut s, ms(100), &report(fb(0, 0, ms(0), 0)), &mut NullSink);
    assert_eq!(s.srtt(), Some(dms(100)));
    let held = MediaFeedback {
        t_delay: dms(20),
        ..fb(0, 1, ms(0), 0)
    };
    feed(&mut s, ms(200), &report(held), &mut NullSink);
    assert_eq!(s.srtt(), Some(dms(108)));
    let sent = run_until(&mut s, ms(220), &mut NullSink);
    assert_eq!(as_data(&sent[0]).rtt, dms(108));
    // A sample that is not positive (held longer than the round trip) is not used.
    let odd = MediaFeedback {
        t_delay: dms(500),
        ..fb(0, 2, ms(0), 0)
    };
    feed(&mut s, ms(221), &report(odd), &mut NullSink);
    assert_eq!(s.srtt(), Some(dms(108)));
}

#[test]
fn without_reports_the_sender_halves_its_scale_every_feedback_timeout() {
    let mut s = mm(MmAppConfig {
        scaling: ScalingConfig {
            initial_scale: 4,
            ..ScalingConfig::default()
        },
        ..MmAppConfig::default()
    });
    let mut m = VecSink::default();
    // No RTT yet: max(4 × 100 ms, 1 s) = 1 s after the first packet, then each second.
    let sent = run_until(&mut s, ms(3_100), &mut m);
    let halvings: Vec<(Instant, Metric)> =
        m.0.iter()
            .copied()
            .filter(|(_, x)| x.is(&SCALE) || x.is(&FEEDBACK_TIMEOUT))
            .collect();
    assert_eq!(
        halvings,
        [
            (ms(0), SCALE.count(4)),
            (ms(1000), FEEDBACK_TIMEOUT.event()),
            (ms(1000), SCALE.count(2)),
            (ms(2000), FEEDBACK_TIMEOUT.event()),
            (ms(2000), SCALE.count(1)),
            (ms(3000), FEEDBACK_TIMEOUT.event()),
            (ms(3000), SCALE.count(0)),
        ]
    );
    assert_eq!(s.feedback_timeouts(), 3);
    // A report re-arms it: with a 500 ms RTT the timeout is 4 × 500 ms = 2 s.
    let t_echo = sent.last().expect("packets").sent_at;
    assert!(t_echo > ms(3_000));
    run_until(
        &mut s,
        t_echo + dms(500) - Duration::from_nanos(1),
        &mut NullSink,
    );
    let highest = s.stats().packets_sent - 1;
    let now = t_echo + dms(500);
    feed(
        &mut s,
        now,
        &report(fb(3, 0, t_echo, highest)),
        &mut NullSink,
    );
    assert_eq!((s.scale(), s.srtt()), (3, Some(dms(500))));
    let mut m = VecSink::default();
    run_until(&mut s, now + dms(2_000) - Duration::from_nanos(1), &mut m);
    assert!(!m.0.iter().any(|(_, x)| *x == FEEDBACK_TIMEOUT.event()));
    run_until(&mut s, now + dms(2_000), &mut m);
    assert!(m.0.contains(&(now + dms(2_000), FEEDBACK_TIMEOUT.event())));
}

#[test]
fn nothing_is_sent_at_or_after_stop() {
    let mut s = MediaSender::mm_app(&running(ms(0), Some(ms(100))), &MmAppConfig::default());
    let sent = run_until(&mut s, ms(10_000), &mut NullSink);
    assert_eq!(sent.len(), 4);
    assert_eq!(s.poll_timeout(), None);
    let mut never = MpegAppConfig::default()
        .build(&running(ms(5), Some(ms(5))))
        .0;
    assert_eq!(never.poll_timeout(), None);
    assert!(run_until(&mut never, ms(1000), &mut NullSink).is_empty());
    // A later start: the trace's time 0 is the start.
    let mut late = MpegAppConfig::default().build(&running(ms(250), None)).0;
    assert_eq!(late.poll_timeout(), Some(ms(250)));
    let first = run_until(&mut late, ms(250), &mut NullSink);
    assert_eq!(first.len(), 8);
}
