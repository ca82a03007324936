//! ZigZag (Cen et al. 2003; PROTOCOLS.md §3.2): a loss is wireless when the packet that ends
//! the gap arrived with a ROTT below its running mean by enough deviations — how much below
//! depends on how many packets were lost, since a longer congestion burst comes with a higher
//! delay.

use super::LossClass;

/// ZigZag's ROTT mean and deviation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct ZigZag {
    /// EWMA gain `a` of the mean; the deviation uses `2a`.
    gain: f64,
    /// `k_n` for n = 1, 2, 3 and > 3: wireless iff `rott < mean − k_n·dev`.
    dev_factors: [f64; 4],
    /// Whether a first ROTT has set the mean.
    started: bool,
    /// `rott_mean`, seconds.
    mean: f64,
    /// `rott_dev`, seconds.
    dev: f64,
}

impl ZigZag {
    /// ZigZag that has seen nothing.
    pub(super) fn new(gain: f64, dev_factors: [f64; 4]) -> Self {
        Self {
            gain,
            dev_factors,
            started: false,
            mean: 0.0,
            dev: 0.0,
        }
    }

    /// Takes the ROTT of one arrival: the first sets the mean (deviation 0); each later one
    /// moves the mean, then the deviation from the moved mean.
    pub(super) fn observe(&mut self, rott: f64) {
        if !self.started {
            self.started = true;
            self.mean = rott;
            self.dev = 0.0;
            return;
        }
        let a = self.gain;
        self.mean = (1.0 - a) * self.mean + a * rott;
        self.dev = (1.0 - 2.0 * a) * self.dev + 2.0 * a * (rott - self.mean).abs();
    }

    /// Classifies a gap of `missing` packets closed by a packet with ROTT `rott` (already
    /// observed). Any NaN on the way gives congestion.
    pub(super) fn classify(&self, rott: f64, missing: u64) -> LossClass {
        let k = match missing {
            0 | 1 => self.dev_factors[0],
            2 => self.dev_factors[1],
            3 => self.dev_factors[2],
            _ => self.dev_factors[3],
        };
        if rott < self.mean - k * self.dev {
            LossClass::Wireless
        } else {
            LossClass::Congestion
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{MS, at};
    use super::super::{Lda, LdaConfig, LdaKind, LossClass};

    use LossClass::{Congestion, Wireless};

    const US: u64 = 1_000;

    /// ROTT 50, 50, 82 ms on packets 0, 1, 2, then packet `3 + n` with ROTT `rott`.
    ///
    /// After packet 2 (a = 1/32): mean = 50 + 32/32 = 51 ms, dev = (1/16)·|82 − 51| = 31/16 =
    /// 1.9375 ms. A closing ROTT `y` below 51 ms moves them first: mean' = 51 − y/32,
    /// dev' = (15/16)·1.9375 + (1/16)·(31/32)·y = 1.81640625 + 0.060546875·y. It is wireless
    /// iff 51 − y < mean' − k·dev', i.e. (31/32)·y > k·dev':
    /// - k = 1 (n = 1): y > 1.81640625 / 0.908203125 = 2 ms;
    /// - k = 1/2 (n = 2 and n > 3): y > 0.908203125 / 0.9384765625 = 30/31 ≈ 0.968 ms;
    /// - k = 0 (n = 3): y > 0.
    fn gap(n: u64, rott: u64) -> LossClass {
        let mut lda = Lda::new(LdaConfig::with_kind(LdaKind::ZigZag));
        lda.on_arrival(at(0, 0, 50 * MS));
        lda.on_arrival(at(1, 10 * MS, 50 * MS));
        lda.on_arrival(at(2, 20 * MS, 82 * MS));
        let (class, missing) = lda.on_arrival(at(3 + n, 30 * MS, rott)).unwrap();
        assert_eq!(missing, n);
        class
    }

    /// 51 ms minus `y_us` microseconds.
    fn below(y_us: u64) -> u64 {
        51 * MS - y_us * US
    }

    #[test]
    fn one_loss_needs_a_rott_a_full_deviation_below_the_mean() {
        assert_eq!(gap(1, below(1_500)), Congestion);
        assert_eq!(gap(1, below(1_998)), Congestion);
        // Just past 2 ms. Had the deviation used the mean from before this packet
        // (dev' = 1.81640625 + y/16), the edge would be at 1.81640625 / 0.90625 ≈ 2.0043 ms.
        assert_eq!(gap(1, below(2_002)), Wireless);
    }

    #[test]
    fn two_losses_need_half_a_deviation() {
        assert_eq!(gap(2, below(500)), Congestion);
        assert_eq!(gap(2, below(960)), Congestion);
        assert_eq!(gap(2, below(975)), Wireless);
        assert_eq!(gap(2, below(1_500)), Wireless);
    }

    #[test]
    fn three_losses_need_only_a_rott_below_the_mean() {
        assert_eq!(gap(3, 51 * MS + 500 * US), Congestion);
        assert_eq!(gap(3, below(10)), Wireless);
        // IHMC's implementation applies the one-loss rule here: that would be congestion.
        assert_eq!(gap(3, below(500)), Wireless);
    }

    #[test]
    fn more_than_three_losses_need_half_a_deviation_below_the_mean() {
        for n in [4, 10, 1_000] {
            assert_eq!(gap(n, below(960)), Congestion, "n = {n}");
            assert_eq!(gap(n, below(975)), Wireless, "n = {n}");
        }
        // The Rust crate's rule (mean + dev/2) would call 0.5 ms below the mean wireless.
        assert_eq!(gap(4, below(500)), Congestion);
    }

    #[test]
    fn constant_rott_has_no_deviation() {
        // ROTT 50 ms throughout: mean 50, dev 0. Any lower closing ROTT y moves the mean to
        // 50 − y/32 and the deviation to 31·y/512 < (31/32)·y: wireless for every n; a higher
        // one is not below the mean: congestion.
        for n in [1, 2, 3, 4] {
            let run = |rott| {
                let mut lda = Lda::new(LdaConfig::with_kind(LdaKind::ZigZag));
                for seq in 0..10 {
                    lda.on_arrival(at(seq, seq * 10 * MS, 50 * MS));
                }
                lda.on_arrival(at(10 + n, 200 * MS, rott)).unwrap().0
            };
            assert_eq!(run(50 * MS - 100 * US), Wireless, "n = {n}");
            assert_eq!(run(50 * MS + 100 * US), Congestion, "n = {n}");
        }
    }

    #[test]
    fn dev_factors_follow_the_config() {
        // The Rust crate's n > 3 row: rott < mean + dev/2.
        let config = LdaConfig {
            zigzag_dev_factors: [1.0, 0.5, 0.0, -0.5],
            ..LdaConfig::with_kind(LdaKind::ZigZag)
        };
        let mut lda = Lda::new(config);
        lda.on_arrival(at(0, 0, 50 * MS));
        lda.on_arrival(at(1, 10 * MS, 50 * MS));
        lda.on_arrival(at(2, 20 * MS, 82 * MS));
        let closing = at(7, 30 * MS, below(500));
        assert_eq!(lda.on_arrival(closing), Some((Wireless, 4)));
    }

    #[test]
    fn nan_state_is_congestion() {
        let mut z = super::ZigZag::new(f64::NAN, [1.0, 0.5, 0.0, 0.5]);
        z.observe(0.05);
        z.observe(0.04);
        assert_eq!(z.classify(0.0, 1), Congestion);
        z.observe(0.03);
        assert_eq!(
            z.classify(0.0, 1),
            Congestion,
            "a NaN mean is not a fresh start"
        );
        let mut z = super::ZigZag::new(1.0 / 32.0, [f64::NAN; 4]);
        z.observe(0.05);
        assert_eq!(z.classify(0.0, 1), Congestion);
    }
}
