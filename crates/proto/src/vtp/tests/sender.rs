//! Sender conformance: pacing, the loss reactions, the hold, the increase rule, silence, and
//! the checks on reports. Unless said otherwise: 1000-byte packets, γ = 0.75, first rate
//! 8 Mbit/s = 10⁶ B/s (one packet per millisecond), RTT gain 1/8, Spike α = 1/2, β = 1/3.

use super::*;
use crate::lda::metrics::{CONGESTION_LOSS, WIRELESS_LOSS};
use crate::metric::{ACHIEVED_RATE, RATE, RTT, SPIKE, SRTT, WIRELESS_LOSS_ESTIMATE};
use crate::{Metric, NullSink, VecSink, vtp::VtpMode};

fn has(m: &VecSink, want: Metric) -> bool {
    m.0.iter().any(|&(_, x)| x == want)
}

#[test]
fn packets_leave_at_size_over_rate_and_follow_rate_changes() {
    let mut s = VtpSender::new(&running(ms(1000), None), cfg());
    let mut m = VecSink::default();
    assert_eq!(s.poll_timeout(), Some(ms(1000)));
    assert!(s.poll_transmit(ms(999)).is_none());
    let sent = run_until(&mut s, ms(1100), &mut m);
    assert_eq!(sent.len(), 101);
    for (k, p) in sent.iter().enumerate() {
        assert_eq!(p.sent_at, ms(1000 + k as u64));
        assert_eq!((p.size, p.payload), (DataSize::bytes(1000), PAYLOAD));
        assert_eq!(p.direction, Direction::Forward);
        let Header::VtpData(d) = p.header else {
            panic!("not data")
        };
        assert_eq!(
            (d.seq, d.timestamp, d.rtt),
            (k as u64, p.sent_at, Duration::ZERO)
        );
    }
    assert_eq!(m.0[0], (ms(1000), RATE.bps(Bitrate::mbps(8))));

    // A report at 1100 ms echoing packet 0 (RTT 100 ms) brings the first increase:
    // R = 10⁶ + 1000/0.1 = 1.01·10⁶ B/s, so the gap becomes 1000/1.01·10⁶ s = 990 099 ns.
    feed(
        &mut s,
        ms(1100),
        &report(fb(ms(1000), 8_000_000, 0, 0, 10)),
        &mut m,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_080_000));
    let gap = Duration::from_nanos(990_099);
    assert_eq!(s.poll_timeout(), Some(ms(1100) + gap));
    let sent = run_until(&mut s, ms(1102), &mut m);
    let times: Vec<Instant> = sent.iter().map(|p| p.sent_at).collect();
    assert_eq!(times, vec![ms(1100) + gap, ms(1100) + gap + gap]);
    let Header::VtpData(d) = sent[0].header else {
        panic!("not data")
    };
    assert_eq!(d.rtt, dms(100));
    assert_eq!(s.stats().packets_sent, 103);
    assert_eq!(s.stats().bytes_sent, 103_000);
}

#[test]
fn nothing_is_sent_at_or_after_stop() {
    let mut s = VtpSender::new(&running(ms(0), Some(ms(10))), cfg());
    let sent = run_until(&mut s, ms(1000), &mut NullSink);
    assert_eq!(sent.len(), 10);
    assert_eq!(s.poll_timeout(), None);
    let mut never = VtpSender::new(&running(ms(5), Some(ms(5))), cfg());
    assert_eq!(never.poll_timeout(), None);
    assert!(never.poll_transmit(ms(5)).is_none());
}

#[test]
fn default_first_rate_is_one_packet_per_initial_rtt() {
    let mut s = sender(VtpConfig::default());
    let sent = run_until(&mut s, ms(250), &mut NullSink);
    let times: Vec<Instant> = sent.iter().map(|p| p.sent_at).collect();
    assert_eq!(times, vec![ms(0), ms(100), ms(200)]);
    assert_eq!(s.rate(), Bitrate::kbps(80));
}

#[test]
fn wireless_loss_in_normal_state_raises_e_without_cut() {
    let mut s = sender(cfg());
    let mut m = VecSink::default();
    run_until(&mut s, ms(100), &mut m);
    // The first RTT sample (100 ms) cannot be a spike. 1 of 10 packets lost: a wireless loss,
    // e = 0.875·0 + 0.125·(1/10) = 0.0125, and no cut: the increase still applies,
    // R = 10⁶ + 1000/0.1 = 1.01·10⁶ B/s.
    feed(
        &mut s,
        ms(100),
        &report(fb(ms(0), 4_000_000, 50, 1, 9)),
        &mut m,
    );
    assert!(!s.in_spike());
    assert!((s.wireless_loss_estimate() - 0.0125).abs() < 1e-15);
    assert_eq!(s.rate(), Bitrate::bps(8_080_000));
    assert_eq!((s.mode(), s.congestion_cuts()), (VtpMode::Increase, 0));
    for want in [
        RTT.secs(dms(100)),
        SRTT.secs(dms(100)),
        SPIKE.flag(false),
        ACHIEVED_RATE.bps(Bitrate::mbps(4)),
        WIRELESS_LOSS.count(1),
        WIRELESS_LOSS_ESTIMATE.at(s.wireless_loss_estimate()),
        RATE.bps(Bitrate::bps(8_080_000)),
    ] {
        assert!(has(&m, want), "{want:?} not recorded");
    }
    assert!(!m.0.iter().any(|(_, x)| x.is(&CONGESTION_LOSS)));

    // Half of a period lost, still NORMAL (same RTT): e = 0.875·0.0125 + 0.125·0.5.
    run_until(&mut s, ms(200), &mut m);
    feed(
        &mut s,
        ms(200),
        &report(fb(ms(100), 4_000_000, 150, 5, 5)),
        &mut m,
    );
    assert!((s.wireless_loss_estimate() - 0.073_437_5).abs() < 1e-12);
    assert_eq!(s.rate(), Bitrate::bps(8_160_000));
}

#[test]
fn e_is_the_error_rate_over_every_normal_period_by_default() {
    // Paper 004: e is "the error rate". A loss-free report in the normal state counts as a
    // loss fraction of 0 (the default), so after a period losing 1 of 10 and a loss-free one,
    // e = 0.875·0.0125 = 0.010 9375; PROTOCOLS.md's rule (`e_loss_free_periods = false`) keeps
    // 0.0125, the loss fraction of lossy periods only.
    for (loss_free, want) in [(true, 0.010_937_5), (false, 0.0125)] {
        let mut s = sender(VtpConfig {
            e_loss_free_periods: loss_free,
            ..cfg()
        });
        let mut m = VecSink::default();
        run_until(&mut s, ms(100), &mut m);
        feed(
            &mut s,
            ms(100),
            &report(fb(ms(0), 4_000_000, 50, 1, 9)),
            &mut m,
        );
        run_until(&mut s, ms(200), &mut m);
        feed(
            &mut s,
            ms(200),
            &report(fb(ms(100), 4_000_000, 150, 0, 10)),
            &mut m,
        );
        assert!(!s.in_spike());
        assert!(
            (s.wireless_loss_estimate() - want).abs() < 1e-12,
            "{loss_free}: {}",
            s.wireless_loss_estimate()
        );
    }
    assert!(VtpConfig::default().e_loss_free_periods);
}

#[test]
fn e_is_clamped_to_e_max() {
    let mut s = sender(cfg());
    // Forty periods in a row that lose everything, at a constant RTT (NORMAL): unclamped,
    // e = 1 − 0.875⁴⁰ ≈ 0.995.
    for k in 1..=40 {
        run_until(&mut s, ms(100 * k), &mut NullSink);
        let f = fb(ms(100 * (k - 1)), 1_000_000, 10 * k, 10, 0);
        feed(&mut s, ms(100 * k), &report(f), &mut NullSink);
    }
    assert!(!s.in_spike());
    assert_eq!(s.wireless_loss_estimate(), 0.5);
    assert_eq!(s.congestion_cuts(), 0);
}

/// Two reports: the first (RTT 100 ms, NORMAL) sets e = 0.0125 by a wireless loss; the
/// second (RTT sample 260 ms: SPIKE, srtt = 0.1 + (0.26 − 0.1)/8 = 0.12 s) reports a
/// congestion loss with AR = 4 Mbit/s = 500 000 B/s. Returns the sender at 300 ms.
fn sender_cut_at_300ms(m: &mut VecSink) -> VtpSender {
    sender_with_cut_at_300ms(cfg(), m)
}

fn sender_with_cut_at_300ms(c: VtpConfig, m: &mut VecSink) -> VtpSender {
    let mut s = sender(c);
    run_until(&mut s, ms(100), m);
    feed(&mut s, ms(100), &report(fb(ms(0), 4_000_000, 50, 1, 9)), m);
    run_until(&mut s, ms(300), m);
    feed(
        &mut s,
        ms(300),
        &report(fb(ms(40), 4_000_000, 200, 2, 8)),
        m,
    );
    s
}

#[test]
fn congestion_loss_holds_gamma_prorated_ar_for_tau_then_grows_by_equivalent_window() {
    let mut m = VecSink::default();
    let mut s = sender_cut_at_300ms(&mut m);
    assert!(s.in_spike());
    assert!(has(&m, CONGESTION_LOSS.count(2)));
    // R = γ·AR·(1 + e) = 0.75·500 000·1.0125 = 379 687.5 B/s = 3 037 500 bit/s, held for
    // τ = RTT/(2(1 − γ)) = 0.12/0.5 = 240 ms: until 540 ms.
    assert_eq!(s.rate(), Bitrate::bps(3_037_500));
    assert_eq!(s.mode(), VtpMode::Hold { until: ms(540) });
    assert_eq!(s.congestion_cuts(), 1);

    // Paced at the held rate: 1000/379 687.5 s = 2 633 745 ns apart.
    let held = run_until(&mut s, ms(540) - Duration::from_nanos(1), &mut m);
    assert!(held.len() > 10);
    for w in held.windows(2) {
        assert_eq!(w[1].sent_at - w[0].sent_at, Duration::from_nanos(2_633_745));
    }
    s.handle_timeout(ms(540) - Duration::from_nanos(1), &mut m);
    assert_eq!(s.rate(), Bitrate::bps(3_037_500));
    assert_eq!(s.mode(), VtpMode::Hold { until: ms(540) });

    // At τ: R = AR·(1 + e) = 506 250 B/s = 4 050 000 bit/s, INCREASE.
    s.handle_timeout(ms(540), &mut m);
    assert_eq!(s.rate(), Bitrate::bps(4_050_000));
    assert_eq!(s.mode(), VtpMode::Increase);
    assert_eq!(s.rtt_prev(), Some(dms(120)));
    run_until(&mut s, ms(670), &mut m);

    // 130 ms (≥ RTT) later, RTT sample 120 ms (srtt stays 0.12, NORMAL again): RTT_prev/RTT
    // = 1, R' = R + s/RTT = 506 250 + 1000/0.12 = 514 583.33 B/s = 4 116 666.67 bit/s.
    feed(
        &mut s,
        ms(670),
        &report(fb(ms(550), 4_000_000, 300, 0, 10)),
        &mut m,
    );
    assert!(!s.in_spike());
    assert_eq!(s.rate(), Bitrate::bps(4_116_667));
    run_until(&mut s, ms(820), &mut m);

    // 150 ms later, RTT sample 200 ms: srtt = 0.12 + 0.08/8 = 0.13 s (SPIKE, but no loss),
    // RTT_prev = 0.12: R' = (514 583.33 + 1000/0.13)/(2 − 0.12/0.13)
    //                     = 522 275.64·13/14 = 484 970.24 B/s = 3 879 761.9 bit/s.
    feed(
        &mut s,
        ms(820),
        &report(fb(ms(620), 4_000_000, 400, 0, 10)),
        &mut m,
    );
    assert!(s.in_spike());
    assert_eq!(s.rate(), Bitrate::bps(3_879_762));
    assert_eq!(s.rtt_prev(), Some(dms(130)));
    assert_eq!(s.congestion_cuts(), 1);
}

#[test]
fn with_resume_reduced_the_hold_ends_at_the_reduced_rate() {
    let mut m = VecSink::default();
    let c = VtpConfig {
        resume_at_achieved_rate: false,
        ..cfg()
    };
    let mut s = sender_with_cut_at_300ms(c, &mut m);
    assert_eq!(s.rate(), Bitrate::bps(3_037_500));
    run_until(&mut s, ms(540), &mut m);
    // At τ the mode changes but the rate stays γ·AR·(1 + e) = 379 687.5 B/s.
    s.handle_timeout(ms(540), &mut m);
    assert_eq!(s.mode(), VtpMode::Increase);
    assert_eq!(s.rate(), Bitrate::bps(3_037_500));
    run_until(&mut s, ms(670), &mut m);
    // Then the equivalent-window rule from there: 379 687.5 + 1000/0.12 = 388 020.83 B/s.
    feed(
        &mut s,
        ms(670),
        &report(fb(ms(550), 4_000_000, 300, 0, 10)),
        &mut m,
    );
    assert_eq!(s.rate(), Bitrate::bps(3_104_167));
}

#[test]
fn losses_of_the_answered_episode_do_not_cut_again() {
    let mut m = VecSink::default();
    let mut s = sender_cut_at_300ms(&mut m);
    let sent = run_until(&mut s, ms(400), &mut m);
    let first_after_cut = sent[0].header.trace_seq() as u64;
    // Still in the spike (sample 250 ms), a loss among packets all sent before the cut.
    feed(
        &mut s,
        ms(400),
        &report(fb(ms(150), 4_000_000, first_after_cut - 1, 3, 7)),
        &mut m,
    );
    assert!(s.in_spike());
    assert_eq!(s.congestion_cuts(), 1);
    assert_eq!(s.rate(), Bitrate::bps(3_037_500));
    assert_eq!(s.mode(), VtpMode::Hold { until: ms(540) });
    // A report covering packets sent after the cut: a new episode, a new cut and hold, with
    // AR = 2 Mbit/s: R = 0.75·250 000·1.0125 B/s = 1 518 750 bit/s. srtt has moved to
    // 0.12 + (0.25 − 0.12)/8 = 0.13625 (sample at 400 ms) and then
    // 0.13625 + (0.25 − 0.13625)/8 = 0.15046875 s: τ = 300.9375 ms.
    feed(
        &mut s,
        ms(450),
        &report(fb(ms(200), 2_000_000, first_after_cut, 1, 9)),
        &mut m,
    );
    assert_eq!(s.congestion_cuts(), 2);
    assert_eq!(s.rate(), Bitrate::bps(1_518_750));
    assert_eq!(
        s.mode(),
        VtpMode::Hold {
            until: ms(450) + Duration::from_nanos(300_937_500)
        }
    );
}

#[test]
fn achieved_rate_zero_gives_one_packet_per_rtt() {
    let mut s = sender(cfg());
    run_until(&mut s, ms(100), &mut NullSink);
    feed(
        &mut s,
        ms(100),
        &report(fb(ms(0), 4_000_000, 50, 0, 10)),
        &mut NullSink,
    );
    run_until(&mut s, ms(300), &mut NullSink);
    feed(
        &mut s,
        ms(300),
        &report(fb(ms(40), 0, 200, 1, 9)),
        &mut NullSink,
    );
    // srtt = 0.12 s: one packet per RTT = 8 333.33 B/s = 66 666.67 bit/s.
    assert_eq!(s.rate(), Bitrate::bps(66_667));
    assert!((s.min_rate_bytes_per_sec() - 1000.0 / 0.12).abs() < 1e-6);
}

#[test]
fn at_most_one_increase_per_rtt() {
    let mut s = sender(cfg());
    run_until(&mut s, ms(100), &mut NullSink);
    feed(
        &mut s,
        ms(100),
        &report(fb(ms(0), 8_000_000, 50, 0, 10)),
        &mut NullSink,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_080_000));
    run_until(&mut s, ms(150), &mut NullSink);
    // 50 ms after the last increase (RTT 100 ms): no increase.
    feed(
        &mut s,
        ms(150),
        &report(fb(ms(50), 8_000_000, 60, 0, 10)),
        &mut NullSink,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_080_000));
    run_until(&mut s, ms(200), &mut NullSink);
    // 100 ms after: R = 1.01·10⁶ + 10⁴ = 1.02·10⁶ B/s.
    feed(
        &mut s,
        ms(200),
        &report(fb(ms(100), 8_000_000, 70, 0, 10)),
        &mut NullSink,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_160_000));
}

#[test]
fn increase_denominator_is_kept_in_its_bounds() {
    // RTT gain 1: the smoothed RTT is the last sample.
    let mut s = sender(VtpConfig {
        rtt_gain: 1.0,
        ..cfg()
    });
    run_until(&mut s, ms(300), &mut NullSink);
    // RTT 300 ms: R = 10⁶ + 1000/0.3 = 1 003 333.33 B/s.
    feed(
        &mut s,
        ms(300),
        &report(fb(ms(0), 8_000_000, 50, 0, 10)),
        &mut NullSink,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_026_667));
    run_until(&mut s, ms(700), &mut NullSink);
    // RTT falls to 100 ms: RTT_prev/RTT = 3 is clamped to 1, the denominator is 1 (not −1):
    // R = 1 003 333.33 + 10 000 = 1 013 333.33 B/s, no more than the linear increase.
    feed(
        &mut s,
        ms(700),
        &report(fb(ms(600), 8_000_000, 60, 0, 10)),
        &mut NullSink,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_106_667));
    run_until(&mut s, ms(1200), &mut NullSink);
    // RTT rises to 400 ms: 0.1/0.4 = 0.25 is clamped to 0.5, the denominator is 1.5:
    // R = (1 013 333.33 + 2 500)/1.5 = 677 222.22 B/s.
    feed(
        &mut s,
        ms(1200),
        &report(fb(ms(800), 8_000_000, 70, 0, 10)),
        &mut NullSink,
    );
    assert_eq!(s.rate(), Bitrate::bps(5_417_778));
}

#[test]
fn silence_cuts_and_holds_then_keeps_the_rate_unless_a_report_came() {
    let mut s = sender(VtpConfig {
        no_feedback_periods: 2,
        ..cfg()
    });
    let mut m = VecSink::default();
    // First packet at 0; no RTT yet, so the expected period is the initial 100 ms: a report
    // is due before 200 ms. One comes at 100 ms (RTT 100 ms, AR 2 Mbit/s): R = 1.01·10⁶ B/s
    // by the increase, and the next is due two periods later, before 300 ms.
    run_until(&mut s, ms(100), &mut m);
    feed(
        &mut s,
        ms(100),
        &report(fb(ms(0), 2_000_000, 50, 0, 10)),
        &mut m,
    );
    assert_eq!(s.rate(), Bitrate::bps(8_080_000));
    run_until(&mut s, ms(300) - Duration::from_nanos(1), &mut m);
    assert_eq!(s.rate(), Bitrate::bps(8_080_000));
    assert_eq!(s.mode(), VtpMode::Increase);
    // Silence: R = γ·R = 757 500 B/s = 6.06 Mbit/s, held for τ = 0.1/0.5 = 200 ms.
    run_until(&mut s, ms(300), &mut m);
    assert_eq!(s.rate(), Bitrate::bps(6_060_000));
    assert_eq!(s.mode(), VtpMode::Hold { until: ms(500) });
    assert_eq!(s.silence_cuts(), 1);
    // At 500 ms the hold ends without a report heard during it: the stale AR (2 Mbit/s)
    // does not replace the rate. The silence has lasted two more periods: R = 0.75·757 500
    // = 568 125 B/s, held until 700 ms.
    run_until(&mut s, ms(500), &mut m);
    assert_eq!(s.rate(), Bitrate::bps(4_545_000));
    assert_eq!(s.mode(), VtpMode::Hold { until: ms(700) });
    assert_eq!(s.silence_cuts(), 2);
    // A report during the hold (AR 3 Mbit/s): the hold ends with R = AR·(1 + e).
    run_until(&mut s, ms(550), &mut m);
    feed(
        &mut s,
        ms(550),
        &report(fb(ms(400), 3_000_000, 60, 0, 10)),
        &mut m,
    );
    assert_eq!(s.rate(), Bitrate::bps(4_545_000));
    run_until(&mut s, ms(700), &mut m);
    assert_eq!(s.rate(), Bitrate::mbps(3));
    assert_eq!(s.mode(), VtpMode::Increase);
    assert_eq!(s.silence_cuts(), 2);
}

#[test]
fn bogus_and_stale_reports_are_ignored() {
    let mut s = VtpSender::new(&running(ms(10), None), cfg());
    let mut m = VecSink::default();
    // Before anything was sent.
    feed(&mut s, ms(5), &report(fb(ms(0), 1, 0, 0, 1)), &mut m);
    run_until(&mut s, ms(100), &mut m);
    let rate = s.rate();
    let bogus = [
        fb(ms(20), 1, 91, 0, 1),      // names packet 91: only 0..=90 were sent
        fb(ms(500), 1, 5, 0, 1),      // echo from the future
        fb(ms(5), 1, 5, 0, 1),        // echo before the first packet
        fb(Instant::MAX, 1, 5, 9, 1), // absurd
    ];
    for f in bogus {
        feed(&mut s, ms(100), &report(f), &mut m);
    }
    assert_eq!(s.ignored_reports(), 5);
    assert_eq!((s.rate(), s.srtt(), s.achieved_rate()), (rate, None, None));

    let good = VtpFeedback {
        t_delay: dms(5),
        ..fb(ms(20), 4_000_000, 5, 0, 10)
    };
    feed(&mut s, ms(100), &report(good), &mut m);
    assert_eq!(s.srtt(), Some(dms(75)));
    // The same report again, an older one, the same echo with a shorter hold: all stale.
    let shorter = VtpFeedback {
        t_delay: Duration::ZERO,
        ..good
    };
    let older_echo = fb(ms(15), 4_000_000, 4, 0, 10);
    for f in [good, older_echo, shorter] {
        feed(&mut s, ms(110), &report(f), &mut m);
    }
    assert_eq!(s.ignored_reports(), 8);
    // A hold longer than the round trip: the report counts (AR), its RTT sample does not.
    let held = VtpFeedback {
        t_delay: Duration::from_secs(1),
        ..fb(ms(30), 2_000_000, 15, 0, 10)
    };
    feed(&mut s, ms(120), &report(held), &mut m);
    assert_eq!(s.ignored_reports(), 8);
    assert_eq!(s.srtt(), Some(dms(75)));
    assert_eq!(s.achieved_rate(), Some(Bitrate::mbps(2)));
    assert_eq!(s.stats().packets_received, 10);
}
