//! Packet error models of a lossy link: none, Bernoulli packet error rate, Gilbert-Elliott.
//!
//! A link asks its model once per packet whether the packet is corrupted (and so lost);
//! randomness comes from a stream the caller owns, so a model is a pure state machine.

use fairstream_core::{Probability, RngStream};

/// State of a Gilbert-Elliott channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GeState {
    /// The good state (loss probability `loss_good`).
    #[default]
    Good,
    /// The bad state (loss probability `loss_bad`).
    Bad,
}

/// A per-packet error model.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ErrorModel {
    /// No packet is ever corrupted.
    #[default]
    None,
    /// Each packet is corrupted independently with probability `per`.
    Bernoulli {
        /// Packet error rate.
        per: Probability,
    },
    /// A two-state Markov channel (Gilbert-Elliott), stepped once per packet.
    ///
    /// For each packet the channel first makes its state transition (good → bad with
    /// `p_good_to_bad`, bad → good with `p_bad_to_good`), then corrupts the packet with the
    /// loss probability of the state it is now in. With `loss_good = 0` and `loss_bad = 1`
    /// (the Gilbert model) loss bursts are exactly the bad-state sojourns, of mean length
    /// `1 / p_bad_to_good` packets.
    GilbertElliott {
        /// Per-packet probability of moving from the good to the bad state.
        p_good_to_bad: Probability,
        /// Per-packet probability of moving from the bad to the good state.
        p_bad_to_good: Probability,
        /// Loss probability in the good state.
        loss_good: Probability,
        /// Loss probability in the bad state.
        loss_bad: Probability,
        /// Current state (starts good).
        state: GeState,
    },
}

impl ErrorModel {
    /// Independent losses with packet error rate `per`.
    pub fn bernoulli(per: Probability) -> Self {
        Self::Bernoulli { per }
    }

    /// A Gilbert-Elliott channel starting in the good state.
    pub fn gilbert_elliott(
        p_good_to_bad: Probability,
        p_bad_to_good: Probability,
        loss_good: Probability,
        loss_bad: Probability,
    ) -> Self {
        Self::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
            state: GeState::Good,
        }
    }

    /// The Gilbert model: no loss in the good state, every packet lost in the bad state.
    pub fn gilbert(p_good_to_bad: Probability, p_bad_to_good: Probability) -> Self {
        Self::gilbert_elliott(
            p_good_to_bad,
            p_bad_to_good,
            Probability::ZERO,
            Probability::ONE,
        )
    }

    /// Whether the next packet is corrupted; advances the channel state (Gilbert-Elliott:
    /// transition first, then loss by the new state's probability). [`ErrorModel::None`]
    /// draws nothing from `rng`, and a zero probability draws nothing either.
    #[inline]
    pub fn corrupts(&mut self, rng: &mut RngStream) -> bool {
        match self {
            Self::None => false,
            Self::Bernoulli { per } => rng.bernoulli(per.value()),
            Self::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
                state,
            } => {
                *state = match *state {
                    GeState::Good if rng.bernoulli(p_good_to_bad.value()) => GeState::Bad,
                    GeState::Bad if rng.bernoulli(p_bad_to_good.value()) => GeState::Good,
                    s => s,
                };
                let loss = match *state {
                    GeState::Good => loss_good.value(),
                    GeState::Bad => loss_bad.value(),
                };
                rng.bernoulli(loss)
            }
        }
    }

    /// The long-run fraction of packets corrupted (stationary packet error rate).
    ///
    /// Gilbert-Elliott: `π_bad = p_gb / (p_gb + p_bg)` and the rate is
    /// `(1 − π_bad) · loss_good + π_bad · loss_bad`. If both transition probabilities are
    /// zero the channel never leaves its current state, whose loss probability is returned.
    pub fn mean_loss_rate(&self) -> f64 {
        match self {
            Self::None => 0.0,
            Self::Bernoulli { per } => per.value(),
            Self::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
                state,
            } => {
                let (gb, bg) = (p_good_to_bad.value(), p_bad_to_good.value());
                let pi_bad = if gb + bg > 0.0 {
                    gb / (gb + bg)
                } else if *state == GeState::Bad {
                    1.0
                } else {
                    0.0
                };
                (1.0 - pi_bad) * loss_good.value() + pi_bad * loss_bad.value()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64) -> Probability {
        Probability::new(x).unwrap() // test constants are in [0, 1]
    }

    #[test]
    fn none_never_corrupts_and_draws_nothing() {
        let mut m = ErrorModel::None;
        let mut rng = RngStream::from_seed(1);
        let before = rng.clone().next_u64();
        assert!((0..100_000).all(|_| !m.corrupts(&mut rng)));
        assert_eq!(rng.next_u64(), before);
        assert_eq!(m.mean_loss_rate(), 0.0);
        assert_eq!(ErrorModel::default(), ErrorModel::None);
    }

    #[test]
    fn bernoulli_rate_within_tolerance() {
        let mut m = ErrorModel::bernoulli(p(0.05));
        let mut rng = RngStream::from_seed(2);
        let n = 100_000;
        let lost = (0..n).filter(|_| m.corrupts(&mut rng)).count();
        let rate = lost as f64 / n as f64;
        // σ = sqrt(0.05 · 0.95 / 1e5) ≈ 0.0007.
        assert!((rate - 0.05).abs() < 0.003, "{rate}");
        assert_eq!(m.mean_loss_rate(), 0.05);

        let mut always = ErrorModel::bernoulli(Probability::ONE);
        assert!((0..1000).all(|_| always.corrupts(&mut rng)));
        let mut never = ErrorModel::bernoulli(Probability::ZERO);
        assert!((0..1000).all(|_| !never.corrupts(&mut rng)));
    }

    /// Loss rate and mean length of runs of consecutive losses over `n` packets.
    fn run(m: &mut ErrorModel, seed: u64, n: u32) -> (f64, f64) {
        let mut rng = RngStream::from_seed(seed);
        let (mut lost, mut bursts, mut prev) = (0u32, 0u32, false);
        for _ in 0..n {
            let l = m.corrupts(&mut rng);
            lost += u32::from(l);
            bursts += u32::from(l && !prev);
            prev = l;
        }
        (
            f64::from(lost) / f64::from(n),
            f64::from(lost) / f64::from(bursts.max(1)),
        )
    }

    #[test]
    fn gilbert_stationary_rate_and_burst_length() {
        let mut m = ErrorModel::gilbert(p(0.01), p(0.25));
        let want = 0.01 / 0.26;
        assert!((m.mean_loss_rate() - want).abs() < 1e-15);
        let (rate, burst) = run(&mut m, 3, 1_000_000);
        // Correlated samples: σ ≈ sqrt(π(1−π)/n · (1+λ)/(1−λ)) ≈ 0.0005 with λ = 0.74.
        assert!((rate - want).abs() < 0.003, "{rate} vs {want}");
        // ≈ 9600 bursts, geometric with mean 4 and σ ≈ 3.5: σ of the mean ≈ 0.035.
        assert!((burst - 4.0).abs() < 0.2, "{burst}");

        // Independent losses of the same rate have far shorter runs.
        let (_, b) = run(&mut ErrorModel::bernoulli(p(want)), 3, 1_000_000);
        assert!(b < 1.1, "{b}");
    }

    #[test]
    fn gilbert_elliott_with_partial_losses() {
        let mut m = ErrorModel::gilbert_elliott(p(0.02), p(0.1), p(0.01), p(0.5));
        let pi_bad = 0.02 / 0.12;
        let want = (1.0 - pi_bad) * 0.01 + pi_bad * 0.5;
        assert!((m.mean_loss_rate() - want).abs() < 1e-15);
        let (rate, _) = run(&mut m, 4, 1_000_000);
        assert!((rate - want).abs() < 0.005, "{rate} vs {want}");
    }

    #[test]
    fn transition_happens_before_the_loss_draw() {
        // Certain transition to bad, certain loss there: the very first packet is lost.
        let mut m = ErrorModel::gilbert(Probability::ONE, Probability::ZERO);
        let mut rng = RngStream::from_seed(5);
        assert!(m.corrupts(&mut rng));
        assert!(matches!(
            m,
            ErrorModel::GilbertElliott {
                state: GeState::Bad,
                ..
            }
        ));
        assert_eq!(m.mean_loss_rate(), 1.0);
        // Frozen in the good state.
        let m = ErrorModel::gilbert(Probability::ZERO, Probability::ZERO);
        assert_eq!(m.mean_loss_rate(), 0.0);
    }

    #[test]
    fn same_seed_same_losses() {
        let trace = |seed| {
            let mut m = ErrorModel::gilbert_elliott(p(0.05), p(0.3), p(0.01), p(0.8));
            let mut rng = RngStream::from_seed(seed);
            (0..10_000)
                .map(|_| m.corrupts(&mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(trace(6), trace(6));
        assert_ne!(trace(6), trace(7));
    }
}
