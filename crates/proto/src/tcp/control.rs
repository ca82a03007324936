//! Window control: how TCP's congestion window grows without loss and shrinks on a loss
//! event — the part that binomial controls and CUBIC vary (PROTOCOLS.md §9.1, RFC 9438).
//!
//! Loss *recovery* (Reno, NewReno or SACK: fast retransmit, fast recovery, partial ACKs, the
//! scoreboard) stays in the sender: in ns-2's TCPs and in quinn-proto alike, recovery belongs to
//! the connection and the controller only says how the window moves. [`WindowControl`] is that
//! controller's interface; [`Aimd`] (TCP's rule), [`Binomial`] (Bansal and Balakrishnan 2001,
//! ns-2 `windowOption_ 6`) and [`Cubic`] (RFC 9438) implement it, [`Controller`] is the running
//! state the sender dispatches over, and [`Control`] the configured choice it is built from.
//!
//! ns-2's controls keep ns-2's rules around them ([`WindowControl::ns2_rules`]): slow start adds
//! one packet per new ACK, and the first decrease and a decrease in slow start halve the window.
//! CUBIC brings its own slow start and decrease. BBR ([`super::bbr`]) is model-based: it sets the
//! window and a pacing rate on every ACK from its estimates and is not a window control; it is a
//! [`Control`] choice all the same.

use fairstream_core::{Duration, Instant};

use super::bbr::BbrParams;
use super::cubic::{Cubic, CubicParams};

/// What the sender tells a window control about an ACK of new data.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// When it arrived.
    pub now: Instant,
    /// Packets it delivered (newly acknowledged cumulatively or SACKed).
    pub acked: u32,
    /// The smoothed RTT (zero before a sample).
    pub srtt: Duration,
    /// Its cumulative ACK.
    pub ack: i64,
    /// The highest packet sent.
    pub high_sent: i64,
    /// The RTT sample it brought, if any.
    pub rtt: Option<Duration>,
}

impl AckInfo {
    /// An ACK that tells nothing but that it is one (for ns-2's controls, which need nothing).
    pub const BARE: Self = Self {
        now: Instant::ZERO,
        acked: 1,
        srtt: Duration::ZERO,
        ack: 0,
        high_sent: 0,
        rtt: None,
    };
}

/// A congestion-window control. Windows are in packets (real-valued).
pub trait WindowControl {
    /// The window after one new ACK in congestion avoidance, from window `cwnd`.
    fn on_ack(&mut self, cwnd: f64, ack: &AckInfo) -> f64;

    /// The window a loss event leaves, from the window `w` in force (ns-2's `decreasewin`).
    /// Under ns-2's rules the sender halves instead on its first decrease and in slow start.
    fn on_loss(&mut self, w: f64) -> f64;

    /// Whether the control's decrease is TCP's halving (ns-2's `decrease_num_ == 0.5`), in which
    /// case the sender always halves.
    fn halves(&self) -> bool;

    /// Whether ns-2's rules apply around the control (slow start +1 per new ACK; the first
    /// decrease, a decrease in slow start and the ssthresh after a timeout halve).
    fn ns2_rules(&self) -> bool {
        true
    }

    /// The window after an ACK in slow start, and whether slow start ends here (the control's
    /// own exit, such as HyStart++'s). ns-2: +1 per new ACK.
    fn slow_start(&mut self, cwnd: f64, _ack: &AckInfo) -> (f64, bool) {
        (cwnd + 1.0, false)
    }

    /// A retransmission timeout with window `w` in force: the ssthresh it leaves (only called
    /// when [`WindowControl::ns2_rules`] is false).
    fn on_timeout(&mut self, w: f64) -> f64 {
        self.on_loss(w)
    }
}

/// TCP's additive increase, multiplicative decrease: `w += α/w` per ACK, `w ← β·w` on loss,
/// with α = 1 and β = 1/2 (ns-2 `windowOption_ 1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aimd;

impl WindowControl for Aimd {
    #[inline]
    fn on_ack(&mut self, cwnd: f64, _ack: &AckInfo) -> f64 {
        cwnd + 1.0 / cwnd
    }

    #[inline]
    fn on_loss(&mut self, w: f64) -> f64 {
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
    fn on_ack(&mut self, cwnd: f64, _ack: &AckInfo) -> f64 {
        cwnd + self.alpha / (cwnd * cwnd.powf(self.k))
    }

    #[inline]
    fn on_loss(&mut self, w: f64) -> f64 {
        w - self.beta * w.powf(self.l)
    }

    fn halves(&self) -> bool {
        false
    }
}

impl WindowControl for Cubic {
    #[inline]
    fn on_ack(&mut self, cwnd: f64, ack: &AckInfo) -> f64 {
        Self::on_ack(self, cwnd, ack)
    }

    #[inline]
    fn on_loss(&mut self, w: f64) -> f64 {
        Self::on_loss(self, w)
    }

    fn halves(&self) -> bool {
        false
    }

    fn ns2_rules(&self) -> bool {
        false
    }

    fn slow_start(&mut self, cwnd: f64, ack: &AckInfo) -> (f64, bool) {
        Self::slow_start(self, cwnd, ack)
    }

    fn on_timeout(&mut self, w: f64) -> f64 {
        Self::on_timeout(self, w)
    }
}

/// The congestion controls a sender can be configured with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Control {
    /// TCP's AIMD.
    Aimd(Aimd),
    /// A binomial control.
    Binomial(Binomial),
    /// CUBIC (RFC 9438).
    Cubic(CubicParams),
    /// BBR v1: model-based, paced ([`super::bbr`]).
    Bbr(BbrParams),
}

impl Default for Control {
    fn default() -> Self {
        Self::Aimd(Aimd)
    }
}

impl Control {
    /// The window control's running state (AIMD's for BBR, which does not use it).
    pub fn controller(&self) -> Controller {
        match *self {
            Self::Aimd(a) => Controller::Aimd(a),
            Self::Binomial(b) => Controller::Binomial(b),
            Self::Cubic(p) => Controller::Cubic(Cubic::new(p)),
            Self::Bbr(_) => Controller::Aimd(Aimd),
        }
    }

    /// Whether this is BBR.
    pub fn is_bbr(&self) -> bool {
        matches!(self, Self::Bbr(_))
    }
}

/// The running window control of a sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Controller {
    /// TCP's AIMD.
    Aimd(Aimd),
    /// A binomial control.
    Binomial(Binomial),
    /// CUBIC with its state.
    Cubic(Cubic),
}

impl Controller {
    /// CUBIC's state, when it is CUBIC.
    pub fn cubic(&self) -> Option<&Cubic> {
        match self {
            Self::Cubic(c) => Some(c),
            _ => None,
        }
    }
}

impl WindowControl for Controller {
    #[inline]
    fn on_ack(&mut self, cwnd: f64, ack: &AckInfo) -> f64 {
        match self {
            Self::Aimd(c) => c.on_ack(cwnd, ack),
            Self::Binomial(c) => c.on_ack(cwnd, ack),
            Self::Cubic(c) => WindowControl::on_ack(c, cwnd, ack),
        }
    }

    #[inline]
    fn on_loss(&mut self, w: f64) -> f64 {
        match self {
            Self::Aimd(c) => c.on_loss(w),
            Self::Binomial(c) => c.on_loss(w),
            Self::Cubic(c) => WindowControl::on_loss(c, w),
        }
    }

    fn halves(&self) -> bool {
        match self {
            Self::Aimd(c) => c.halves(),
            Self::Binomial(c) => c.halves(),
            Self::Cubic(c) => WindowControl::halves(c),
        }
    }

    fn ns2_rules(&self) -> bool {
        match self {
            Self::Aimd(c) => c.ns2_rules(),
            Self::Binomial(c) => c.ns2_rules(),
            Self::Cubic(c) => WindowControl::ns2_rules(c),
        }
    }

    #[inline]
    fn slow_start(&mut self, cwnd: f64, ack: &AckInfo) -> (f64, bool) {
        match self {
            Self::Aimd(c) => c.slow_start(cwnd, ack),
            Self::Binomial(c) => c.slow_start(cwnd, ack),
            Self::Cubic(c) => WindowControl::slow_start(c, cwnd, ack),
        }
    }

    fn on_timeout(&mut self, w: f64) -> f64 {
        match self {
            Self::Aimd(c) => c.on_timeout(w),
            Self::Binomial(c) => c.on_timeout(w),
            Self::Cubic(c) => WindowControl::on_timeout(c, w),
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
            w = Aimd.on_ack(w, &AckInfo::BARE);
        }
        assert!((w - 11.0).abs() < 0.05, "{w}");
        assert_eq!(Aimd.on_loss(10.0), 5.0);
    }

    #[test]
    fn binomial_reduces_to_aimd_at_k0_l1() {
        let mut b = Binomial {
            k: 0.0,
            l: 1.0,
            alpha: 1.0,
            beta: 0.5,
        };
        let a = &AckInfo::BARE;
        for w in [1.0, 2.5, 17.0, 100.0] {
            assert!((b.on_ack(w, a) - Aimd.on_ack(w, a)).abs() < 1e-12);
            assert!((b.on_loss(w) - Aimd.on_loss(w)).abs() < 1e-12);
        }
        assert!(b.is_tcp_compatible());
    }

    #[test]
    fn iiad_and_sqrt_follow_their_rules() {
        // IIAD: +α/w per RTT (w ACKs of α/w² each); −β packets per loss whatever w.
        let (w, mut i) = (20.0, Binomial::IIAD);
        assert!((i.on_ack(w, &AckInfo::BARE) - (w + 1.0 / 400.0)).abs() < 1e-12);
        assert!((i.on_loss(w) - (w - 2.0 / 3.0)).abs() < 1e-12);
        // SQRT: −β·√w per loss.
        let mut s = Binomial::SQRT;
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
