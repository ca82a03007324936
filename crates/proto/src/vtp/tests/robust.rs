//! Closed-loop tests: a sender and a receiver joined by a small event loop, over a channel
//! that drops, duplicates, delays, reorders and forges packets (the endpoints must never
//! panic and the rate must stay finite and within its limits), and over a drop-tail
//! bottleneck (the control must fill it, and shrug off random losses behind it).

use fairstream_core::RngStream;

use super::*;
use crate::NullSink;

use crate::closed_loop::{Bottleneck, Channel, Mangler, run};

/// Drops, duplicates, delays (reordering) and forges packets in both directions.
struct Chaos {
    m: Mangler,
}

impl Chaos {
    fn bogus_report(&mut self, now: Instant) -> Packet {
        let n = now.as_nanos();
        let t_echo = match self.m.upto(4) {
            0 => Instant::from_nanos(self.m.upto(n + 1)),
            1 => now.saturating_add(Duration::from_millis(5)),
            2 => Instant::MAX,
            _ => Instant::ZERO,
        };
        let x = self.m.rng.next_u64();
        let t_delay = self.m.pick(&[
            Duration::ZERO,
            Duration::MAX,
            Duration::from_nanos(x % 1_000_000_000),
        ]);
        let achieved_rate = self.m.pick(&[
            Bitrate::ZERO,
            Bitrate::bps(u64::MAX),
            Bitrate::bps(x % 100_000_000),
        ]);
        let highest_seq = self.m.pick(&[0, u64::MAX, x % 2_000]);
        let lost = self.m.pick(&[0, u32::MAX, (x % 100) as u32]);
        let received = self.m.pick(&[0, u32::MAX, (x % 97) as u32]);
        report(VtpFeedback {
            t_echo,
            t_delay,
            achieved_rate,
            highest_seq,
            lost,
            received,
        })
    }
    fn bogus_data(&mut self, now: Instant) -> Packet {
        let x = self.m.rng.next_u64();
        let seq = self.m.pick(&[0, u64::MAX, x % 5_000]);
        let timestamp = self.m.pick(&[Instant::ZERO, Instant::MAX, now]);
        let rtt = self.m.pick(&[
            Duration::ZERO,
            Duration::MAX,
            Duration::from_nanos(x % (1 << 30)),
        ]);
        let mut p = data(seq, timestamp, rtt);
        p.size = self.m.pick(&[
            DataSize::ZERO,
            DataSize::bytes(u64::MAX / 16),
            DataSize::bytes(1000),
        ]);
        p
    }
}

impl Channel for Chaos {
    fn forward(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        self.m.mangle(now, p, true, out);
        // Forged data only in the second half: one with a huge sequence number or RTT can
        // stall the receiver for good (it trusts data headers, as a TCP receiver does), and
        // the first half should exercise the whole loop.
        if now > Instant::from_nanos(10_000_000_000) && self.m.rng.bernoulli(0.02) {
            let b = self.bogus_data(now);
            out.push((now.saturating_add(self.m.delay()), b, true));
        }
        if self.m.rng.bernoulli(0.02) {
            let b = self.bogus_report(now);
            out.push((now.saturating_add(self.m.delay()), b, false));
        }
    }
    fn reverse(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        self.m.mangle(now, p, false, out);
        if self.m.rng.bernoulli(0.2) {
            let b = self.bogus_report(now);
            out.push((now.saturating_add(self.m.delay()), b, false));
        }
    }
}

#[test]
fn chaos_never_panics_and_keeps_the_rate_within_limits() {
    for seed in 0..12u64 {
        let config = match seed % 4 {
            0 => VtpConfig {
                max_rate: Bitrate::mbps(10),
                ..VtpConfig::default()
            },
            1 => VtpConfig {
                packet_size: DataSize::ZERO,
                gamma: 2.0,
                sigma: -1.0,
                min_period_packets: 0,
                initial_sampling_period: Duration::ZERO,
                initial_rtt: Duration::ZERO,
                max_rate: Bitrate::kbps(50),
                ..VtpConfig::default()
            },
            2 => VtpConfig {
                initial_rate: Some(Bitrate::bps(u64::MAX)),
                max_rate: Bitrate::mbps(5),
                e_gain: 1.0,
                e_max: 7.0,
                ..VtpConfig::default()
            },
            _ => VtpConfig {
                e_loss_free_periods: false,
                rtt_gain: 1.0,
                sigma: 0.0,
                rtt_ratio_bound: 0.0,
                gamma: f64::NAN,
                max_rate: Bitrate::mbps(2),
                ..VtpConfig::default()
            },
        };
        let mut s = VtpSender::new(&running(Instant::ZERO, None), config);
        let mut r = VtpReceiver::new(FLOW, &config);
        let mut ch = Chaos {
            m: Mangler::new(
                RngStream::from_seed(seed),
                0.1,
                0.05,
                Duration::from_millis(20),
            ),
        };
        let e_max = config.e_max.clamp(0.0, 1.0);
        let mut events = 0u64;
        run(
            &mut s,
            &mut r,
            &mut ch,
            Instant::from_nanos(20_000_000_000),
            &mut NullSink,
            |s, _, now| {
                events += 1;
                let rate = s.rate_bytes_per_sec();
                assert!(rate.is_finite() && rate > 0.0, "seed {seed}: rate {rate}");
                assert!(
                    rate >= s.min_rate_bytes_per_sec(),
                    "seed {seed}: {rate} below the floor"
                );
                assert!(
                    rate <= s.max_rate_bytes_per_sec(),
                    "seed {seed}: {rate} above the ceiling"
                );
                assert!(!s.rate().is_zero());
                let e = s.wireless_loss_estimate();
                assert!((0.0..=e_max).contains(&e), "seed {seed}: e = {e}");
                if let Some(t) = s.poll_timeout() {
                    assert!(t > now, "seed {seed}: timer {t:?} not after {now:?}");
                }
            },
        );
        assert!(events > 100, "seed {seed}: only {events} events");
        assert!(
            s.ignored_reports() > 0,
            "seed {seed}: no forged report was caught"
        );
        assert!(r.stats().packets_sent > 0, "seed {seed}: no report sent");
    }
}

/// Runs VTP for 60 s through a 2 Mbit/s bottleneck (40 ms each way, 25 packets of buffer)
/// with random loss `p_loss` behind it; returns the bottleneck's utilisation over the last
/// 40 s (wire bytes delivered over capacity), and the sender.
fn through_bottleneck(p_loss: f64) -> (f64, VtpSender, u64) {
    let config = VtpConfig::default();
    let mut s = VtpSender::new(&running(Instant::ZERO, None), config);
    let mut r = VtpReceiver::new(FLOW, &config);
    let mut link =
        Bottleneck::new(Bitrate::mbps(2), 25, dms(40)).with_loss(p_loss, RngStream::from_seed(7));
    let mut at_20s = None;
    let (t20, t60) = (
        Instant::from_nanos(20_000_000_000),
        Instant::from_nanos(60_000_000_000),
    );
    run(
        &mut s,
        &mut r,
        &mut link,
        t60,
        &mut NullSink,
        |_, r, now| {
            if now >= t20 {
                at_20s.get_or_insert_with(|| r.stats().packets_received);
            }
        },
    );
    let packets = r.stats().packets_received - at_20s.unwrap_or(0);
    let utilisation = packets as f64 * 8000.0 / (2e6 * 40.0);
    (utilisation, s, link.drops)
}

#[test]
fn fills_a_bottleneck_and_backs_off_on_its_drops() {
    let (u, s, drops) = through_bottleneck(0.0);
    assert!(u > 0.85 && u <= 1.0, "utilisation {u}");
    assert!(
        drops > 0 && s.congestion_cuts() > 0,
        "never probed the buffer's end"
    );
    assert!(s.silence_cuts() == 0, "reports went missing");
}

#[test]
fn random_losses_behind_the_bottleneck_do_not_starve_it() {
    let (u, s, _) = through_bottleneck(0.02);
    assert!(u > 0.7, "utilisation {u} with 2 % random loss");
    assert!(s.wireless_loss_estimate() > 0.0);
}
