//! CUBIC (RFC 9438) as a window control, in packets: the window follows
//! `W_cubic(t) = C·(t − K)³ + W_max` from the last congestion event, never below the Reno-
//! friendly estimate `W_est` (AIMD with α = 3(1 − β)/(1 + β), then 1 once `W_est` reaches the
//! window before the last reduction); on a congestion event `W_max` is the window then (less with
//! fast convergence) and the window falls to β times it. Slow start grows by the packets each ACK
//! delivers, optionally under HyStart++ ([`super::hystart`]).
//!
//! Choices where the RFC leaves room, and where Linux differs (docs/VALIDATION.md):
//! - the window grows by `(target − cwnd)/cwnd` per packet acknowledged (Linux and ns-3 count
//!   packets; the RFC's text says per ACK), so delayed ACKs do not halve its growth;
//! - `target = W_cubic(t + RTT)` uses the smoothed RTT, as the RFC says (Linux and ns-3 use the
//!   smallest RTT seen);
//! - the reduction is from the window in force (Linux's choice; the RFC prefers the flight size),
//!   and the sender does not grow the window while it is limited by the receiver's window.

use fairstream_core::{Duration, Instant};

use super::control::AckInfo;
use super::hystart::{CSS_GROWTH_DIVISOR, HyStart, Phase};

/// CUBIC's parameters (RFC 9438 §4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// C, packets/s³ (RFC 9438: 0.4).
    pub c: f64,
    /// β_cubic, the window kept on a loss (RFC 9438: 0.7).
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7; SHOULD be on, but off for a flow alone on its path).
    pub fast_convergence: bool,
    /// Slow start under HyStart++ (RFC 9406).
    pub hystart: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        Self {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            hystart: false,
        }
    }
}

impl CubicParams {
    /// α_cubic = 3(1 − β)/(1 + β): AIMD's increase that matches Reno's average window with β.
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }

    /// RFC 9438's average window (eq. 5 and the Reno-friendly region) under a deterministic loss
    /// rate `p` at round-trip time `rtt`: the larger of CUBIC's `(C(3+β)/(4(1−β)))^¼ ·
    /// (RTT/p)^¾` and Reno's `√(3/(2p))`, packets.
    pub fn response(&self, p: f64, rtt: Duration) -> f64 {
        let r = rtt.as_secs_f64();
        let cubic = (self.c * (3.0 + self.beta) / (4.0 * (1.0 - self.beta))).powf(0.25)
            * (r / p).powf(0.75);
        cubic.max((1.5 / p).sqrt())
    }
}

/// CUBIC's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cubic {
    params: CubicParams,
    /// W_max (0: none yet).
    w_max: f64,
    /// cwnd_prior: the window before the last reduction (0: none yet).
    cwnd_prior: f64,
    k: f64,
    /// t_epoch (none: the next ACK in congestion avoidance starts a stage).
    epoch: Option<Instant>,
    w_est: f64,
    /// α_cubic in force (1 once W_est reached cwnd_prior).
    alpha: f64,
    /// The next stage starts with K = 0 and W_max = the window (after a timeout, RFC §4.8).
    restart: bool,
    hystart: HyStart,
}

impl Cubic {
    /// A fresh state.
    pub fn new(params: CubicParams) -> Self {
        Self {
            params,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch: None,
            w_est: 0.0,
            alpha: params.alpha(),
            restart: false,
            hystart: HyStart::default(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CubicParams {
        &self.params
    }

    /// W_max now (0 before any congestion event).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current stage, seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// W_est now.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// W_cubic(t) of the current stage, `t` seconds after it began.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.params.c * (t - self.k).powi(3) + self.w_max
    }

    /// The window after an ACK in slow start (`cwnd` below ssthresh), and whether HyStart++ ends
    /// slow start here.
    pub fn slow_start(&mut self, cwnd: f64, a: &AckInfo) -> (f64, bool) {
        let acked = f64::from(a.acked);
        if !self.params.hystart {
            return (cwnd + acked, false);
        }
        match self.hystart.on_ack(a.ack, a.high_sent, a.rtt) {
            Phase::SlowStart => (cwnd + acked, false),
            Phase::Conservative => (cwnd + acked / CSS_GROWTH_DIVISOR, false),
            Phase::Exit => (cwnd, true),
        }
    }

    /// The window after an ACK in congestion avoidance (RFC 9438 §4.2–4.5).
    pub fn on_ack(&mut self, cwnd: f64, a: &AckInfo) -> f64 {
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.start_stage(cwnd, a.now);
                a.now
            }
        };
        let t = a.now.saturating_since(epoch).as_secs_f64();
        let acked = f64::from(a.acked);
        // Reno-friendly estimate (eq. 4), α → 1 once it reached the window before the reduction.
        self.w_est += self.alpha * acked / cwnd;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        let w_t = self.w_cubic(t);
        if w_t < self.w_est {
            return self.w_est.max(cwnd);
        }
        let target = self
            .w_cubic(t + a.srtt.as_secs_f64())
            .clamp(cwnd, 1.5 * cwnd);
        cwnd + acked * (target - cwnd) / cwnd
    }

    fn start_stage(&mut self, cwnd: f64, now: Instant) {
        self.epoch = Some(now);
        if self.restart || self.w_max <= cwnd {
            // After a timeout, after HyStart++ left slow start without a loss, or above the old
            // maximum: K = 0 and W_max = the window now.
            self.k = 0.0;
            self.w_max = cwnd;
            self.restart = false;
        } else {
            self.k = ((self.w_max - cwnd) / self.params.c).cbrt();
        }
        if self.cwnd_prior <= 0.0 {
            self.cwnd_prior = cwnd;
        }
        self.w_est = cwnd;
        self.alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.params.alpha()
        };
    }

    /// A congestion event with window `cwnd` in force: returns the new ssthresh and window,
    /// β·cwnd and at least 2 (RFC 9438 §4.6–4.7).
    pub fn on_loss(&mut self, cwnd: f64) -> f64 {
        self.cwnd_prior = cwnd;
        self.w_max = if self.params.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.params.beta) / 2.0
        } else {
            cwnd
        };
        self.epoch = None;
        (cwnd * self.params.beta).max(2.0)
    }

    /// A retransmission timeout with window `cwnd` in force: the same ssthresh as a loss, and the
    /// next congestion-avoidance stage starts from K = 0 (RFC 9438 §4.8).
    pub fn on_timeout(&mut self, cwnd: f64) -> f64 {
        let ssthresh = self.on_loss(cwnd);
        self.restart = true;
        self.hystart = HyStart::default();
        ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64) -> AckInfo {
        AckInfo {
            now: Instant::from_nanos((secs * 1e9).round() as u64),
            acked: 1,
            srtt: Duration::from_millis(100),
            ack: 0,
            high_sent: 0,
            rtt: None,
        }
    }

    #[test]
    fn the_window_at_given_times_after_a_loss_computed_by_hand() {
        // A loss at W = 100 packets: ssthresh = cwnd = 70; W_max = 100;
        // K = ∛((100 − 70)/0.4) = ∛75 = 4.217 s.
        let mut c = Cubic::new(CubicParams::default());
        let cwnd = c.on_loss(100.0);
        assert!((cwnd - 70.0).abs() < 1e-12);
        // First ACK of the stage at t = 10 s opens it: K as above, W_est = 70 + α/70. At t = 0,
        // W_cubic(0) = 70 lies below W_est: the Reno-friendly region, cwnd = W_est.
        let alpha = CubicParams::default().alpha();
        let w = c.on_ack(cwnd, &at(10.0));
        assert!((c.k() - 75f64.cbrt()).abs() < 1e-12);
        assert!((c.k() - 4.217_163).abs() < 1e-6);
        assert!((w - (70.0 + alpha / 70.0)).abs() < 1e-12);
        // Half a second later W_cubic(0.5) = 0.4·(0.5 − 4.2172)³ + 100 = 79.456, above W_est: the
        // target is W_cubic(0.5 + RTT 0.1) = 0.4·(0.6 − 4.2172)³ + 100 = 81.07, and the window
        // grows by (81.07 − w)/w.
        let w2 = c.on_ack(w, &at(10.5));
        assert!(
            (c.w_cubic(0.5) - 79.4555).abs() < 1e-3,
            "{}",
            c.w_cubic(0.5)
        );
        let target = 0.4 * (0.6 - 75f64.cbrt()).powi(3) + 100.0;
        assert!((target - 81.0694).abs() < 1e-3, "{target}");
        assert!((w2 - (w + (target - w) / w)).abs() < 1e-12);
        // At t = K the cubic curve is back at W_max: W_cubic(K) = 100.
        assert!((c.w_cubic(c.k()) - 100.0).abs() < 1e-9);
        // One second after the stage began: W_cubic(1) = 0.4·(1 − 4.2172)³ + 100 = 86.68.
        assert!((c.w_cubic(1.0) - (100.0 - 0.4 * 3.217_163f64.powi(3))).abs() < 1e-5);
        assert!((c.w_cubic(1.0) - 86.680).abs() < 1e-3);
        // Beyond K the convex region: W_cubic(K + 2) = 100 + 0.4·8 = 103.2.
        assert!((c.w_cubic(c.k() + 2.0) - 103.2).abs() < 1e-9);
    }

    #[test]
    fn reno_friendly_region_takes_over_at_small_windows() {
        // Small window, short stage: W_cubic stays near W_max = 10 only after K = ∛(3/0.4) ≈ 1.96 s;
        // W_est grows by α = 3·0.3/1.7 = 0.529 per window of ACKs.
        let p = CubicParams::default();
        assert!((p.alpha() - 0.9 / 1.7).abs() < 1e-12);
        let mut c = Cubic::new(p);
        let mut cwnd = c.on_loss(10.0);
        assert_eq!(cwnd, 7.0);
        // 7 ACKs at the stage's start: W_cubic(0) = 10 − 0.4·K³ = 7 lies below W_est, so the
        // window is W_est, which grows by α/cwnd per ACK.
        let mut expect = 7.0;
        for _ in 0..7 {
            cwnd = c.on_ack(cwnd, &at(20.0));
            expect += p.alpha() / expect;
        }
        assert!((c.w_cubic(0.0) - 7.0).abs() < 1e-9);
        assert!((cwnd - expect).abs() < 1e-12 && (c.w_est() - expect).abs() < 1e-12);
        assert!((expect - 7.5133).abs() < 1e-3, "{expect}");
        // Much later in the stage with no loss, W_est passes cwnd_prior = 10 and α becomes 1.
        let mut c2 = Cubic::new(CubicParams { c: 0.0001, ..p });
        let mut w = c2.on_loss(10.0);
        for i in 0..200 {
            w = c2.on_ack(w, &at(30.0 + f64::from(i) * 0.01));
        }
        // With a tiny C the cubic curve is flat: the window is W_est's, which grew
        // α per window up to 10 and 1 per window after.
        assert!(w > 10.0 && (w - c2.w_est()).abs() < 1e-9, "{w}");
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_last_one() {
        let mut c = Cubic::new(CubicParams::default());
        c.on_loss(100.0);
        assert_eq!(c.w_max(), 100.0);
        // A second loss below the previous maximum: W_max = 80·(1 + 0.7)/2 = 68.
        c.on_loss(80.0);
        assert!((c.w_max() - 68.0).abs() < 1e-12);
        let mut d = Cubic::new(CubicParams {
            fast_convergence: false,
            ..CubicParams::default()
        });
        d.on_loss(100.0);
        d.on_loss(80.0);
        assert_eq!(d.w_max(), 80.0);
    }

    #[test]
    fn after_a_timeout_the_stage_starts_at_k_zero() {
        let mut c = Cubic::new(CubicParams::default());
        assert!((c.on_timeout(50.0) - 35.0).abs() < 1e-12);
        c.on_ack(20.0, &at(5.0));
        assert_eq!((c.k(), c.w_max()), (0.0, 20.0));
    }

    #[test]
    fn the_response_function_is_rfc_9438s_table() {
        // RFC 9438 Table 1 (RTT 0.1 s, C = 0.4): p = 1e-2 → 12 (Reno-friendly), 1e-4 → 187,
        // 1e-6 → 5926.
        let p = CubicParams::default();
        let r = Duration::from_millis(100);
        assert_eq!(p.response(1e-2, r).round(), 12.0);
        assert_eq!(p.response(1e-4, r).round(), 187.0);
        assert_eq!(p.response(1e-6, r).round(), 5926.0);
    }
}
