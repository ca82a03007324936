//! Window control: how TCP's congestion window grows without loss and shrinks on a loss
//! event — the part that binomial controls vary (PROTOCOLS.md §9.1).
//!
//! Loss *recovery* (Reno or NewReno: fast retransmit, fast recovery, partial ACKs) stays in the
//! sender: in ns-2's TCPs and in quinn-proto alike, recovery belongs to the connection and the
//! controller only says how the window moves. [`WindowControl`] is that controller's interface;
//! [`Aimd`] (TCP's rule) and [`Binomial`] (Bansal and Balakrishnan 2001, ns-2 `windowOption_ 6`)
//! implement it, and [`Control`] is the closed list the sender dispatches over.
//!
//! Slow start is the sender's and is the same for every control: +1 packet per new ACK.

/// A congestion-window control. Windows are in packets (real-valued).
pub trait WindowControl {
    /// The window after one new ACK in congestion avoidance, from window `cwnd`.
    fn on_ack(&self, cwnd: f64) -> f64;

    /// The window a loss event leaves, from the window `w` in force (ns-2's `decreasewin`).
    /// The sender halves instead on its first decrease and in slow start, as ns-2 does.
    fn on_loss(&self, w: f64) -> f64;

    /// Whether the control's decrease is TCP's halving (ns-2's `decrease_num_ == 0.5`), in which
    /// case the sender always halves.
    fn halves(&self) -> bool;
}

/// TCP's additive increase, multiplicative decrease: `w += α/w` per ACK, `w ← β·w` on loss,
/// with α = 1 and β = 1/2 (ns-2 `windowOption_ 1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aimd;

impl WindowControl for Aimd {
    #[inline]
    fn on_ack(&self, cwnd: f64) -> f64 {
        cwnd + 1.0 / cwnd
    }

    #[inline]
    fn on_loss(&self, w: f64) -> f64 {
        w / 2.0
    }

    fn halves(&self) -> bool {
        true
    }
}

/// A binomial control: per RTT without loss `w += α / w^k`, per loss event `w −= β · w^l`.
///
/// k + l = 1 (and l ≤ 1) is TCP-compatible; α = 1, β = 2/3 matches TCP's throughput for
/// k + l = 1 (PROTOCOLS.md §9.1). Per ACK (ns-2): `cwnd += α / (cwnd · cwnd^k)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Binomial {
    /// Increase exponent k (≥ 0).
    pub k: f64,
    /// Decrease exponent l (0 ≤ l ≤ 1).
    pub l: f64,
    /// Increase factor α (> 0).
    pub alpha: f64,
    /// Decrease factor β (0 < β < 1), ns-2's `1 − decrease_num_`.
    pub beta: f64,
}

impl Binomial {
    /// Inverse increase, additive decrease: k = 1, l = 0, α = 1, β = 2/3.
    pub const IIAD: Self = Self {
        k: 1.0,
        l: 0.0,
        alpha: 1.0,
        beta: 2.0 / 3.0,
    };
    /// Square root: k = l = 1/2, α = 1, β = 2/3.
    pub const SQRT: Self = Self {
        k: 0.5,
        l: 0.5,
        alpha: 1.0,
        beta: 2.0 / 3.0,
    };

    /// Whether k + l = 1 and l ≤ 1, the condition for TCP-compatibility.
    pub fn is_tcp_compatible(&self) -> bool {
        (self.k + self.l - 1.0).abs() < 1e-9 && self.l <= 1.0
    }
}

impl WindowControl for Binomial {
    #[inline]
    fn on_ack(&self, cwnd: f64) -> f64 {
        cwnd + self.alpha / (cwnd * cwnd.powf(self.k))
    }

    #[inline]
    fn on_loss(&self, w: f64) -> f64 {
        w - self.beta * w.powf(self.l)
    }

    fn halves(&self) -> bool {
        false
    }
}

/// The window controls a sender can run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Control {
    /// TCP's AIMD.
    Aimd(Aimd),
    /// A binomial control.
    Binomial(Binomial),
}

impl Default for Control {
    fn default() -> Self {
        Self::Aimd(Aimd)
    }
}

impl WindowControl for Control {
    #[inline]
    fn on_ack(&self, cwnd: f64) -> f64 {
        match self {
            Self::Aimd(c) => c.on_ack(cwnd),
            Self::Binomial(c) => c.on_ack(cwnd),
        }
    }

    #[inline]
    fn on_loss(&self, w: f64) -> f64 {
        match self {
            Self::Aimd(c) => c.on_loss(w),
            Self::Binomial(c) => c.on_loss(w),
        }
    }

    fn halves(&self) -> bool {
        match self {
            Self::Aimd(c) => c.halves(),
            Self::Binomial(c) => c.halves(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aimd_adds_one_packet_per_window_and_halves() {
        let mut w = 10.0;
        for _ in 0..10 {
            w = Aimd.on_ack(w);
        }
        assert!((w - 11.0).abs() < 0.05, "{w}");
        assert_eq!(Aimd.on_loss(10.0), 5.0);
    }

    #[test]
    fn binomial_reduces_to_aimd_at_k0_l1() {
        let b = Binomial {
            k: 0.0,
            l: 1.0,
            alpha: 1.0,
            beta: 0.5,
        };
        for w in [1.0, 2.5, 17.0, 100.0] {
            assert!((b.on_ack(w) - Aimd.on_ack(w)).abs() < 1e-12);
            assert!((b.on_loss(w) - Aimd.on_loss(w)).abs() < 1e-12);
        }
        assert!(b.is_tcp_compatible());
    }

    #[test]
    fn iiad_and_sqrt_follow_their_rules() {
        // IIAD: +α/w per RTT (w ACKs of α/w² each); −β packets per loss whatever w.
        let (w, i) = (20.0, Binomial::IIAD);
        assert!((i.on_ack(w) - (w + 1.0 / 400.0)).abs() < 1e-12);
        assert!((i.on_loss(w) - (w - 2.0 / 3.0)).abs() < 1e-12);
        // SQRT: −β·√w per loss.
        let s = Binomial::SQRT;
        assert!((s.on_loss(16.0) - (16.0 - 4.0 * 2.0 / 3.0)).abs() < 1e-12);
        assert!(i.is_tcp_compatible() && s.is_tcp_compatible());
        let not = Binomial {
            k: 1.0,
            l: 1.0,
            ..Binomial::SQRT
        };
        assert!(!not.is_tcp_compatible());
    }
}
