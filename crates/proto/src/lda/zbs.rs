//! ZBS (Cen et al. 2003; PROTOCOLS.md §3.2), the hybrid: it estimates what kind of path it is
//! on from the normalised inter-arrival time `T_narr = T_avg / T_min` and the ROTT, and lets
//! ZigZag, mBiaz or Spike decide accordingly. All three are kept up to date on every arrival,
//! so whichever is picked has the whole history.

use super::biaz::Biaz;
use super::spike_lda::SpikeLda;
use super::track::Step;
use super::zigzag::ZigZag;
use super::{LdaConfig, LossClass};

/// The algorithm ZBS hands a decision to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ZbsMode {
    /// The slowest link is under-used, or many flows share it.
    Spike,
    /// The path is ambiguous.
    ZigZag,
    /// The wireless last hop is the bottleneck and not shared.
    MBiaz,
}

/// ZBS's switch points (see [`LdaConfig`]).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Switch {
    spike_margin: f64,
    narr_low: f64,
    narr_mid: f64,
    narr_high: f64,
    avg_gain: f64,
}

/// ZBS: the three algorithms, `T_avg`, and the mode picked at the last arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Zbs {
    switch: Switch,
    spike: SpikeLda,
    zigzag: ZigZag,
    mbiaz: Biaz,
    /// `T_avg`: EWMA of the per-packet inter-arrival time `T_i/(n+1)`, seconds.
    t_avg: f64,
    /// The mode for the last arrival's ROTT; `None` while `T_narr` is undefined.
    mode: Option<ZbsMode>,
}

impl Zbs {
    /// ZBS with `config`'s parameters, having seen nothing (`T_avg` = 0).
    pub(super) fn new(config: &LdaConfig) -> Self {
        Self {
            switch: Switch {
                spike_margin: config.zbs_spike_margin,
                narr_low: config.zbs_narr_low,
                narr_mid: config.zbs_narr_mid,
                narr_high: config.zbs_narr_high,
                avg_gain: config.zbs_avg_gain,
            },
            spike: SpikeLda::new(config.spike),
            zigzag: ZigZag::new(config.zigzag_gain, config.zigzag_dev_factors),
            mbiaz: Biaz::new(config.biaz_lower, config.mbiaz_upper),
            t_avg: 0.0,
            mode: None,
        }
    }

    /// Takes one arrival: its ROTT, what it did to the sequence, and the current `T_min`.
    pub(super) fn observe(&mut self, rott: f64, step: Step, t_min: Option<f64>) {
        self.spike.observe(rott);
        self.zigzag.observe(rott);
        if let Step::Advance { missing, t_i } = step {
            // Spread T_i over the n + 1 packet slots it spans, so a gap does not read as a
            // slow path.
            let sample = t_i / (missing as f64 + 1.0);
            if sample >= 0.0 && sample.is_finite() {
                let g = self.switch.avg_gain;
                self.t_avg = (1.0 - g) * self.t_avg + g * sample;
            }
        }
        self.mode = self.pick(rott, t_min);
    }

    /// The mode for an arrival with ROTT `rott`; `None` unless `T_min` is positive and finite
    /// and `T_narr` finite.
    fn pick(&self, rott: f64, t_min: Option<f64>) -> Option<ZbsMode> {
        let t_min = t_min.filter(|t| *t > 0.0 && t.is_finite())?;
        let narr = self.t_avg / t_min;
        if !narr.is_finite() {
            return None;
        }
        let s = &self.switch;
        Some(if rott < self.spike.rott_min() + s.spike_margin * t_min {
            ZbsMode::Spike
        } else if narr < s.narr_low {
            ZbsMode::ZigZag
        } else if narr < s.narr_mid {
            ZbsMode::MBiaz
        } else if narr < s.narr_high {
            ZbsMode::ZigZag
        } else {
            ZbsMode::Spike
        })
    }

    /// Classifies the gap closed by the arrival just observed, with that arrival's ROTT,
    /// `T_i` and `T_min`. While there is no mode (no `T_min` yet, or `T_narr` undefined) the
    /// path is ambiguous and ZigZag decides, as ZBS's ambiguous branches do \[proposed\].
    pub(super) fn classify(
        &self,
        rott: f64,
        missing: u64,
        t_i: f64,
        t_min: Option<f64>,
    ) -> LossClass {
        match (self.mode, t_min) {
            (None, _) | (Some(ZbsMode::ZigZag), _) => self.zigzag.classify(rott, missing),
            (Some(ZbsMode::Spike), _) => self.spike.classify(),
            (Some(ZbsMode::MBiaz), Some(t_min)) => self.mbiaz.classify(missing, t_i, t_min),
            (Some(ZbsMode::MBiaz), None) => LossClass::Congestion,
        }
    }

    /// Whether ZBS is using Spike and Spike is in its spike state.
    pub(super) fn in_spike(&self) -> bool {
        self.mode == Some(ZbsMode::Spike) && self.spike.in_spike()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{MS, at};
    use super::super::{Algo, Lda, LdaConfig, LdaKind, LossClass};
    use super::ZbsMode;

    use LossClass::{Congestion, Wireless};

    const US: u64 = 1_000;

    /// A ZBS that has seen: packets 0 and 1 10 ms apart (T_min = 10 ms), then packets
    /// 2..=`last` `spacing` ns apart. ROTT is 50 ms except 70 ms on packet 2, which widens
    /// Spike's range to [50, 70] ms (B_start = 60 ms) and whose spike packet 3 ends.
    /// Returns the ZBS and the arrival time of packet `last`.
    ///
    /// With a closing ROTT of 51 ms (not within 0.05·T_min = 0.5 ms of the minimum): ZigZag
    /// says congestion (the mean is at most 50.625 ms), Spike says wireless (51 < B_start),
    /// mBiaz says wireless iff 20 ms <= T_i < 22.5 ms for n = 1. So each scenario below has
    /// the picked algorithm disagree with both others.
    fn history(spacing: u64, last: u64) -> (Lda, u64) {
        let mut lda = Lda::new(LdaConfig::with_kind(LdaKind::Zbs));
        lda.on_arrival(at(0, 0, 50 * MS));
        lda.on_arrival(at(1, 10 * MS, 50 * MS));
        let mut t = 10 * MS;
        for seq in 2..=last {
            t += spacing;
            let rott = if seq == 2 { 70 * MS } else { 50 * MS };
            assert_eq!(lda.on_arrival(at(seq, t, rott)), None);
        }
        assert!(!lda.in_spike());
        (lda, t)
    }

    fn mode(lda: &Lda) -> Option<ZbsMode> {
        match &lda.algo {
            Algo::Zbs(z) => z.mode,
            _ => unreachable!("a ZBS LDA"),
        }
    }

    fn t_narr(lda: &Lda) -> f64 {
        match &lda.algo {
            Algo::Zbs(z) => z.t_avg / lda.tracker.t_min().unwrap(),
            _ => unreachable!("a ZBS LDA"),
        }
    }

    #[test]
    fn startup_is_ambiguous_and_goes_to_zigzag() {
        // T_avg starts at 0: after 4 samples of 10 ms it is 10·(1 − 0.875⁴) ≈ 4.1 ms, and
        // the closing sample (21/2 ms) leaves T_narr ≈ 0.49 < 0.875.
        let (mut lda, t) = history(10 * MS, 4);
        let closing = at(6, t + 21 * MS, 51 * MS);
        assert_eq!(lda.on_arrival(closing), Some((Congestion, 1)));
        assert_eq!(mode(&lda), Some(ZbsMode::ZigZag));
        assert!(t_narr(&lda) < 0.875);
    }

    #[test]
    fn unshared_bottleneck_goes_to_mbiaz() {
        // 100 packets 10 ms apart: T_narr ≈ 1.
        let (lda, t) = history(10 * MS, 100);
        let mut inside = lda.clone();
        assert_eq!(
            inside.on_arrival(at(102, t + 21 * MS, 51 * MS)),
            Some((Wireless, 1))
        );
        assert_eq!(mode(&inside), Some(ZbsMode::MBiaz));
        let mut outside = lda;
        assert_eq!(
            outside.on_arrival(at(102, t + 23 * MS, 51 * MS)),
            Some((Congestion, 1))
        );
        assert_eq!(mode(&outside), Some(ZbsMode::MBiaz));
    }

    #[test]
    fn t_avg_spreads_a_gap_over_its_packet_slots() {
        // A gap of 10 closed on time for mBiaz (T_i = 11.1·T_min): the sample is
        // T_i/11 ≈ T_min and T_narr stays ≈ 1. Taking T_i whole would push T_narr to
        // 0.875 + 0.125·11.1 ≈ 2.26, which is Spike's (and Spike would say wireless too, so
        // the mode is what tells them apart).
        let (mut lda, t) = history(10 * MS, 100);
        let closing = at(111, t + 111 * MS, 51 * MS);
        assert_eq!(lda.on_arrival(closing), Some((Wireless, 10)));
        assert_eq!(mode(&lda), Some(ZbsMode::MBiaz));
        assert!((t_narr(&lda) - 1.0).abs() < 0.01, "{}", t_narr(&lda));
    }

    #[test]
    fn a_few_competing_flows_go_to_zigzag() {
        // Packets 17.5 ms apart: T_narr ≈ 1.75 (the closing sample of 10.5 ms leaves ≈ 1.66).
        let (mut lda, t) = history(17 * MS + 500 * US, 100);
        let closing = at(102, t + 21 * MS, 51 * MS);
        assert_eq!(lda.on_arrival(closing), Some((Congestion, 1)));
        assert_eq!(mode(&lda), Some(ZbsMode::ZigZag));
        let narr = t_narr(&lda);
        assert!((1.5..2.0).contains(&narr), "{narr}");
    }

    #[test]
    fn many_competing_flows_go_to_spike() {
        // Packets 30 ms apart: T_narr ≈ 3. T_i = 60 ms is outside mBiaz's window.
        let (mut lda, t) = history(30 * MS, 100);
        let closing = at(102, t + 60 * MS, 51 * MS);
        assert_eq!(lda.on_arrival(closing), Some((Wireless, 1)));
        assert_eq!(mode(&lda), Some(ZbsMode::Spike));
        assert!(t_narr(&lda) >= 2.0);
    }

    #[test]
    fn a_rott_near_its_minimum_goes_to_spike() {
        // T_narr ≈ 1 (mBiaz's region), but ROTT 50.2 ms is within 0.05·T_min = 0.5 ms of the
        // minimum. T_i = 60 ms: mBiaz would say congestion, ZigZag too (50.2 is not a
        // deviation below a mean of ≈ 50 ms); Spike says wireless.
        let (lda, t) = history(10 * MS, 100);
        let mut near = lda.clone();
        let closing = at(102, t + 60 * MS, 50 * MS + 200 * US);
        assert_eq!(near.on_arrival(closing), Some((Wireless, 1)));
        assert_eq!(mode(&near), Some(ZbsMode::Spike));
        // 50.6 ms is past the margin: back to mBiaz, which says congestion.
        let mut far = lda;
        let closing = at(102, t + 60 * MS, 50 * MS + 600 * US);
        assert_eq!(far.on_arrival(closing), Some((Congestion, 1)));
        assert_eq!(mode(&far), Some(ZbsMode::MBiaz));
    }

    #[test]
    fn in_spike_only_while_using_spike() {
        // A ROTT of 75 ms starts a spike (range [50, 75]) in both; only the ZBS whose path
        // reads as many competing flows is using Spike.
        let (mut shared, t) = history(30 * MS, 100);
        assert_eq!(shared.on_arrival(at(101, t + 30 * MS, 75 * MS)), None);
        assert_eq!(mode(&shared), Some(ZbsMode::Spike));
        assert!(shared.in_spike());
        let (mut unshared, t) = history(10 * MS, 100);
        assert_eq!(unshared.on_arrival(at(101, t + 10 * MS, 75 * MS)), None);
        assert_eq!(mode(&unshared), Some(ZbsMode::MBiaz));
        assert!(!unshared.in_spike());
    }
}
