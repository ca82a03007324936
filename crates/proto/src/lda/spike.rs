//! The Spike detector (Tobe et al. 2000; PROTOCOLS.md §3.2): a delay that climbs past a point
//! between the smallest and largest delays seen means a queue is building; it stays "in a
//! spike" until the delay falls back below a lower point. Used on one-way delays (ROTT) by the
//! Spike LDA and on RTT samples by VTP's sender.

/// Spike's thresholds as fractions of the delay range seen so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpikeThresholds {
    /// Enter the spike state above `min + alpha·(max − min)` (Cen et al.: 1/2; \[impl\]: the
    /// Rust crate and IHMC agree).
    pub alpha: f64,
    /// Leave it below `min + beta·(max − min)` (Cen et al.: 1/3; \[impl\]: the Rust crate and
    /// IHMC agree).
    pub beta: f64,
}

impl Default for SpikeThresholds {
    fn default() -> Self {
        Self {
            alpha: 0.5,
            beta: 1.0 / 3.0,
        }
    }
}

/// Tracks the delay range and the spike state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpikeDetector {
    thresholds: SpikeThresholds,
    min: f64,
    max: f64,
    in_spike: bool,
}

impl SpikeDetector {
    /// A detector that has seen nothing (not in a spike).
    pub fn new(thresholds: SpikeThresholds) -> Self {
        Self {
            thresholds,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            in_spike: false,
        }
    }

    /// Takes one delay sample (seconds; any consistent offset is fine) and returns whether
    /// the detector is now in its spike state. Non-finite samples are ignored.
    pub fn observe(&mut self, delay: f64) -> bool {
        if !delay.is_finite() {
            return self.in_spike;
        }
        self.min = self.min.min(delay);
        self.max = self.max.max(delay);
        let range = self.max - self.min;
        let start = self.min + self.thresholds.alpha * range;
        let end = self.min + self.thresholds.beta * range;
        if !self.in_spike && delay > start {
            self.in_spike = true;
        } else if self.in_spike && delay < end {
            self.in_spike = false;
        }
        self.in_spike
    }

    /// Whether the detector is in its spike state.
    pub fn in_spike(&self) -> bool {
        self.in_spike
    }

    /// The smallest delay seen (`+∞` before any).
    pub fn min(&self) -> f64 {
        self.min
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enters_above_b_start_and_leaves_below_b_end() {
        let mut s = SpikeDetector::new(SpikeThresholds::default());
        // Range 10..20 ms: B_start = 15 ms, B_end ≈ 13.33 ms.
        assert!(!s.observe(0.010));
        assert!(s.observe(0.020)); // 20 > B_start of the range [10, 20]
        assert!(s.observe(0.014)); // above B_end: stays in the spike
        assert!(!s.observe(0.013)); // below B_end: leaves
        assert!(!s.observe(0.015)); // not above B_start (15): stays normal
        assert!(s.observe(0.0151));
    }

    #[test]
    fn ignores_non_finite_samples() {
        let mut s = SpikeDetector::new(SpikeThresholds::default());
        s.observe(0.01);
        assert!(!s.observe(f64::NAN));
        assert!(!s.observe(f64::INFINITY));
        assert_eq!(s.min(), 0.01);
    }
}
