//! The Spike LDA (Tobe et al. 2000; PROTOCOLS.md §3.2): a [`SpikeDetector`] over the ROTT of
//! every arrival; a loss while the detector is in its spike state (a queue is building) is
//! congestion, any other loss is wireless.

use super::{LossClass, SpikeDetector, SpikeThresholds};

/// The Spike LDA's state: just the detector.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct SpikeLda {
    detector: SpikeDetector,
}

impl SpikeLda {
    /// A Spike LDA that has seen nothing (normal state).
    pub(super) fn new(thresholds: SpikeThresholds) -> Self {
        Self {
            detector: SpikeDetector::new(thresholds),
        }
    }

    /// Takes the ROTT of one arrival.
    pub(super) fn observe(&mut self, rott: f64) {
        self.detector.observe(rott);
    }

    /// Congestion while in the spike state, wireless otherwise.
    pub(super) fn classify(&self) -> LossClass {
        if self.detector.in_spike() {
            LossClass::Congestion
        } else {
            LossClass::Wireless
        }
    }

    /// Whether the detector is in its spike state.
    pub(super) fn in_spike(&self) -> bool {
        self.detector.in_spike()
    }

    /// The smallest ROTT seen (`+∞` before any).
    pub(super) fn rott_min(&self) -> f64 {
        self.detector.min()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{MS, at};
    use super::super::{Lda, LdaConfig, LdaKind, LossClass};

    use LossClass::{Congestion, Wireless};

    const US: u64 = 1_000;

    #[test]
    fn congestion_inside_a_spike_wireless_outside() {
        let mut lda = Lda::new(LdaConfig::with_kind(LdaKind::Spike));
        // ROTT 10, 10, 20 ms: range [10, 20], B_start = 15 ms, B_end = 13.33 ms.
        lda.on_arrival(at(0, 0, 10 * MS));
        lda.on_arrival(at(1, 10 * MS, 10 * MS));
        assert!(!lda.in_spike());
        lda.on_arrival(at(2, 20 * MS, 20 * MS));
        assert!(lda.in_spike(), "20 ms > B_start: entered");
        // 14 ms: below B_start but above B_end, so still in the spike.
        assert_eq!(
            lda.on_arrival(at(4, 40 * MS, 14 * MS)),
            Some((Congestion, 1))
        );
        assert!(lda.in_spike());
        // 13 ms < B_end: the closing packet itself ends the spike before the decision.
        assert_eq!(lda.on_arrival(at(6, 60 * MS, 13 * MS)), Some((Wireless, 1)));
        assert!(!lda.in_spike());
        // 14.9 ms: not above B_start, stays normal.
        assert_eq!(
            lda.on_arrival(at(8, 80 * MS, 14 * MS + 900 * US)),
            Some((Wireless, 1))
        );
        // 15.1 ms: above B_start; the closing packet starts the spike before the decision.
        assert_eq!(
            lda.on_arrival(at(11, 110 * MS, 15 * MS + 100 * US)),
            Some((Congestion, 2))
        );
        assert!(lda.in_spike());
    }

    #[test]
    fn thresholds_follow_the_config() {
        // alpha = 0.9: with the range [10, 20] ms, B_start = 19 ms.
        let mut config = LdaConfig::with_kind(LdaKind::Spike);
        config.spike.alpha = 0.9;
        let mut lda = Lda::new(config);
        lda.on_arrival(at(0, 0, 10 * MS));
        lda.on_arrival(at(1, 10 * MS, 20 * MS));
        assert!(lda.in_spike(), "20 ms is the new maximum, above 19 ms");
        lda.on_arrival(at(2, 20 * MS, 10 * MS));
        assert!(!lda.in_spike());
        // 18 ms: above the default B_start (15 ms) but not above 19 ms.
        assert_eq!(lda.on_arrival(at(4, 40 * MS, 18 * MS)), Some((Wireless, 1)));
    }
}
