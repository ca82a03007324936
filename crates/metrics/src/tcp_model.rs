//! Analytic TCP throughput models (PROTOCOLS.md §1.7), in bytes per second.
//!
//! Symbols: `s` segment size (bytes), `rtt` round-trip time (s), `p` loss-event rate,
//! `b` packets acknowledged per ACK (1, or 2 with delayed ACKs), `t0` retransmission
//! timeout (s), `wmax` the receiver's window (packets).

/// Mathis et al. (1997): `X = (s / R) · C / √p`, `C = √(3/2)` (or `√(3/4)` with delayed ACKs).
/// Valid for small `p`; returns infinity for `p = 0`.
pub fn mathis(s: f64, rtt: f64, p: f64, delayed_ack: bool) -> f64 {
    let c = if delayed_ack {
        (3.0f64 / 4.0).sqrt()
    } else {
        (3.0f64 / 2.0).sqrt()
    };
    if p <= 0.0 {
        f64::INFINITY
    } else {
        s / rtt * c / p.sqrt()
    }
}

/// The full PFTK model (Padhye et al. 1998, eq. 33 of the ToN version), with the receiver
/// window limit. Returns infinity for `p = 0`; `p` is clamped to 1.
pub fn padhye(s: f64, rtt: f64, p: f64, t0: f64, wmax: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let p = p.min(1.0);
    let q = 1.0 - p;
    let ew =
        (2.0 + b) / (3.0 * b) + (8.0 * q / (3.0 * b * p) + ((2.0 + b) / (3.0 * b)).powi(2)).sqrt();
    // Probability that a loss indication is a timeout, for window w.
    let timeout_prob = |w: f64| -> f64 {
        let num = (1.0 - q.powi(3)) * (1.0 + q.powi(3) * (1.0 - q.powf(w - 3.0)));
        let den = 1.0 - q.powf(w);
        if den <= 0.0 {
            1.0
        } else {
            (num / den).min(1.0)
        }
    };
    let f = 1.0
        + p
        + 2.0 * p.powi(2)
        + 4.0 * p.powi(3)
        + 8.0 * p.powi(4)
        + 16.0 * p.powi(5)
        + 32.0 * p.powi(6);
    let packets_per_s = if ew < wmax {
        let qw = timeout_prob(ew);
        (q / p + ew + qw / q) / (rtt * (b / 2.0 * ew + 1.0) + qw * t0 * f / q)
    } else {
        let qw = timeout_prob(wmax);
        (q / p + wmax + qw / q) / (rtt * (b / 8.0 * wmax + q / (p * wmax) + 2.0) + qw * t0 * f / q)
    };
    packets_per_s * s
}

/// The approximate PFTK model used by TFRC and ns-2 (`tcp/formula.h`), with its
/// `min(1, 3·√(3bp/8))` cap and the window limit `wmax / rtt`.
pub fn padhye_approx(s: f64, rtt: f64, p: f64, t0: f64, wmax: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return wmax * s / rtt;
    }
    let denom = rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    (1.0 / denom).min(wmax / rtt) * s
}

/// TFRC's throughput equation (RFC 5348 §3.1): PFTK with `b` packets per ACK and no cap on
/// the timeout term, `X = s / (R·√(2bp/3) + t_RTO·3·√(3bp/8)·p·(1 + 32p²))`. Returns infinity
/// for `p = 0` (the equation is not used then).
pub fn tfrc_rfc5348(s: f64, rtt: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let denom = rtt * (2.0 * b * p / 3.0).sqrt()
        + t_rto * 3.0 * (3.0 * b * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p);
    s / denom
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mathis_scales_as_inverse_sqrt_p() {
        let a = mathis(1000.0, 0.1, 0.01, false);
        let b = mathis(1000.0, 0.1, 0.04, false);
        assert!((a / b - 2.0).abs() < 1e-12);
        assert!((a - 1000.0 / 0.1 * 1.5f64.sqrt() / 0.1).abs() < 1e-9);
        assert!(mathis(1000.0, 0.1, 0.0, false).is_infinite());
    }

    #[test]
    fn padhye_approaches_mathis_at_small_loss_and_falls_below_at_high_loss() {
        let (s, r, t0) = (1000.0, 0.1, 1.0);
        let small = padhye(s, r, 1e-4, t0, 1e6, 1.0) / mathis(s, r, 1e-4, false);
        assert!((0.9..1.1).contains(&small), "{small}");
        let high = padhye(s, r, 0.1, t0, 1e6, 1.0) / mathis(s, r, 0.1, false);
        assert!(high < 0.6, "timeouts dominate at 10 % loss: {high}");
        // The window limit caps the rate at about wmax / rtt.
        let capped = padhye(s, r, 1e-5, t0, 10.0, 1.0);
        assert!(capped <= 10.0 * s / r * 1.01, "{capped}");
    }

    #[test]
    fn approximate_model_is_close_to_full_model() {
        for p in [0.005, 0.01, 0.02, 0.05] {
            let full = padhye(1000.0, 0.072, p, 0.3, 1e6, 1.0);
            let approx = padhye_approx(1000.0, 0.072, p, 0.3, 1e6, 1.0);
            assert!(
                (approx / full - 1.0).abs() < 0.3,
                "p={p}: {approx} vs {full}"
            );
        }
    }

    #[test]
    fn tfrc_equation_by_hand_and_beside_the_capped_form() {
        // s = 1000 B, R = 100 ms, p = 1 %, t_RTO = 4R: 1000 / (0.1·√(0.02/3) + 0.4·3·√(0.03/8)·0.01·1.0032).
        let x = tfrc_rfc5348(1000.0, 0.1, 0.01, 0.4, 1.0);
        assert!((x - 112_332.2).abs() < 0.5, "{x}");
        // Below p = 8/27 the cap min(1, 3√(3p/8)) is inactive: the two forms agree.
        let capped = padhye_approx(1000.0, 0.1, 0.01, 0.4, f64::INFINITY, 1.0);
        assert!((x - capped).abs() < 1e-6 * x);
        // Above it the uncapped timeout term is larger, so the rate is lower.
        assert!(
            tfrc_rfc5348(1000.0, 0.1, 0.5, 0.4, 1.0)
                < padhye_approx(1000.0, 0.1, 0.5, 0.4, f64::INFINITY, 1.0)
        );
        assert!(tfrc_rfc5348(1000.0, 0.1, 0.0, 0.4, 1.0).is_infinite());
    }
}
