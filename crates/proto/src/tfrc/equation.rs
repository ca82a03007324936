//! TFRC's throughput equation in the two forms fairstream runs (RFC 5348's, and ns-2's capped
//! PFTK approximation), and its inverse: the loss event rate at which the equation allows a
//! given rate (RFC 5348 §6.3.1's synthetic first loss interval).

use fairstream_metrics::tcp_model::{padhye_approx, tfrc_rfc5348};

/// Which form of the equation a sender evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EquationForm {
    /// RFC 5348 §3.1: no cap on the timeout term.
    #[default]
    Rfc5348,
    /// ns-2's `p_to_b()` (`tcp/formula.h`): the timeout term's `3·√(3bp/8)` capped at 1.
    Ns2,
}

impl EquationForm {
    /// The allowed rate in bytes per second for segments of `s` bytes, round-trip time `rtt`
    /// seconds, loss event rate `p` and retransmission timeout `t_rto` seconds (b = 1).
    /// Infinite for `p = 0`.
    pub fn rate(self, s: f64, rtt: f64, p: f64, t_rto: f64) -> f64 {
        match self {
            Self::Rfc5348 => tfrc_rfc5348(s, rtt, p, t_rto, 1.0),
            Self::Ns2 => {
                if p <= 0.0 {
                    f64::INFINITY
                } else {
                    padhye_approx(s, rtt, p, t_rto, f64::INFINITY, 1.0)
                }
            }
        }
    }

    /// The loss event rate `p` in (0, 1] at which the equation gives `target` bytes per second
    /// (within 1 %, by bisection on a log scale; the rate falls monotonically with `p`). A
    /// target above the rate at the smallest `p` tried gives that `p`; one below the rate at
    /// `p = 1` gives 1.
    pub fn loss_rate_for(self, s: f64, rtt: f64, t_rto: f64, target: f64) -> f64 {
        const P_MIN: f64 = 1e-8;
        if !(target.is_finite() && target > 0.0) {
            return 1.0;
        }
        if self.rate(s, rtt, P_MIN, t_rto) <= target {
            return P_MIN;
        }
        if self.rate(s, rtt, 1.0, t_rto) >= target {
            return 1.0;
        }
        let (mut lo, mut hi) = (P_MIN.ln(), 0.0f64);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            let x = self.rate(s, rtt, mid.exp(), t_rto);
            if (x / target - 1.0).abs() < 0.01 {
                return mid.exp();
            }
            if x > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (0.5 * (lo + hi)).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_agree_below_the_cap_and_differ_above() {
        let rfc = EquationForm::Rfc5348.rate(1000.0, 0.072, 0.02, 0.288);
        let ns2 = EquationForm::Ns2.rate(1000.0, 0.072, 0.02, 0.288);
        assert!((rfc / ns2 - 1.0).abs() < 1e-12);
        assert!(
            EquationForm::Rfc5348.rate(1000.0, 0.072, 0.6, 0.288)
                < EquationForm::Ns2.rate(1000.0, 0.072, 0.6, 0.288)
        );
    }

    #[test]
    fn inverse_finds_the_loss_rate_of_a_target() {
        for form in [EquationForm::Rfc5348, EquationForm::Ns2] {
            for p in [1e-4, 0.003, 0.05, 0.2] {
                let x = form.rate(1000.0, 0.1, p, 0.4);
                let q = form.loss_rate_for(1000.0, 0.1, 0.4, x);
                assert!((form.rate(1000.0, 0.1, q, 0.4) / x - 1.0).abs() < 0.01);
            }
        }
        // RFC 5348 §6.3.1's example: X_target = s/(2R) gives p ≈ 0.2064 (I ≈ 5 packets).
        let p = EquationForm::Rfc5348.loss_rate_for(1000.0, 0.1, 0.4, 1000.0 / 0.2);
        assert!((1.0 / p - 4.85).abs() < 0.2, "{}", 1.0 / p);
        assert_eq!(EquationForm::Rfc5348.loss_rate_for(1.0, 0.1, 0.4, 0.0), 1.0);
        assert_eq!(
            EquationForm::Rfc5348.loss_rate_for(1.0, 0.1, 0.4, f64::NAN),
            1.0
        );
    }
}
