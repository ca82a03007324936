//! Conformance tests of the TFRC sender and receiver as state machines: step plans with
//! explicit times and packets in, asserting what comes out (no simulator).

use crate::lda::metrics::WIRELESS_LOSS;
use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant, RngStream};

use super::*;
use crate::tfrc::{LossRate, TfrcData, TfrcFeedback};
use crate::{Direction, Endpoint, FlowCtx, Header, NullSink, Packet};

fn ms(x: u64) -> Instant {
    Instant::from_nanos(x * 1_000_000)
}

/// The segment of a default 1000-byte data packet: less IPv4 20, UDP 8, the frame header 8 and
/// the TFRC data header 16.
const SEGMENT: u32 = 948;

fn data(seq: u64, sent: Instant, rtt_ms: u64) -> Packet {
    Packet {
        flow: FlowId(0),
        direction: Direction::Forward,
        size: DataSize::bytes(1000),
        payload: SEGMENT,
        sent_at: sent,
        header: Header::TfrcData(TfrcData {
            conn: 0,
            seq,
            timestamp: sent,
            rtt: Duration::from_millis(rtt_ms),
            round: 0,
        }),
    }
}

fn feedback(t_recvdata: Instant, x_recv: Bitrate, p: f64) -> Packet {
    Packet {
        flow: FlowId(0),
        direction: Direction::Reverse,
        size: DataSize::bytes(48),
        payload: 0,
        sent_at: t_recvdata,
        header: Header::TfrcFeedback(TfrcFeedback {
            conn: 0,
            t_recvdata,
            t_delay: Duration::ZERO,
            x_recv,
            p: LossRate::from_f64(p),
        }),
    }
}

fn report_p(p: &Packet) -> f64 {
    match p.header {
        Header::TfrcFeedback(f) => f.p.value(),
        _ => panic!("not a report: {p:?}"),
    }
}

/// A receiver fed packets `0..n` sent every 10 ms (arriving 50 ms later) except `lost`,
/// with the sender's RTT at 100 ms; returns the p of the last report it sent.
fn receive(n: u64, lost: &[u64], ndupack: u32) -> (TfrcReceiver, f64) {
    let config = TfrcReceiverConfig {
        ndupack,
        ..TfrcReceiverConfig::default()
    };
    let mut rx = TfrcReceiver::new(FlowId(0), 0, config, EquationForm::Rfc5348, None);
    let mut p = 0.0;
    for seq in (0..n).filter(|s| !lost.contains(s)) {
        let sent = ms(10 * seq);
        let now = sent + Duration::from_millis(50);
        rx.handle_packet(now, &data(seq, sent, 100), &mut NullSink);
        while let Some(r) = rx.poll_transmit(now) {
            p = report_p(&r);
        }
    }
    (rx, p)
}

#[test]
fn losses_within_one_rtt_are_one_loss_event() {
    // Packets 100, 101, 103 and 105 are lost within 60 ms (< R = 100 ms): one event.
    let (one, _) = receive(400, &[100, 101, 103, 105], 3);
    // 100 and 130 are 300 ms apart: two events.
    let (two, _) = receive(400, &[100, 130], 3);
    // The first event's synthetic interval is the same for both; with two events I_1 = 30
    // joins it, so p rises.
    assert!(one.loss_event_rate() > 0.0);
    assert!(two.loss_event_rate() > one.loss_event_rate());
    let (three, _) = receive(400, &[100, 130, 160], 3);
    assert!(three.loss_event_rate() > two.loss_event_rate());
}

#[test]
fn loss_event_rate_after_a_given_history_by_hand() {
    // Events start at 100, 150, 190, 220 (each > R = 10 packets apart); highest 399.
    let (rx, reported) = receive(400, &[100, 150, 190, 220], 3);
    // Closed intervals newest first: 30, 40, 50, then the synthetic one I_s; I_0 = 180.
    // With I_0: (180 + 30 + 40 + 50·1 + I_s·0.8)/(4.8); without: (30 + 40 + 50 + I_s)/4.
    // I_s comes from the equation at the receive rate of ≈ 94.8 kB/s, R = 100 ms: a long
    // interval, so compute p both ways from the history the receiver holds.
    let p = rx.loss_event_rate();
    let synthetic = {
        let eq = EquationForm::Rfc5348;
        // Receive rate over the period before the first loss: 948 B every 10 ms.
        let s = f64::from(SEGMENT);
        1.0 / eq.loss_rate_for(s, 0.1, 0.4, s * 100.0)
    };
    let with_open = (180.0 + 30.0 + 40.0 + 50.0 + 0.8 * synthetic) / 4.8;
    let without = (30.0 + 40.0 + 50.0 + synthetic) / 4.0;
    let expected = 1.0 / with_open.max(without);
    assert!(
        (p / expected - 1.0).abs() < 0.02,
        "p {p} expected {expected} (I_s {synthetic})"
    );
    // Reports went out with the loss events (p only falls after the last one).
    assert!(reported >= p);
}

#[test]
fn ndupack_packets_must_follow_a_gap_before_it_counts() {
    // Packet 10 is missing; 11 and 12 arrive: not yet lost with NDUPACK = 3.
    let (rx, _) = receive(13, &[10], 3);
    assert_eq!(rx.loss_event_rate(), 0.0);
    let (rx, _) = receive(14, &[10], 3);
    assert!(rx.loss_event_rate() > 0.0);
    // ns-2's sink declares the loss after one packet.
    let (rx, _) = receive(12, &[10], 1);
    assert!(rx.loss_event_rate() > 0.0);
}

#[test]
fn a_late_packet_fills_its_hole() {
    let config = TfrcReceiverConfig::default();
    let mut rx = TfrcReceiver::new(FlowId(0), 0, config, EquationForm::Rfc5348, None);
    for (i, seq) in [0u64, 1, 2, 4, 3, 5, 6, 7, 8].into_iter().enumerate() {
        let now = ms(10 * i as u64);
        rx.handle_packet(now, &data(seq, now, 100), &mut NullSink);
        while rx.poll_transmit(now).is_some() {}
    }
    assert_eq!(rx.loss_event_rate(), 0.0);
}

#[test]
fn a_new_loss_event_is_reported_at_once() {
    let config = TfrcReceiverConfig::default();
    let mut rx = TfrcReceiver::new(FlowId(0), 0, config, EquationForm::Rfc5348, None);
    let mut reports = Vec::new();
    for seq in (0..40).filter(|&s| s != 20) {
        let now = ms(10 * seq);
        rx.handle_packet(now, &data(seq, now, 1000), &mut NullSink);
        while let Some(r) = rx.poll_transmit(now) {
            reports.push((now, report_p(&r)));
        }
    }
    // The first packet is reported at once; then nothing until the loss of 20 is declared
    // on the arrival of 23 (the timer is 1 s away).
    assert_eq!(reports[0], (ms(0), 0.0));
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[1].0, ms(230));
    assert!(reports[1].1 > 0.0);
}

/// A sender that has been told its RTT is 100 ms by a first report at 100 ms.
fn sender_with_rtt(config: TfrcConfig) -> TfrcSender {
    let mut tx = TfrcSender::new(&FlowCtx::at_zero(FlowId(0), 1), 0, config);
    let first = tx.poll_transmit(Instant::ZERO).expect("sends at start");
    assert!(matches!(first.header, Header::TfrcData(_)));
    tx.handle_packet(
        ms(100),
        &feedback(Instant::ZERO, Bitrate::ZERO, 0.0),
        &mut NullSink,
    );
    tx
}

fn bytes_per_s(r: Bitrate) -> f64 {
    r.as_bytes_per_sec()
}

#[test]
fn first_report_sets_the_initial_window_rate() {
    let tx = sender_with_rtt(TfrcConfig::default());
    // s = 948 B: W_init = min(4s, max(2s, 4380)) = 3792 B over R = 100 ms.
    assert!(
        (bytes_per_s(tx.rate()) - 37_920.0).abs() < 1.0,
        "{}",
        tx.rate()
    );
}

#[test]
fn slow_start_doubles_per_rtt_and_stops_at_the_first_loss() {
    let mut tx = sender_with_rtt(TfrcConfig::default());
    let mut rate = bytes_per_s(tx.rate());
    for k in 1..=4u64 {
        let now = ms(100 + 100 * k);
        // Echo a packet sent one RTT ago; the receiver saw far more than the rate.
        tx.handle_packet(
            now,
            &feedback(ms(100 * k), Bitrate::mbps(100), 0.0),
            &mut NullSink,
        );
        let new = bytes_per_s(tx.rate());
        assert!(
            (new / rate - 2.0).abs() < 1e-3,
            "round {k}: {rate} -> {new}"
        );
        rate = new;
    }
    // A report half an RTT later does not double again.
    tx.handle_packet(
        ms(550),
        &feedback(ms(450), Bitrate::mbps(100), 0.0),
        &mut NullSink,
    );
    assert!((bytes_per_s(tx.rate()) / rate - 1.0).abs() < 1e-3);
    // Slow start is capped by twice the largest receive rate of the last two RTTs: the
    // 100 Mbit/s report of 500 ms still counts at 700 ms, no longer at 800 ms.
    tx.handle_packet(
        ms(700),
        &feedback(ms(600), Bitrate::kbps(400), 0.0),
        &mut NullSink,
    );
    assert!((bytes_per_s(tx.rate()) / rate - 2.0).abs() < 1e-3);
    tx.handle_packet(
        ms(800),
        &feedback(ms(700), Bitrate::kbps(400), 0.0),
        &mut NullSink,
    );
    assert!(
        (bytes_per_s(tx.rate()) - 2.0 * 50_000.0).abs() < 1.0,
        "{}",
        tx.rate()
    );
    // The first report with p > 0 sets the equation's rate and leaves slow start.
    tx.handle_packet(
        ms(900),
        &feedback(ms(800), Bitrate::mbps(100), 0.01),
        &mut NullSink,
    );
    let eq = EquationForm::Rfc5348.rate(
        f64::from(SEGMENT),
        0.1,
        LossRate::from_f64(0.01).value(),
        0.4,
    );
    assert!(
        (bytes_per_s(tx.rate()) / eq - 1.0).abs() < 1e-3,
        "{} vs {eq}",
        tx.rate()
    );
    tx.handle_packet(
        ms(1000),
        &feedback(ms(900), Bitrate::mbps(100), 0.01),
        &mut NullSink,
    );
    assert!((bytes_per_s(tx.rate()) / eq - 1.0).abs() < 1e-3);
}

#[test]
fn no_feedback_timer_halves_the_rate() {
    let mut tx = sender_with_rtt(TfrcConfig::default());
    let rate = bytes_per_s(tx.rate());
    // The timer is max(4R, 2s/X) = 400 ms after the report at 100 ms.
    let due = tx.poll_timeout().map(|t| t.max(ms(100))).unwrap();
    assert!(due <= ms(500));
    tx.handle_timeout(ms(499), &mut NullSink);
    assert_eq!(bytes_per_s(tx.rate()), rate);
    tx.handle_timeout(ms(500), &mut NullSink);
    assert!((bytes_per_s(tx.rate()) / rate - 0.5).abs() < 1e-6);
    // Again after max(4R, 2s/X) more.
    tx.handle_timeout(ms(900), &mut NullSink);
    assert!((bytes_per_s(tx.rate()) / rate - 0.25).abs() < 1e-6);
}

#[test]
fn no_feedback_in_congestion_avoidance_halves_through_the_receive_limit() {
    let mut tx = sender_with_rtt(TfrcConfig::default());
    tx.handle_packet(
        ms(200),
        &feedback(ms(100), Bitrate::mbps(1), 0.01),
        &mut NullSink,
    );
    let x = bytes_per_s(tx.rate());
    // X_Bps ≈ 107 kB/s is below 2·X_recv = 250 kB/s: limit X_Bps/2, set {X_Bps/4}, so X is
    // capped at twice that, X_Bps/2.
    tx.handle_timeout(ms(600), &mut NullSink);
    assert!((bytes_per_s(tx.rate()) / (x / 2.0) - 1.0).abs() < 1e-4);
}

#[test]
fn packets_are_paced_at_the_allowed_rate() {
    let mut tx = sender_with_rtt(TfrcConfig::default());
    // 37 920 B/s of 948-byte segments: one packet every 25 ms.
    let mut times = Vec::new();
    let mut now = ms(100);
    while times.len() < 5 {
        if let Some(p) = tx.poll_transmit(now) {
            times.push(p.sent_at);
            continue;
        }
        now = tx.poll_timeout().unwrap().max(now);
    }
    for w in times.windows(2) {
        assert_eq!(w[1] - w[0], Duration::from_millis(25));
    }
}

#[test]
fn ns2_preset_differs_where_ns2_does() {
    let c = TfrcFlowConfig::preset(TfrcPreset::Ns2);
    assert_eq!(c.sender.segment(), 1000.0);
    assert_eq!(c.receiver.ndupack, 1);
    assert_eq!(c.sender.equation, EquationForm::Ns2);
    let d = TfrcFlowConfig::default();
    assert_eq!(d.sender.segment(), f64::from(SEGMENT));
    assert_eq!(d.receiver.ndupack, 3);
}

/// A random draw below `n` (at least 1).
fn below(g: &mut RngStream, n: u64) -> u64 {
    g.next_u64() % n.max(1)
}

#[test]
fn shuffled_dropped_duplicated_and_bogus_packets_never_break_either_end() {
    let max = Bitrate::mbps(50);
    for seed in 0..200 {
        let mut g = RngStream::from_seed(seed);
        let preset = if seed % 2 == 0 {
            TfrcPreset::Rfc5348
        } else {
            TfrcPreset::Ns2
        };
        let mut c = TfrcFlowConfig::preset(preset);
        c.sender.max_rate = max;
        let (mut tx, mut rx) = c.pair(&FlowCtx::at_zero(FlowId(0), 1), 0);
        // ns-2's agent has no t_mbi floor.
        let min = if c.sender.t_mbi_floor {
            c.sender.segment() / c.sender.t_mbi.as_secs_f64()
        } else {
            0.0
        };
        let mut now = Instant::ZERO;
        let mut in_flight: Vec<Packet> = Vec::new();
        for _ in 0..3000 {
            now += Duration::from_micros(below(&mut g, 20_000));
            tx.handle_timeout(now, &mut NullSink);
            rx.handle_timeout(now, &mut NullSink);
            while let Some(p) = tx.poll_transmit(now) {
                in_flight.push(p);
            }
            while let Some(p) = rx.poll_transmit(now) {
                in_flight.push(p);
            }
            // Once served, neither end asks to be woken in the past (a driver would spin).
            for t in [tx.poll_timeout(), rx.poll_timeout()].into_iter().flatten() {
                assert!(t > now, "seed {seed}: timer {t} at {now}");
            }
            if in_flight.is_empty() {
                continue;
            }
            let i = below(&mut g, in_flight.len() as u64) as usize;
            let mut p = in_flight.swap_remove(i);
            match below(&mut g, 10) {
                0 => continue,          // dropped
                1 => in_flight.push(p), // duplicated
                2 => match &mut p.header {
                    Header::TfrcData(d) => {
                        d.seq = d.seq.wrapping_add(g.next_u64() << (below(&mut g, 40)));
                        d.timestamp = Instant::from_nanos(g.next_u64() << below(&mut g, 30));
                        d.rtt = Duration::from_nanos(g.next_u64() << below(&mut g, 30));
                    }
                    Header::TfrcFeedback(f) => {
                        f.t_recvdata = Instant::from_nanos(g.next_u64() << below(&mut g, 30));
                        f.t_delay = Duration::from_nanos(g.next_u64() << below(&mut g, 30));
                        f.x_recv = [Bitrate::ZERO, Bitrate::gbps(100), Bitrate::bps(1)]
                            [below(&mut g, 3) as usize];
                        f.p = [
                            LossRate::ZERO,
                            LossRate::from_f64(1.0),
                            LossRate::from_f64(1e-9),
                        ][below(&mut g, 3) as usize];
                    }
                    _ => {}
                },
                _ => {}
            }
            match p.direction {
                Direction::Forward => rx.handle_packet(now, &p, &mut NullSink),
                Direction::Reverse => tx.handle_packet(now, &p, &mut NullSink),
            }
            let r = bytes_per_s(tx.rate());
            assert!(r.is_finite() && r >= min * 0.999, "seed {seed}: rate {r}");
            assert!(r <= max.as_bytes_per_sec() * 1.001, "seed {seed}: rate {r}");
            let p = rx.loss_event_rate();
            assert!((0.0..=1.0).contains(&p), "seed {seed}: p {p}");
        }
    }
}

#[test]
fn tfrc_wireless_keeps_losses_its_lda_calls_wireless_out_of_the_history() {
    use crate::lda::{Lda, LdaConfig, LdaKind};
    // Constant one-way delay (no queue): Spike never enters its spike state, so a gap is a
    // wireless loss. Packets sent every 10 ms, one lost in every 50.
    let run = |lda: Option<Lda>| {
        let mut rx = TfrcReceiver::new(
            FlowId(0),
            0,
            TfrcReceiverConfig::default(),
            EquationForm::Rfc5348,
            lda,
        );
        let mut sink = crate::VecSink::default();
        for seq in (0..2000u64).filter(|s| s % 50 != 25) {
            let sent = ms(10 * seq);
            rx.handle_packet(
                sent + Duration::from_millis(30),
                &data(seq, sent, 100),
                &mut sink,
            );
            while rx.poll_transmit(sent).is_some() {}
        }
        let wireless: u32 = sink
            .0
            .iter()
            .filter_map(|(_, m)| m.of(&WIRELESS_LOSS).map(|n| n as u32))
            .sum();
        (rx.loss_event_rate(), wireless)
    };
    let (plain, _) = run(None);
    assert!((plain - 0.02).abs() < 0.005, "plain TFRC p {plain}");
    let (with_spike, wireless) = run(Some(Lda::new(LdaConfig::with_kind(LdaKind::Spike))));
    assert_eq!(with_spike, 0.0);
    assert_eq!(wireless, 40);
}

#[test]
fn tfrc_wireless_keeps_a_loss_among_the_first_packets_out_of_the_history() {
    use crate::lda::{Lda, LdaConfig, LdaKind};
    // The second packet of the flow is lost on the lossy link, before any two packets have
    // arrived consecutively (no T_min): the one-way delay is constant, so Spike, which decides
    // from its own state (the ROTT range), calls it wireless and p stays 0. Biaz has no T_min
    // yet and counts it, as plain TFRC would, seeding the loss history from the first packets'
    // tiny receive rate (RFC 5348 §6.3.1). ZigZag decides from its own state too, but calls a
    // loss wireless only when the ROTT is below its mean, which a constant delay never is.
    let run_losing = |kind: LdaKind, lost: u64| {
        let mut rx = TfrcReceiver::new(
            FlowId(0),
            0,
            TfrcReceiverConfig::default(),
            EquationForm::Rfc5348,
            Some(Lda::new(LdaConfig::with_kind(kind))),
        );
        let mut sink = crate::VecSink::default();
        // One packet per second at first (RFC 5348 §4.2), then every 10 ms.
        let sends = [0u64, 1000, 2000, 2010, 2020, 2030, 2040, 2050, 2060];
        for (seq, &t) in sends.iter().enumerate() {
            if seq as u64 == lost {
                continue;
            }
            let sent = ms(t);
            rx.handle_packet(
                sent + Duration::from_millis(36),
                &data(seq as u64, sent, 72),
                &mut sink,
            );
            while rx.poll_transmit(sent).is_some() {}
        }
        rx.loss_event_rate()
    };
    let run = |kind| run_losing(kind, 1);
    assert_eq!(run(LdaKind::Spike), 0.0);
    assert!(
        run(LdaKind::Biaz) > 0.0,
        "Biaz has no T_min yet: congestion"
    );
    assert!(
        run(LdaKind::ZigZag) > 0.0,
        "a constant ROTT is never below its mean"
    );
    // The very first packet lost, before anything arrived: Spike's state starts normal, so the
    // gap the first arrival closes is wireless too (it was not classified before, and the
    // receiver counted it as congestion with RFC 5348's first-loss rate s/(2R): p ≈ 0.2).
    assert_eq!(run_losing(LdaKind::Spike, 0), 0.0);
    assert!(run_losing(LdaKind::Biaz, 0) > 0.1);
}

/// A sender with `config`, started at 0, sending whatever is due, with `reports` feedback
/// reports, one every 110 ms, each echoing a packet sent 100 ms earlier (an RTT of 100 ms) with
/// `x_recv` (bit/s) and p; stops at the last report's instant with the report just handled.
fn sender_after(config: TfrcFlowConfig, reports: &[(u64, f64)]) -> (TfrcSender, Instant) {
    let (mut tx, _) = config.pair(&FlowCtx::at_zero(FlowId(0), 1), 0);
    let mut t = Instant::ZERO;
    for (k, &(x_recv_bps, p)) in reports.iter().enumerate() {
        let at = ms(110 * (k as u64 + 1));
        loop {
            tx.handle_timeout(t, &mut NullSink);
            while tx.poll_transmit(t).is_some() {}
            match tx.poll_timeout() {
                Some(next) if next < at => t = next.max(t),
                _ => break,
            }
        }
        t = at;
        let fb = feedback(at - Duration::from_millis(100), Bitrate::bps(x_recv_bps), p);
        tx.handle_packet(at, &fb, &mut NullSink);
    }
    (tx, t)
}

fn ns2_sender_after(reports: &[(u64, f64)]) -> (TfrcSender, Instant) {
    sender_after(TfrcFlowConfig::preset(TfrcPreset::Ns2), reports)
}

#[test]
fn ns2_sends_a_packet_at_once_on_each_slow_start_report() {
    // ns-2's `recv()` calls `nextpkt()` after `slowstart()`: a packet leaves with the report,
    // and the send timer restarts from it. At the fourth report (440 ms; rate 40 kB/s since
    // 110 ms, a packet every 25 ms, the last at 435 ms) the next would be due at 460 ms.
    let reports = [
        (320_000, 0.0),
        (320_000, 0.0),
        (320_000, 0.0),
        (320_000, 0.0),
    ];
    let (mut tx, now) = ns2_sender_after(&reports);
    assert!(tx.poll_transmit(now).is_some(), "a packet at the report");
    let mut c = TfrcFlowConfig::preset(TfrcPreset::Ns2);
    c.sender.send_on_report = false;
    let (mut later, now) = sender_after(c, &reports);
    assert!(
        later.poll_transmit(now).is_none(),
        "without the rule, on schedule only"
    );
}

#[test]
fn ns2_sends_a_packet_at_once_on_a_no_feedback_expiry_and_has_no_t_mbi_floor() {
    let (mut tx, now) = ns2_sender_after(&[(320_000, 0.0)]);
    while tx.poll_transmit(now).is_some() {}
    let floor = tx.config.segment() / tx.config.t_mbi.as_secs_f64();
    for _ in 0..40 {
        // Drain the sends due before the next expiry, then let it fire.
        loop {
            let due = tx.poll_timeout().expect("a timer");
            if due >= tx.no_feedback_at {
                break;
            }
            tx.handle_timeout(due, &mut NullSink);
            while tx.poll_transmit(due).is_some() {}
        }
        let t = tx.no_feedback_at;
        tx.handle_timeout(t, &mut NullSink);
        assert!(
            tx.poll_transmit(t).is_some(),
            "a packet at the expiry at {t}"
        );
    }
    // Forty halvings: far below RFC 5348's one segment per 64 s.
    assert!(
        bytes_per_s(tx.rate()) < floor / 1000.0,
        "{}",
        bytes_per_s(tx.rate())
    );
}

#[test]
fn ns2_caps_congestion_avoidance_by_the_latest_receive_rate() {
    // Slow start, then p > 0 with a large X_recv, then the same p with a small one: ns-2 caps at
    // twice the latest X_recv (2 × 40 kB/s); RFC 5348's set keeps the large one (two RTTs).
    let big = 8_000_000; // bit/s
    let small = 320_000; // 40 kB/s
    let reports = [
        (big, 0.0),
        (big, 0.0),
        (big, 0.0001),
        (big, 0.0001),
        (small, 0.0001),
    ];
    let (tx, _) = ns2_sender_after(&reports);
    let r = bytes_per_s(tx.rate());
    assert!((r - 80_000.0).abs() < 1.0, "ns-2: {r}");
    let mut c = TfrcFlowConfig::preset(TfrcPreset::Ns2);
    c.sender.receive_limit = ReceiveLimit::Set;
    let (mut set, _) = c.pair(&FlowCtx::at_zero(FlowId(0), 1), 0);
    assert!(set.poll_transmit(Instant::ZERO).is_some());
    for (k, &(x, p)) in reports.iter().enumerate() {
        let now = ms(100 * (k as u64 + 1));
        let fb = feedback(now - Duration::from_millis(100), Bitrate::bps(x), p);
        set.handle_packet(now, &fb, &mut NullSink);
    }
    assert!(
        bytes_per_s(set.rate()) > 2.0 * r,
        "the set keeps the larger X_recv"
    );
}

#[test]
fn ns2_slow_increase_spreads_a_doubling_over_the_rtt() {
    // Reports 1 and 2 set 4 s/R = 40 kB/s; report 3 (110 ms later than the last change, more
    // than R; X_recv 80 kB/s, so ss_max 160 kB/s) doubles it to 80 kB/s, which `slow_increase_`
    // reaches one step per packet: the gaps shrink from 25 ms towards 12.5 ms instead of
    // dropping to it at once.
    let (mut tx, now) = ns2_sender_after(&[(320_000, 0.0), (320_000, 0.0), (640_000, 0.0)]);
    assert!((bytes_per_s(tx.rate()) - 80_000.0).abs() < 1.0);
    let mut sent = Vec::new();
    let mut t = now;
    while sent.len() < 8 {
        if let Some(p) = tx.poll_transmit(t) {
            sent.push(p.sent_at);
        }
        t = tx.poll_timeout().unwrap().max(t);
    }
    let gaps: Vec<f64> = sent
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    assert!(gaps[0] > 0.02, "{gaps:?}");
    assert!(gaps.windows(2).all(|w| w[1] < w[0]), "{gaps:?}");
    assert!(*gaps.last().unwrap() > 0.0125, "{gaps:?}");
    // Without it the rate applies at once.
    let mut c = TfrcFlowConfig::preset(TfrcPreset::Ns2);
    c.sender.slow_increase = false;
    let (mut flat, now) = sender_after(c, &[(320_000, 0.0), (320_000, 0.0), (640_000, 0.0)]);
    let first = flat.poll_transmit(now).unwrap().sent_at;
    let next = flat.poll_timeout().unwrap();
    assert!(((next - first).as_secs_f64() - 0.0125).abs() < 1e-6);
}
