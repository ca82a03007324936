//! CUBIC's response (RFC 9438): the closed-form average window under a deterministic loss
//! rate (§5.1), and a round-by-round Monte Carlo of the RFC's window rules under independent
//! (Bernoulli) packet loss, which tells how much of a measured departure from the closed form
//! its deterministic loss explains. Both are models, independent of the simulator's CUBIC.

use fairstream_core::RngStream;

/// RFC 9438's multiplicative decrease factor β_cubic (§4.6).
pub const BETA: f64 = 0.7;
/// RFC 9438's constant C (§5.1), in packets per second cubed.
pub const C: f64 = 0.4;

/// RFC 9438's average window, packets, under a deterministic loss rate `p` with round trip
/// `rtt` (s): the larger of CUBIC's `(C(3+β)/(4(1−β)))^¼ (RTT/p)^¾` (eq. 5) and the
/// Reno-friendly region's `√(3/(2p))`.
pub fn response_function(p: f64, rtt: f64, c: f64, beta: f64) -> f64 {
    let cubic = (c * (3.0 + beta) / (4.0 * (1.0 - beta))).powf(0.25) * (rtt / p).powf(0.75);
    cubic.max((1.5 / p).sqrt())
}

/// The mean window (packets per round trip) of RFC 9438's rules when every packet is lost
/// independently with probability `p`, over `rounds` round trips of `rtt` (s), drawn from
/// the stream seeded by `seed`.
///
/// Each round sends the window's whole packets. A round with a loss is a congestion event:
/// W_max = cwnd_prior = the window (no fast convergence), the window × β (at least 2), a new
/// epoch with W_est = the window. A round without one advances t by an RTT and W_est by α per
/// window of ACKs (α = 3(1−β)/(1+β), 1 once W_est has reached cwnd_prior); the window becomes
/// W_est in the Reno-friendly region, and otherwise moves toward W_cubic(t + RTT), clamped to
/// [W, 1.5 W], as per-ACK increments of (target − W)/W close the gap over a window of ACKs.
/// Left out: slow start, the round in which a loss is detected and repaired, and timeouts.
pub fn response_under_bernoulli_loss(
    p: f64,
    rtt: f64,
    rounds: u64,
    seed: u64,
    c: f64,
    beta: f64,
) -> f64 {
    if rounds == 0 {
        return f64::NAN;
    }
    let mut rng = RngStream::from_seed(seed);
    let alpha_reno = 3.0 * (1.0 - beta) / (1.0 + beta);
    let (mut w, mut w_max, mut prior) = (10.0f64, 0.0f64, 0.0f64);
    let (mut t, mut k, mut w_est, mut alpha) = (0.0f64, 0.0f64, 10.0f64, alpha_reno);
    let mut packets = 0u64;
    for _ in 0..rounds {
        let n = w.max(1.0) as u64; // whole packets; w ≥ 2 after the first loss
        packets += n;
        let sent = i32::try_from(n).unwrap_or(i32::MAX);
        if rng.uniform() >= (1.0 - p).powi(sent) {
            prior = w;
            w_max = w;
            w = (beta * w).max(2.0);
            k = ((w_max - w) / c).cbrt();
            t = 0.0;
            w_est = w;
            alpha = if w_est >= prior { 1.0 } else { alpha_reno };
            continue;
        }
        t += rtt;
        w_est += alpha * n as f64 / w;
        if w_est >= prior {
            alpha = 1.0;
        }
        if c * (t - k).powi(3) + w_max < w_est {
            w = w.max(w_est);
        } else {
            let target = (c * (t + rtt - k).powi(3) + w_max).max(w).min(1.5 * w);
            w = target - (target - w) * (1.0 - 1.0 / w).powi(sent);
        }
    }
    packets as f64 / rounds as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_function_is_rfc_9438s_table_1() {
        // Table 1 (RTT 0.1 s): the Reno-friendly region at 1e-2 and 1e-3 (the table's Reno
        // column takes 1.2/√p where this takes √(3/(2p))), CUBIC's curve below them.
        for (p, avg) in [
            (1e-2, 12.0),
            (1e-3, 38.0),
            (1e-4, 187.0),
            (1e-5, 1054.0),
            (1e-6, 5926.0),
        ] {
            let got = response_function(p, 0.1, C, BETA);
            assert!(
                (got / avg - 1.0).abs() < 0.025,
                "p {p}: {got} against {avg}"
            );
        }
        // Table 2 (RTT 0.01 s): Reno-friendly down to 1e-6.
        let got = response_function(1e-6, 0.01, C, BETA);
        assert!((got / 1200.0 - 1.0).abs() < 0.025, "{got}");
    }

    #[test]
    fn without_loss_the_window_only_grows() {
        let w = response_under_bernoulli_loss(0.0, 0.1, 1000, 1, C, BETA);
        assert!(w > 10.0, "{w}");
    }

    #[test]
    fn random_losses_lie_above_the_deterministic_closed_form() {
        // Random cycles reach the convex region and α = 1 more often: a higher mean window, by
        // a margin that grows with RTT/p.
        let near = response_under_bernoulli_loss(1e-2, 0.02, 40_000, 1, C, BETA);
        let far = response_under_bernoulli_loss(1e-3, 0.3, 40_000, 1, C, BETA);
        let near_ratio = near / response_function(1e-2, 0.02, C, BETA);
        let far_ratio = far / response_function(1e-3, 0.3, C, BETA);
        assert!((1.0..1.15).contains(&near_ratio), "{near_ratio}");
        assert!((1.1..1.4).contains(&far_ratio), "{far_ratio}");
        assert_eq!(
            far,
            response_under_bernoulli_loss(1e-3, 0.3, 40_000, 1, C, BETA)
        );
    }

    #[test]
    fn a_loss_every_round_holds_the_window_at_its_floor() {
        assert_eq!(
            response_under_bernoulli_loss(1.0, 0.1, 100, 3, C, BETA),
            (10.0 + 7.0 + 4.0 + 3.0 + 2.0 * 96.0) / 100.0
        );
    }
}
