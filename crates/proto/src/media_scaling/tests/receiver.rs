//! Receiver conformance: the scaling rule (halve on loss, +1 after a loss-free RTT, one decrease
//! per RTT), the timeout TOI in both of its cases, the reports. Unless said otherwise the sender
//! writes an RTT of 60 ms in its data and Max_Intrvl is 40 ms, so TOI = RTT = 60 ms; packets
//! arrive every 10 ms from 5 ms (off the checkpoints, so that no event ties).

use super::*;
use crate::media_scaling::metrics::{RECEIVER_SCALE, SCALE_TIMEOUT};
use crate::player::{FRAMES_DECODABLE, STALL_TIME, STALLS};
use crate::{Metric, VecSink};

const RTT: Duration = Duration::from_millis(60);

fn mm_receiver() -> MediaReceiver {
    receiver(ScalingConfig::default(), dms(40))
}

/// (time in ms, scale) of each report.
fn plan(reports: &[(Instant, MediaFeedback)]) -> Vec<(u64, u8)> {
    reports
        .iter()
        .map(|(t, f)| (t.as_nanos() / 1_000_000, f.scale))
        .collect()
}

#[test]
fn first_packet_is_reported_then_one_step_up_per_loss_free_rtt() {
    let mut r = mm_receiver();
    let mut m = VecSink::default();
    let reports = drive(&mut r, &stream(0, 5, 330, 10, RTT), ms(330), &mut m);
    // The first packet (5 ms) opens the checkpoint and is reported at once; then one report per
    // RTT checkpoint, each a step up, to 4, where it stays.
    assert_eq!(
        plan(&reports),
        [(5, 0), (65, 1), (125, 2), (185, 3), (245, 4), (305, 4)]
    );
    let numbers: Vec<u32> = reports.iter().map(|(_, f)| f.number).collect();
    assert_eq!(numbers, [0, 1, 2, 3, 4, 5]);
    // Each report echoes the newest packet and how long it was held; highest seq so far.
    let (t, f) = reports[1];
    assert_eq!(
        (t, f.t_echo, f.t_delay, f.highest_seq),
        (ms(65), ms(55), dms(10), 5)
    );
    let scales: Vec<Metric> =
        m.0.iter()
            .map(|&(_, x)| x)
            .filter(|x| x.is(&RECEIVER_SCALE))
            .collect();
    assert_eq!(
        scales,
        [1, 2, 3, 4].map(|s| RECEIVER_SCALE.count(s)).to_vec(),
        "one record per change"
    );
    assert_eq!((r.scale(), r.losses(), r.timeouts()), (4, 0, 0));
    assert_eq!(r.stats().packets_received, 33);
    assert_eq!(r.stats().app_bytes_received, 33 * PAYLOAD);
    assert_eq!(r.stats().packets_sent, 6);
    assert_eq!(
        r.stats().bytes_sent,
        6 * udp_feedback_size(MediaFeedback::WIRE_LEN).as_bytes()
    );
}

#[test]
fn a_loss_halves_at_once_and_later_losses_in_that_rtt_only_deny_the_increase() {
    let mut r = mm_receiver();
    let mut m = VecSink::default();
    // Up to scale 4 at 245 ms (packets 0..=24 from 5 to 245 ms), then packet 26 at 255 ms
    // (25 lost): halve to 2 at once. Packet 29 at 275 ms (27, 28 lost), within one RTT of the
    // decrease: no second halving, no report. At the checkpoint 255 + 60 = 315 ms: no increase
    // (a loss was seen) but a report; at 375 ms: +1.
    let mut arrivals = stream(0, 5, 250, 10, RTT);
    arrivals.push((ms(255), data(26, ms(255), RTT)));
    arrivals.push((ms(265), data(27, ms(265), RTT))); // not lost after all: 27 is in order
    arrivals.push((ms(275), data(30, ms(275), RTT)));
    arrivals.extend(stream(31, 285, 400, 10, RTT));
    let reports = drive(&mut r, &arrivals, ms(400), &mut m);
    assert_eq!(
        plan(&reports)[4..],
        [(245, 4), (255, 2), (315, 2), (375, 3)]
    );
    assert_eq!(r.losses(), 3);
    // Without the one-decrease rule the second gap halves again, to 1.
    let mut r = receiver(
        ScalingConfig {
            one_decrease_per_rtt: false,
            ..ScalingConfig::default()
        },
        dms(40),
    );
    let reports = drive(&mut r, &arrivals, ms(400), &mut m);
    assert_eq!(
        plan(&reports)[4..],
        [(245, 4), (255, 2), (275, 1), (335, 2), (395, 3)]
    );
}

#[test]
fn a_loss_after_the_decrease_rtt_halves_again() {
    let mut r = mm_receiver();
    let mut arrivals = stream(0, 5, 250, 10, RTT);
    // 25 lost (found at 255: 4 → 2); 32 lost, found at 325 ms > 255 + 60: 2 → 1.
    arrivals.extend(stream(26, 255, 315, 10, RTT));
    arrivals.extend(stream(33, 325, 340, 10, RTT));
    let reports = drive(&mut r, &arrivals, ms(340), &mut crate::NullSink);
    assert_eq!(
        plan(&reports)[4..],
        [(245, 4), (255, 2), (315, 3), (325, 1)]
    );
}

#[test]
fn timeout_is_the_rtt_when_the_rtt_exceeds_max_interval_and_repeats_down_to_zero() {
    let mut r = mm_receiver();
    let mut m = VecSink::default();
    // Scale 4 at 245 ms, last packet at 255 ms; TOI = RTT = 60 ms (60 > Max_Intrvl 40).
    let arrivals = stream(0, 5, 260, 10, RTT);
    assert_eq!(r.toi(), dms(100)); // before any data: the initial RTT, 100 ms > 40 ms
    let reports = drive(&mut r, &arrivals, ms(1000), &mut m);
    assert_eq!(r.toi(), RTT);
    // 305: the checkpoint (packets arrived, no loss: stays 4). 315: timeout, 4 → 2; again
    // each TOI: 375 → 1, 435 → 0; 495: a timeout at 0 reports once more and goes idle.
    assert_eq!(
        plan(&reports)[4..],
        [(245, 4), (305, 4), (315, 2), (375, 1), (435, 0), (495, 0)]
    );
    assert_eq!(r.timeouts(), 4);
    assert!(r.is_idle());
    assert_eq!(r.poll_timeout(), None);
    let timeouts =
        m.0.iter()
            .filter(|(_, x)| *x == SCALE_TIMEOUT.event())
            .count();
    assert_eq!(timeouts, 4);
    // Data again: the receiver wakes, counts the gap... no gap here (seq 26 follows 25): it
    // opens a checkpoint and climbs again one RTT later.
    let back = drive(&mut r, &stream(26, 1005, 1080, 10, RTT), ms(1080), &mut m);
    assert_eq!(plan(&back), [(1065, 1)]);
}

#[test]
fn timeout_is_max_interval_plus_alpha_rtt_when_the_rtt_is_shorter() {
    // MPEG_APP at scale 0: an I frame every 300 ms (Max_Intrvl), RTT 60 ms: TOI = 300 + 0.5 ×
    // 60 = 330 ms. Frames 300 ms apart raise no timeout.
    let mut r = receiver(ScalingConfig::default(), dms(300));
    let arrivals: Vec<(Instant, Packet)> = (0..4)
        .map(|k| (ms(5 + 300 * k), data(k, ms(5 + 300 * k), RTT)))
        .collect();
    let reports = drive(&mut r, &arrivals, ms(905 + 329), &mut crate::NullSink);
    assert_eq!(r.toi(), dms(330));
    assert_eq!(r.timeouts(), 0);
    // Each frame arrives alone in its RTT: the checkpoint after it sees a packet and no loss.
    let ups: Vec<(u64, u8)> = plan(&reports);
    assert_eq!(ups[..3], [(5, 0), (65, 1), (125, 1)]);
    // Silence after the last frame (905 ms): the timeout at 905 + 330 = 1235 ms.
    r.handle_timeout(ms(1235), &mut crate::NullSink);
    assert_eq!(r.timeouts(), 1);
    // α is a fraction of the RTT: α = 0.25 gives 315 ms.
    let r = receiver(
        ScalingConfig {
            alpha: 0.25,
            ..ScalingConfig::default()
        },
        dms(300),
    );
    let mut r = r;
    feed(&mut r, ms(0), &data(0, ms(0), RTT), &mut crate::NullSink);
    assert_eq!(r.toi(), dms(315));
    assert_eq!(r.max_interval(), dms(300));
}

#[test]
fn late_and_duplicate_packets_are_not_losses_and_a_late_start_is() {
    let mut r = mm_receiver();
    let arrivals = vec![
        (ms(5), data(0, ms(5), RTT)),
        (ms(15), data(2, ms(15), RTT)), // 1 missing: 0 → 0, reported
        (ms(25), data(1, ms(25), RTT)), // late: no loss, nothing taken back
        (ms(35), data(2, ms(35), RTT)), // duplicate
        (ms(45), data(3, ms(45), RTT)),
    ];
    let reports = drive(&mut r, &arrivals, ms(50), &mut crate::NullSink);
    assert_eq!(plan(&reports), [(5, 0), (15, 0)]);
    assert_eq!(
        (r.losses(), r.late_packets(), r.highest_seq()),
        (1, 2, Some(3))
    );
    // Payload counts once per new packet.
    assert_eq!(r.stats().app_bytes_received, 3 * PAYLOAD);
    // A first packet numbered 3: three lost before it, a decrease (from the initial scale).
    let mut r = receiver(
        ScalingConfig {
            initial_scale: 3,
            ..ScalingConfig::default()
        },
        dms(40),
    );
    let out = feed(&mut r, ms(5), &data(3, ms(5), RTT), &mut crate::NullSink);
    assert_eq!(
        out.iter().map(|p| as_report(p).scale).collect::<Vec<_>>(),
        [1]
    );
    assert_eq!(r.losses(), 3);
}

#[test]
fn the_rtt_comes_from_the_data_headers() {
    let mut r = mm_receiver();
    assert_eq!(r.rtt(), dms(100));
    // No RTT in the header yet: the initial 100 ms sets the first checkpoint.
    let arrivals = stream(0, 5, 180, 10, Duration::ZERO);
    let reports = drive(&mut r, &arrivals, ms(180), &mut crate::NullSink);
    assert_eq!(plan(&reports), [(5, 0), (105, 1)]);
    feed(
        &mut r,
        ms(185),
        &data(18, ms(185), dms(30)),
        &mut crate::NullSink,
    );
    assert_eq!(r.rtt(), dms(30));
    // Ignored: packets of another flow, or travelling the wrong way, or not media data.
    let mut other = data(19, ms(186), dms(90));
    other.flow = FlowId(9);
    let mut back = data(19, ms(186), dms(90));
    back.direction = Direction::Reverse;
    for p in [other, back, report(fb(0, 0, ms(0), 0))] {
        assert!(feed(&mut r, ms(186), &p, &mut crate::NullSink).is_empty());
    }
    assert_eq!((r.rtt(), r.highest_seq()), (dms(30), Some(18)));
}

#[test]
fn the_player_counts_what_plays_and_what_stalls() {
    // MM_APP's receiver plays its frames through the streamer's player (1 s of prebuffer). A
    // frame is sent every 10 ms from 5 ms; those sent from 1.5 s on are held 2 s on the path (it
    // goes dark and then delivers what it queued): the buffer runs dry at about 2.5 s, playout
    // stalls until a second of media is buffered again, near 4.5 s.
    let mut r = mm_receiver();
    let mut m = VecSink::default();
    let arrivals: Vec<(Instant, Packet)> = (0..500u64)
        .map(|k| {
            let sent = 5 + 10 * k;
            let at = if sent < 1500 { sent } else { sent + 2000 };
            (ms(at), data(k, ms(sent), RTT))
        })
        .collect();
    drive(&mut r, &arrivals, ms(8000), &mut m);
    let s = r.playout().stats(ms(8000));
    assert_eq!(s.delivered, 500);
    assert!(s.startup_delay.is_some_and(|d| d >= dms(990)), "{s:?}");
    assert_eq!(s.stalls, 1, "{s:?}");
    assert!(s.stall_time >= dms(1900), "{s:?}");
    assert_eq!(s.late, 0);
    assert_eq!(
        s.decodable, s.on_time,
        "untyped frames: every frame on time decodes"
    );
    // Recorded at the checkpoints, for the flow summary's media columns.
    assert!(
        m.0.iter()
            .any(|(_, x)| x.of(&FRAMES_DECODABLE).is_some_and(|n| n > 0.0))
    );
    assert!(m.0.iter().any(|(_, x)| x.of(&STALLS) == Some(1.0)));
    assert!(m.0.iter().any(|(_, x)| x.is(&STALL_TIME)));
}
