//! Loopback runs of the real-time driver, bounded in time: every protocol from a sender to a
//! receiver on 127.0.0.1 at a 50 Mbit/s cap, results written on both sides; and the attacks a
//! real endpoint must survive (spoofed feedback, a garbage flood, a silent receiver).

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::thread;

use fairstream_core::{Bitrate, Duration};
use fairstream_proto::wire::{self, AckStatus, Body, Handshake};
use fairstream_rt::{
    Impairment, RecvConfig, RecvReport, RtError, RtProtocol, SendConfig, SendReport, StopReason,
    bind_receiver, run_receiver, run_sender,
};

const CAP: Bitrate = Bitrate::mbps(50);

fn receiver() -> (SocketAddr, thread::JoinHandle<RecvReport>) {
    impaired_receiver(Impairment::default())
}

fn impaired_receiver(impairment: Impairment) -> (SocketAddr, thread::JoinHandle<RecvReport>) {
    let mut cfg = RecvConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.impairment = impairment;
    cfg.idle_timeout = Duration::from_millis(500);
    cfg.wait_for_sender = Some(Duration::from_secs(10));
    let sock = bind_receiver(&cfg).expect("binds");
    let addr = sock.local_addr().unwrap();
    let h = thread::spawn(move || {
        run_receiver(&cfg, &sock, &AtomicBool::new(false), &mut |_| {}).expect("receives")
    });
    (addr, h)
}

fn send(to: SocketAddr, p: RtProtocol, secs: u64) -> SendReport {
    let mut cfg = SendConfig::new(to, p, Duration::from_secs(secs));
    cfg.rate_cap = Some(CAP);
    run_sender(&cfg, &AtomicBool::new(false), &mut |_| {}).expect("sends")
}

/// Mean rate sent over the series bins after the first second, bits per second.
fn steady_rate(r: &SendReport) -> f64 {
    let s = &r.output.flow_series;
    let rows: Vec<usize> = (0..s.t_start.len())
        .filter(|&i| s.t_start[i] - s.t_start[0] >= 1.0)
        .collect();
    let bytes: u64 = rows.iter().map(|&i| s.bytes_sent[i]).sum();
    let secs: f64 = rows.iter().map(|&i| s.t_end[i] - s.t_start[i]).sum();
    bytes as f64 * 8.0 / secs
}

/// The sender's pacing lateness at the 99th percentile above which a run's rate tells of the
/// machine's load (the sender not scheduled when its packets were due: CI runs other tests
/// beside this one on two cores) rather than of the protocol. Unloaded it is 40–90 µs here; a CI
/// run failed TFRC at 23.3 Mbit/s with its sends 3.1 ms late at the 99th percentile.
const LOADED_P99: Duration = Duration::from_millis(1);

/// A 3-second run of `p` at the cap, with its steady rate; measured again (three runs at most)
/// while the rate is under half the cap and the sends were late by over `LOADED_P99`. A protocol
/// that cannot reach half the cap on an idle machine still fails, on its last run.
fn run_at_cap(p: RtProtocol) -> (SendReport, RecvReport, f64) {
    let mut runs = 1;
    loop {
        let (addr, rx) = receiver();
        let s = send(addr, p, 3);
        let r = rx.join().unwrap();
        let rate = steady_rate(&s);
        let late = s.lateness.quantile(0.99);
        if rate >= 0.5 * CAP.as_bps_f64() || late <= LOADED_P99 || runs == 3 {
            return (s, r, rate);
        }
        eprintln!(
            "{}: {:.1} Mbit/s with sends {late:?} late at p99, the machine loaded: measured again",
            p.name(),
            rate / 1e6
        );
        runs += 1;
    }
}

#[test]
fn every_protocol_runs_over_loopback_near_its_cap_with_results_on_both_sides() {
    for p in RtProtocol::ALL.into_iter().filter(|p| p.takes_rate_cap()) {
        let (s, r, rate) = run_at_cap(p);
        assert_eq!(s.stop, StopReason::Finished, "{p:?}");
        assert_eq!(r.protocol, Some(p));
        eprintln!(
            "{}: steady {:.1} Mbit/s, pacing p50 {:?} p99 {:?} ({} sends), feedback {}, received {} pkts, loss {:.4}",
            p.name(),
            rate / 1e6,
            s.lateness.quantile(0.5),
            s.lateness.quantile(0.99),
            s.lateness.count(),
            s.feedback,
            r.output.flows[0].packets_delivered,
            r.output.flows[0].loss_rate,
        );
        assert!(s.feedback > 10, "{p:?}: {} feedback reports", s.feedback);
        assert!(
            r.output.flows[0].packets_delivered > 1000,
            "{p:?}: {:?}",
            r.output.flows[0]
        );
        // The cap holds for MULTFRC's connections together too.
        assert!(rate <= CAP.as_bps_f64() * 1.05, "{p:?}: {rate}");
        assert!(rate >= 0.5 * CAP.as_bps_f64(), "{p:?}: {rate}");
        let dir = std::env::temp_dir().join(format!("fs-rt-{}-{}", p.name(), std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (side, out) in [("send", &s.output), ("recv", &r.output)] {
            let d = dir.join(side);
            fairstream_results::write_dir(&d, &Default::default(), out).expect("writes");
            for f in [
                "summary.json",
                "flow_series.parquet",
                "flow_summary.parquet",
            ] {
                assert!(d.join(f).is_file(), "{side}/{f} missing");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn the_media_streamer_runs_over_loopback_and_its_reports_prove_their_claims() {
    let (addr, rx) = receiver();
    let cfg = SendConfig::new(addr, RtProtocol::Surestream, Duration::from_secs(3));
    let s = run_sender(&cfg, &AtomicBool::new(false), &mut |_| {}).expect("sends");
    let r = rx.join().unwrap();
    assert_eq!(
        (s.stop, r.protocol),
        (StopReason::Finished, Some(RtProtocol::Surestream))
    );
    // A report every 500 ms, each claiming no loss with an echo that proves it.
    assert!(s.feedback >= 4, "{} reports", s.feedback);
    assert_eq!(s.lies, 0);
    // Prebuffering: the top level (450 kbit/s) six times over, in 1500-byte packets.
    let rate = steady_rate(&s);
    assert!((1e6..4e6).contains(&rate), "{rate}");
    assert!(r.output.flows[0].packets_delivered > 300);
    let capped = SendConfig {
        rate_cap: Some(CAP),
        ..cfg
    };
    assert!(matches!(
        run_sender(&capped, &AtomicBool::new(false), &mut |_| {}),
        Err(RtError::NoRateCap("surestream"))
    ));
}

#[test]
fn spoofed_feedback_from_a_third_socket_is_ignored_and_counted() {
    let (addr, rx) = receiver();
    let spoofer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut cfg = SendConfig::new(addr, RtProtocol::Tfrc, Duration::from_secs(2));
    cfg.rate_cap = Some(CAP);
    // Bind the sender to a known port so that the spoofer can aim at it.
    let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
    cfg.bind = probe.local_addr().unwrap();
    drop(probe);
    let target = cfg.bind;
    let spoof = thread::spawn(move || {
        // Feedback claiming a huge receive rate and no loss, for every connection id it guesses.
        let fb = fairstream_proto::Header::TfrcFeedback(fairstream_proto::tfrc::TfrcFeedback {
            conn: 0,
            t_recvdata: fairstream_core::Instant::ZERO,
            t_delay: Duration::ZERO,
            x_recv: Bitrate::gbps(10),
            p: fairstream_proto::tfrc::LossRate::ZERO,
        });
        let mut buf = [0u8; 64];
        for id in 0..20_000u32 {
            let n = wire::encode(id, &fb, 0, &mut buf).unwrap();
            let _ = spoofer.send_to(&buf[..n], target);
            if id % 1000 == 0 {
                thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    });
    let s = run_sender(&cfg, &AtomicBool::new(false), &mut |_| {}).expect("sends");
    spoof.join().unwrap();
    rx.join().unwrap();
    assert!(s.ignored > 1000, "ignored {}", s.ignored);
    assert!(steady_rate(&s) <= CAP.as_bps_f64() * 1.05);
}

#[test]
fn a_garbage_flood_leaves_the_receiver_up_and_the_flow_running() {
    let (addr, rx) = receiver();
    let flood = thread::spawn(move || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..100_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut d = x.to_be_bytes().repeat(1 + (i % 8) as usize);
            if i % 2 == 0 {
                d[..4].copy_from_slice(&[b'F', b'S', 1, (i % 20) as u8]);
            }
            let _ = s.send_to(&d, addr);
            if i % 5_000 == 0 {
                thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    });
    let s = send(addr, RtProtocol::Vtp, 3);
    flood.join().unwrap();
    let r = rx.join().unwrap();
    assert_eq!(s.stop, StopReason::Finished);
    assert!(
        r.malformed + r.ignored > 10_000,
        "{} {}",
        r.malformed,
        r.ignored
    );
    assert!(steady_rate(&s) >= 0.5 * CAP.as_bps_f64());
}

#[test]
fn a_silent_receiver_trips_the_circuit_breaker() {
    // A receiver that answers the hello and then never reports.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let acker = thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let (n, from) = silent.recv_from(&mut buf).unwrap();
        let f = wire::decode(&buf[..n]).unwrap();
        let Body::Handshake(Handshake::Hello { token, .. }) = f.body else {
            panic!("{f:?}")
        };
        let ack = Handshake::Ack {
            status: AckStatus::Accepted,
            token,
        };
        let m = wire::encode_handshake(f.conn_id, &ack, &mut buf).unwrap();
        silent.send_to(&buf[..m], from).unwrap();
        silent // kept open so that the sender's datagrams are not refused
    });
    let mut cfg = SendConfig::new(addr, RtProtocol::Tfrc, Duration::from_secs(20));
    cfg.breaker_silence = Duration::from_secs(1);
    let t0 = std::time::Instant::now();
    let s = run_sender(&cfg, &AtomicBool::new(false), &mut |_| {}).expect("runs");
    let took = t0.elapsed();
    drop(acker.join().unwrap());
    assert!(matches!(s.stop, StopReason::NoFeedback(_)), "{:?}", s.stop);
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
}

#[test]
fn bad_peers_get_one_clear_error() {
    // No receiver at all.
    let nobody = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = nobody.local_addr().unwrap();
    drop(nobody);
    let mut cfg = SendConfig::new(addr, RtProtocol::Vtp, Duration::from_secs(1));
    cfg.hello_attempts = 2;
    let e = run_sender(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(matches!(e, RtError::NoAnswer { .. }), "{e}");
    // A receiver that does not speak the protocol.
    let mut rcfg = RecvConfig::new("127.0.0.1:0".parse().unwrap());
    rcfg.protocols = vec![RtProtocol::Tfrc];
    rcfg.wait_for_sender = Some(Duration::from_secs(2));
    let sock = bind_receiver(&rcfg).unwrap();
    let to = sock.local_addr().unwrap();
    // A port in use.
    let e = bind_receiver(&RecvConfig::new(to)).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!("cannot bind {to}")),
        "{e}"
    );
    let rx =
        thread::spawn(move || run_receiver(&rcfg, &sock, &AtomicBool::new(false), &mut |_| {}));
    let cfg = SendConfig::new(to, RtProtocol::Vtp, Duration::from_secs(1));
    let e = run_sender(&cfg, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("the receiver at {to} does not speak vtp")
    );
    rx.join().unwrap().unwrap();
}

#[test]
fn a_receiver_that_hides_its_losses_does_not_raise_the_sender() {
    // The path drops 5 % (every 20th packet); the liar reports no loss at all. The rates are real
    // time on a shared machine: an honest run and a liar's run, one after the other, are compared
    // as a pair, and a pair spoiled by the load in between (the honest run slowed by other work)
    // is measured again, up to three pairs. A liar that the proof rules let raise the sender is
    // above the honest run in every pair.
    let run = |p: RtProtocol, lie: bool| {
        let (addr, rx) = impaired_receiver(Impairment {
            drop_every: 20,
            lie,
        });
        let s = send(addr, p, 3);
        rx.join().unwrap();
        eprintln!(
            "{p:?} lie={lie}: {:.1} Mbit/s, {} lies of {} reports, stop {:?}",
            steady_rate(&s) / 1e6,
            s.lies,
            s.feedback,
            s.stop
        );
        if lie {
            assert!(s.lies > 0, "{p:?}: no lie caught");
        } else {
            assert_eq!(s.lies, 0, "{p:?}: an honest receiver taken for a liar");
        }
        steady_rate(&s)
    };
    for p in [RtProtocol::Tfrc, RtProtocol::Vtp] {
        let mut pairs = Vec::new();
        while pairs.len() < 3 {
            let (honest, liar) = (run(p, false), run(p, true));
            pairs.push((honest, liar));
            if liar <= honest * 1.1 {
                break;
            }
        }
        let (honest, liar) = pairs[pairs.len() - 1];
        assert!(
            liar <= honest * 1.1,
            "{p:?}: the liar above the honest run in every pair (honest, liar): {pairs:?}"
        );
    }
}

#[test]
fn a_receiver_stopped_a_second_after_its_sender_ended_reports_the_senders_rate() {
    // One rule for a flow's active time: a receiver's is from the first packet to the last,
    // never the time until it was stopped (here a second after its sender finished).
    let mut cfg = RecvConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.idle_timeout = Duration::from_secs(30);
    cfg.wait_for_sender = Some(Duration::from_secs(10));
    let sock = bind_receiver(&cfg).expect("binds");
    let addr = sock.local_addr().unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let rx =
        thread::spawn(move || run_receiver(&cfg, &sock, &stopped, &mut |_| {}).expect("receives"));
    let mut s = SendConfig::new(addr, RtProtocol::Tfrc, Duration::from_secs(3));
    s.rate_cap = Some(Bitrate::mbps(20));
    let s = run_sender(&s, &AtomicBool::new(false), &mut |_| {}).expect("sends");
    thread::sleep(std::time::Duration::from_secs(1));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let r = rx.join().unwrap();
    assert_eq!(
        (s.stop, r.stop),
        (StopReason::Finished, StopReason::Interrupted)
    );
    let (sent, got) = (&s.output.flows[0], &r.output.flows[0]);
    assert_eq!(got.packets_dropped, 0, "{got:?}");
    let ratio = got.throughput_bps / sent.throughput_bps;
    assert!(
        (ratio - 1.0).abs() < 0.02,
        "received {:.3} Mbit/s over {:.3} s, sent {:.3} Mbit/s over {:.3} s",
        got.throughput_bps / 1e6,
        got.stop_s - got.start_s,
        sent.throughput_bps / 1e6,
        sent.stop_s - sent.start_s,
    );
}
