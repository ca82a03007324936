//! Biaz (Biaz & Vaidya 1999) and mBiaz (Cen et al. 2003), PROTOCOLS.md §3.2: if the packet
//! that ends a gap of `n` arrives about when it would have had the `n` missing packets gone
//! through the bottleneck ahead of it, they were lost after the bottleneck — on the wireless
//! last hop. mBiaz is Biaz with a narrower window, so both live here.

use super::LossClass;

/// The window rule: wireless iff `(n + lower)·T_min ≤ T_i < (n + upper)·T_min`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Biaz {
    lower: f64,
    upper: f64,
}

impl Biaz {
    /// A window `[(n + lower)·T_min, (n + upper)·T_min)`: Biaz has `upper` = 2, mBiaz 1.25.
    pub(super) fn new(lower: f64, upper: f64) -> Self {
        Self { lower, upper }
    }

    /// Classifies a gap of `missing` packets closed `t_i` seconds after the previous highest
    /// packet. A `T_min` that is not positive and finite gives an empty window: congestion.
    pub(super) fn classify(&self, missing: u64, t_i: f64, t_min: f64) -> LossClass {
        if !(t_min > 0.0 && t_min.is_finite()) {
            return LossClass::Congestion;
        }
        let n = missing as f64;
        let low = (n + self.lower) * t_min;
        let high = (n + self.upper) * t_min;
        // Written so that any NaN falls through to congestion.
        if low <= t_i && t_i < high {
            LossClass::Wireless
        } else {
            LossClass::Congestion
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{TAU, at};
    use super::super::{Lda, LdaConfig, LdaKind, LossClass};

    use LossClass::{Congestion, Wireless};

    /// Packets 0, 1, 2 arrive `TAU` apart (T_min = TAU = 2⁻⁷ s, so that every window edge
    /// is exact in binary); then packet `3 + n` arrives `t_i` ns after packet 2.
    fn gap(kind: LdaKind, n: u64, t_i: u64) -> LossClass {
        let mut lda = Lda::new(LdaConfig::with_kind(kind));
        for seq in 0..3 {
            assert_eq!(lda.on_arrival(at(seq, seq * TAU, 0)), None);
        }
        let (class, missing) = lda
            .on_arrival(at(3 + n, 2 * TAU + t_i, 0))
            .expect("a gap is an episode");
        assert_eq!(missing, n);
        class
    }

    #[test]
    fn biaz_window_is_n_plus_1_to_n_plus_2_packet_times() {
        // n = 1: wireless iff 2·T_min <= T_i < 3·T_min.
        assert_eq!(gap(LdaKind::Biaz, 1, 2 * TAU - 1), Congestion);
        assert_eq!(gap(LdaKind::Biaz, 1, 2 * TAU), Wireless);
        assert_eq!(gap(LdaKind::Biaz, 1, 3 * TAU - 1), Wireless);
        assert_eq!(gap(LdaKind::Biaz, 1, 3 * TAU), Congestion);
        // n = 3: wireless iff 4·T_min <= T_i < 5·T_min.
        assert_eq!(gap(LdaKind::Biaz, 3, 4 * TAU - 1), Congestion);
        assert_eq!(gap(LdaKind::Biaz, 3, 4 * TAU), Wireless);
        assert_eq!(gap(LdaKind::Biaz, 3, 5 * TAU - 1), Wireless);
        assert_eq!(gap(LdaKind::Biaz, 3, 5 * TAU), Congestion);
    }

    #[test]
    fn mbiaz_window_is_n_plus_1_to_n_plus_1_25_packet_times() {
        // n = 1: wireless iff 2·T_min <= T_i < 2.25·T_min (2.25·TAU = 9·TAU/4, exact).
        assert_eq!(gap(LdaKind::MBiaz, 1, 2 * TAU - 1), Congestion);
        assert_eq!(gap(LdaKind::MBiaz, 1, 2 * TAU), Wireless);
        assert_eq!(gap(LdaKind::MBiaz, 1, 9 * TAU / 4 - 1), Wireless);
        assert_eq!(gap(LdaKind::MBiaz, 1, 9 * TAU / 4), Congestion);
        // Inside Biaz's window but past mBiaz's.
        assert_eq!(gap(LdaKind::MBiaz, 1, 5 * TAU / 2), Congestion);
        // n = 3: wireless iff 4·T_min <= T_i < 4.25·T_min.
        assert_eq!(gap(LdaKind::MBiaz, 3, 4 * TAU - 1), Congestion);
        assert_eq!(gap(LdaKind::MBiaz, 3, 4 * TAU), Wireless);
        assert_eq!(gap(LdaKind::MBiaz, 3, 17 * TAU / 4 - 1), Wireless);
        assert_eq!(gap(LdaKind::MBiaz, 3, 17 * TAU / 4), Congestion);
    }

    #[test]
    fn window_edges_follow_the_config() {
        let config = LdaConfig {
            biaz_lower: 0.5,
            biaz_upper: 1.0,
            ..LdaConfig::with_kind(LdaKind::Biaz)
        };
        let mut lda = Lda::new(config);
        for seq in 0..3 {
            lda.on_arrival(at(seq, seq * TAU, 0));
        }
        // n = 1: [1.5·T_min, 2·T_min): 1.5·T_min is wireless here, congestion by default.
        let closing = at(4, 2 * TAU + 3 * TAU / 2, 0);
        assert_eq!(lda.on_arrival(closing), Some((Wireless, 1)));
        assert_eq!(gap(LdaKind::Biaz, 1, 3 * TAU / 2), Congestion);
    }

    #[test]
    fn unusable_t_min_or_t_i_is_congestion() {
        let biaz = super::Biaz::new(1.0, 2.0);
        assert_eq!(biaz.classify(1, 0.0, 0.0), Congestion);
        assert_eq!(biaz.classify(1, 0.02, f64::INFINITY), Congestion);
        assert_eq!(biaz.classify(1, 0.02, f64::NAN), Congestion);
        assert_eq!(biaz.classify(1, f64::NAN, 0.01), Congestion);
        assert_eq!(biaz.classify(1, -0.02, 0.01), Congestion);
        assert_eq!(biaz.classify(u64::MAX, 0.02, 0.01), Congestion);
        assert_eq!(biaz.classify(1, 0.02, 0.01), Wireless);
    }
}
