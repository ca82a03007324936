//! Loss discrimination algorithms (PROTOCOLS.md §3): a receiver that sees a gap in the
//! sequence numbers asks its [`Lda`] whether the missing packets were lost to congestion or
//! to a lossy (wireless) link. Spike (the default), Biaz, mBiaz, ZigZag and ZBS sit behind
//! one interface, so any receiver can use any of them.
//!
//! The receiver feeds every arriving packet to [`Lda::on_arrival`] as an [`Arrival`]; the
//! LDA keeps its own view of the sequence (highest number seen, `T_min`) and answers, on the
//! arrival that closes a gap, with the class of the packets missing before it.
//!
//! Here: the shared interface ([`LossClass`], [`Arrival`], [`LdaKind`], [`LdaConfig`],
//! [`Lda`]). Sequence bookkeeping is in `track.rs`, one algorithm per file (`biaz.rs` holds
//! both Biaz and mBiaz, which differ only in their window), and the [`SpikeDetector`] the
//! Spike LDA, ZBS and VTP's sender share is in `spike.rs`.
//!
//! ```
//! use fairstream_core::Instant;
//! use fairstream_proto::lda::{Arrival, Lda, LdaConfig, LdaKind, LossClass};
//! let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
//! let mut lda = Lda::new(LdaConfig::with_kind(LdaKind::MBiaz));
//! assert_eq!(lda.on_arrival(Arrival { seq: 0, at: ms(100), sent: ms(0) }), None);
//! assert_eq!(lda.on_arrival(Arrival { seq: 1, at: ms(110), sent: ms(10) }), None);
//! // Packet 2 is missing and packet 3 comes 2.1 packet times later: lost after the
//! // bottleneck, so on the wireless hop.
//! let closing = Arrival { seq: 3, at: ms(131), sent: ms(30) };
//! assert_eq!(lda.on_arrival(closing), Some((LossClass::Wireless, 1)));
//! ```

mod biaz;
pub mod metrics;
mod spike;
mod spike_lda;
#[cfg(test)]
mod testing;
mod track;
mod zbs;
mod zigzag;

pub use spike::{SpikeDetector, SpikeThresholds};

use fairstream_core::Instant;

use biaz::Biaz;
use spike_lda::SpikeLda;
use track::{Step, Tracker};
use zbs::Zbs;
use zigzag::ZigZag;

/// What a loss discriminator decides about the packets of one loss episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LossClass {
    /// Dropped at a full queue: the sender should slow down.
    Congestion,
    /// Lost on a lossy link: slowing down would not help.
    Wireless,
}

/// One packet's arrival as the receiver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The packet's sequence number.
    pub seq: u64,
    /// When it arrived, on the receiver's clock.
    pub at: Instant,
    /// When it was sent, on the sender's clock (the two clocks need not agree).
    pub sent: Instant,
}

impl Arrival {
    /// The relative one-way trip time `at − sent` in seconds; negative if `at` is earlier
    /// (unsynchronised clocks). Only its differences between packets matter.
    pub fn rott(&self) -> f64 {
        track::secs_between(self.at, self.sent)
    }
}

/// Which loss discrimination algorithm an [`Lda`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LdaKind {
    /// Spike (Tobe et al. 2000): congestion while the ROTT is in a spike.
    #[default]
    Spike,
    /// Biaz (Biaz & Vaidya 1999): wireless if the gap-closing packet came on time.
    Biaz,
    /// mBiaz (Cen et al. 2003): Biaz with a narrower window.
    MBiaz,
    /// ZigZag (Cen et al. 2003): wireless if the ROTT is low for the number of losses.
    ZigZag,
    /// ZBS (Cen et al. 2003): ZigZag, mBiaz or Spike, picked by the path's state.
    Zbs,
}

impl LdaKind {
    /// Every kind, in declaration order.
    pub const ALL: [Self; 5] = [
        Self::Spike,
        Self::Biaz,
        Self::MBiaz,
        Self::ZigZag,
        Self::Zbs,
    ];

    /// The kind's name: `spike`, `biaz`, `mbiaz`, `zigzag` or `zbs`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Spike => "spike",
            Self::Biaz => "biaz",
            Self::MBiaz => "mbiaz",
            Self::ZigZag => "zigzag",
            Self::Zbs => "zbs",
        }
    }

    /// The kind called `name` (exactly as [`LdaKind::name`] spells it), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// An LDA's algorithm and parameters. The defaults are PROTOCOLS.md §3.2's; each field's
/// doc gives the source tag from its constants table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LdaConfig {
    /// The algorithm.
    pub kind: LdaKind,
    /// Spike's thresholds, for Spike and ZBS: α = 1/2, β = 1/3. \[impl\] (Rust crate and IHMC
    /// agree.)
    pub spike: SpikeThresholds,
    /// ZigZag's EWMA gain `a` for the ROTT mean; the deviation uses `2a` (ZigZag and ZBS):
    /// 1/32. \[impl\] (Rust crate and IHMC agree.)
    pub zigzag_gain: f64,
    /// ZigZag's `k_n` for n = 1, 2, 3 and n > 3 losses: wireless iff
    /// `rott < rott_mean − k_n·rott_dev`. Default `[1, 1/2, 0, 1/2]`. \[paper?\] — the n = 1,
    /// 2, 3 rows match the Rust crate; for n > 3 the Rust crate has −1/2 (`rott_mean +
    /// rott_dev/2`) and IHMC 1/2 (IHMC also uses 1 for n = 3); the spec picks 1/2, to be
    /// checked against the paper.
    pub zigzag_dev_factors: [f64; 4],
    /// Lower edge of the Biaz and mBiaz window `[(n + lower)·T_min, (n + upper)·T_min)`: 1.
    /// \[impl\] (both implementations.)
    pub biaz_lower: f64,
    /// Upper edge of Biaz's window: 2, so `(n + 2)·T_min`. \[impl\] (both implementations.)
    pub biaz_upper: f64,
    /// Upper edge of mBiaz's window (also ZBS's mBiaz): 1.25, so `(n + 1.25)·T_min`. \[impl\]
    /// (Rust crate, IHMC; subetha-cxc cites the paper's Fig. 2.)
    pub mbiaz_upper: f64,
    /// ZBS uses Spike when the ROTT is below `rott_min + margin·T_min` (the slowest link is
    /// under-used): 0.05. \[impl\] (Rust crate.) The ROTT tested is the current packet's
    /// (\[impl\], both implementations; some descriptions use `rott_mean` \[paper?\]).
    pub zbs_spike_margin: f64,
    /// ZBS uses ZigZag below this `T_narr` (ambiguous, e.g. at start-up): 0.875. \[impl\]
    /// (Rust crate.)
    pub zbs_narr_low: f64,
    /// ZBS uses mBiaz from `zbs_narr_low` up to this `T_narr` (an unshared wireless
    /// bottleneck): 1.5. \[impl\] (Rust crate.)
    pub zbs_narr_mid: f64,
    /// ZBS uses ZigZag from `zbs_narr_mid` up to this `T_narr` (ambiguous), and Spike from
    /// here on (many competing flows): 2.0. \[impl\] (Rust crate; IHMC has no Spike branch.)
    pub zbs_narr_high: f64,
    /// Gain of ZBS's `T_avg` EWMA over the per-packet inter-arrival time `T_i/(n+1)`:
    /// 0.125. \[impl\] (Rust crate, whose `T_i²/n` sample the spec replaces by `T_i/(n+1)`.)
    pub zbs_avg_gain: f64,
}

impl Default for LdaConfig {
    fn default() -> Self {
        Self {
            kind: LdaKind::default(),
            spike: SpikeThresholds::default(),
            zigzag_gain: 1.0 / 32.0,
            zigzag_dev_factors: [1.0, 0.5, 0.0, 0.5],
            biaz_lower: 1.0,
            biaz_upper: 2.0,
            mbiaz_upper: 1.25,
            zbs_spike_margin: 0.05,
            zbs_narr_low: 0.875,
            zbs_narr_mid: 1.5,
            zbs_narr_high: 2.0,
            zbs_avg_gain: 0.125,
        }
    }
}

impl LdaConfig {
    /// The default parameters with algorithm `kind`.
    pub fn with_kind(kind: LdaKind) -> Self {
        Self {
            kind,
            ..Self::default()
        }
    }
}

/// A loss discriminator: fed every arriving packet; on an arrival that closes a gap of
/// `n > 0` missing packets it returns the class of those `n` packets.
///
/// Every non-duplicate arrival updates the statistics (ROTT range and EWMAs, `T_avg`) before
/// any classification. A first arrival numbered k > 0 (senders number from 0) closes a gap of
/// the k packets lost before anything arrived, classified from the statistics of that one
/// arrival.
///
/// Each algorithm decides from its own state, and says what it does before that state exists
/// (PROTOCOLS.md §3.2 gives the rules, not the start; these are \[proposed\]):
///
/// - **Spike**: its state is the ROTT range and the spike state, which starts normal; it
///   decides from them at once (a closing packet above `B_start` of the range so far is a spike:
///   congestion; equal ROTTs, as an empty queue gives, are not: wireless; the packets lost
///   before the first arrival, whose range is a single point, are wireless). It never uses
///   `T_min`.
/// - **ZigZag**: its state is the ROTT mean and deviation, set by the first arrival (deviation
///   0); it decides from them at once (the packets lost before the first arrival, whose ROTT is
///   the mean, are congestion).
/// - **Biaz, mBiaz**: their window needs `T_min`, the smallest inter-arrival time of two
///   packets received consecutively in order; until it exists every loss is congestion (the
///   loss then counts as plain TFRC would count it).
/// - **ZBS**: it picks an algorithm from `T_narr = T_avg / T_min` and the ROTT's distance from
///   its minimum in units of `T_min`; until `T_min` exists the path is ambiguous and ZBS hands
///   the decision to ZigZag, its choice for an ambiguous path.
///
/// (Before 2026-11-27 every algorithm said congestion until `T_min` existed, Spike and ZigZag
/// included, which do not use it, and packets lost before the first arrival were not classified
/// at all, so a receiver counted them as congestion: one loss among a flow's first packets then
/// seeded TFRC's loss history, RFC 5348 §6.3.1, from a rate of a packet or two per RTT.)
#[derive(Clone, Debug)]
pub struct Lda {
    tracker: Tracker,
    algo: Algo,
}

/// The algorithm's own state, one variant per [`LdaKind`].
#[derive(Clone, Debug)]
enum Algo {
    Spike(SpikeLda),
    Biaz(Biaz),
    MBiaz(Biaz),
    ZigZag(ZigZag),
    Zbs(Zbs),
}

impl Lda {
    /// An LDA that has seen nothing.
    pub fn new(config: LdaConfig) -> Self {
        let algo = match config.kind {
            LdaKind::Spike => Algo::Spike(SpikeLda::new(config.spike)),
            LdaKind::Biaz => Algo::Biaz(Biaz::new(config.biaz_lower, config.biaz_upper)),
            LdaKind::MBiaz => Algo::MBiaz(Biaz::new(config.biaz_lower, config.mbiaz_upper)),
            LdaKind::ZigZag => {
                Algo::ZigZag(ZigZag::new(config.zigzag_gain, config.zigzag_dev_factors))
            }
            LdaKind::Zbs => Algo::Zbs(Zbs::new(&config)),
        };
        Self {
            tracker: Tracker::new(),
            algo,
        }
    }

    /// The algorithm this LDA runs.
    pub fn kind(&self) -> LdaKind {
        match self.algo {
            Algo::Spike(_) => LdaKind::Spike,
            Algo::Biaz(_) => LdaKind::Biaz,
            Algo::MBiaz(_) => LdaKind::MBiaz,
            Algo::ZigZag(_) => LdaKind::ZigZag,
            Algo::Zbs(_) => LdaKind::Zbs,
        }
    }

    /// Feeds one arrival; returns `Some((class, n_missing))` when it closes a gap, `None`
    /// otherwise (in order, duplicate, or late/reordered packet). A duplicate changes
    /// nothing; a late packet's ROTT still updates the statistics. A first arrival numbered
    /// k > 0 closes the gap of the k packets before it (senders number from 0).
    pub fn on_arrival(&mut self, arrival: Arrival) -> Option<(LossClass, u64)> {
        let step = self.tracker.observe(arrival.seq, arrival.at)?;
        let rott = arrival.rott();
        let t_min = self.tracker.t_min();
        match &mut self.algo {
            Algo::Spike(s) => s.observe(rott),
            Algo::Biaz(_) | Algo::MBiaz(_) => {}
            Algo::ZigZag(z) => z.observe(rott),
            Algo::Zbs(z) => z.observe(rott, step, t_min),
        }
        let (missing, t_i) = match step {
            Step::Advance { missing, t_i } => (missing, t_i),
            // Senders number their packets from 0: a first arrival numbered k closes a gap of the
            // k before it, with no inter-arrival time (nothing arrived before it).
            Step::First => (arrival.seq, f64::NAN),
            Step::Late => return None,
        };
        if missing == 0 {
            return None;
        }
        // Each algorithm decides from its own state (see the type's docs for before it exists).
        let class = match &self.algo {
            Algo::Spike(s) => s.classify(),
            Algo::Biaz(b) | Algo::MBiaz(b) => match t_min {
                Some(t_min) => b.classify(missing, t_i, t_min),
                None => LossClass::Congestion,
            },
            Algo::ZigZag(z) => z.classify(rott, missing),
            Algo::Zbs(z) => z.classify(rott, missing, t_i, t_min),
        };
        Some((class, missing))
    }

    /// Whether a Spike-based state is in its spike state: Spike's, or ZBS's while ZBS is
    /// using Spike (for the last arrival's ROTT). Always false for the other algorithms.
    pub fn in_spike(&self) -> bool {
        match &self.algo {
            Algo::Spike(s) => s.in_spike(),
            Algo::Zbs(z) => z.in_spike(),
            Algo::Biaz(_) | Algo::MBiaz(_) | Algo::ZigZag(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use fairstream_core::{Instant, SplitMix64};

    use super::testing::{MS, at};
    use super::*;

    use LossClass::{Congestion, Wireless};

    #[test]
    fn kind_names_round_trip() {
        let names: Vec<_> = LdaKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["spike", "biaz", "mbiaz", "zigzag", "zbs"]);
        for kind in LdaKind::ALL {
            assert_eq!(LdaKind::from_name(kind.name()), Some(kind));
            assert_eq!(Lda::new(LdaConfig::with_kind(kind)).kind(), kind);
        }
        assert_eq!(LdaKind::from_name("Spike"), None);
        assert_eq!(LdaKind::from_name(""), None);
        assert_eq!(LdaKind::default(), LdaKind::Spike);
    }

    #[test]
    fn defaults_are_the_spec_constants() {
        let c = LdaConfig::default();
        assert_eq!(c.kind, LdaKind::Spike);
        assert_eq!((c.spike.alpha, c.spike.beta), (0.5, 1.0 / 3.0));
        assert_eq!(c.zigzag_gain, 0.03125);
        assert_eq!(c.zigzag_dev_factors, [1.0, 0.5, 0.0, 0.5]);
        assert_eq!(
            (c.biaz_lower, c.biaz_upper, c.mbiaz_upper),
            (1.0, 2.0, 1.25)
        );
        assert_eq!(c.zbs_spike_margin, 0.05);
        assert_eq!(
            (c.zbs_narr_low, c.zbs_narr_mid, c.zbs_narr_high),
            (0.875, 1.5, 2.0)
        );
        assert_eq!(c.zbs_avg_gain, 0.125);
    }

    #[test]
    fn rott_is_signed_and_exact() {
        let late = Instant::from_nanos(u64::MAX);
        let a = Arrival {
            seq: 0,
            at: late,
            sent: Instant::from_nanos(u64::MAX - 1_500),
        };
        assert_eq!(a.rott(), 1.5e-6);
        let b = Arrival {
            seq: 0,
            at: Instant::from_nanos(1_000),
            sent: Instant::from_nanos(3_000),
        };
        assert_eq!(b.rott(), -2e-6);
    }

    #[test]
    fn before_t_min_each_kind_decides_from_its_own_state() {
        // Packet 0 at ROTT 50 ms, then packet 2 (1 lost) at 40 ms: no T_min yet (no two
        // consecutive packets). Spike (ROTT at its minimum: no spike) and ZigZag (40 ms below
        // the mean the first packet set, deviation 0) say wireless from their own state; Biaz
        // and mBiaz need T_min and say congestion; ZBS, with no T_min, hands it to ZigZag.
        let expected = |kind: LdaKind| match kind {
            LdaKind::Biaz | LdaKind::MBiaz => Congestion,
            LdaKind::Spike | LdaKind::ZigZag | LdaKind::Zbs => Wireless,
        };
        for kind in LdaKind::ALL {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            assert_eq!(lda.on_arrival(at(0, 0, 50 * MS)), None);
            assert_eq!(
                lda.on_arrival(at(2, 20 * MS, 40 * MS)),
                Some((expected(kind), 1)),
                "{kind:?}"
            );
            // In order: T_min = 10 ms.
            assert_eq!(lda.on_arrival(at(3, 30 * MS, 40 * MS)), None);
            // ROTT at a new minimum, T_i = 21 ms for n = 1: wireless for every algorithm
            // (inside both Biaz windows; ZBS picks Spike, the ROTT being at its minimum).
            assert_eq!(
                lda.on_arrival(at(5, 51 * MS, 30 * MS)),
                Some((Wireless, 1)),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn packets_lost_before_the_first_arrival_are_classified_by_each_kinds_state() {
        // Packets 0, 1, 2 lost; packet 3 is the first to arrive. Spike starts normal and a
        // single ROTT is no spike: wireless; ZigZag's mean is that ROTT, not above it:
        // congestion; Biaz and mBiaz have no T_min: congestion; ZBS hands it to ZigZag.
        for kind in LdaKind::ALL {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            let want = if kind == LdaKind::Spike {
                Wireless
            } else {
                Congestion
            };
            assert_eq!(
                lda.on_arrival(at(3, 0, 50 * MS)),
                Some((want, 3)),
                "{kind:?}"
            );
        }
        // A first arrival numbered 0 closes nothing.
        let mut lda = Lda::new(LdaConfig::default());
        assert_eq!(lda.on_arrival(at(0, 0, 50 * MS)), None);
    }

    #[test]
    fn before_t_min_a_rising_rott_is_congestion_for_the_delay_based_kinds() {
        // Packet 2 closes the gap 30 ms later in one-way delay: a queue builds. Spike (above
        // B_start of [50, 80] ms), ZigZag (above the mean) and so ZBS say congestion.
        for kind in [LdaKind::Spike, LdaKind::ZigZag, LdaKind::Zbs] {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            lda.on_arrival(at(0, 0, 50 * MS));
            assert_eq!(
                lda.on_arrival(at(2, 20 * MS, 80 * MS)),
                Some((Congestion, 1)),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn gaps_alone_never_give_a_t_min() {
        for kind in [LdaKind::Biaz, LdaKind::MBiaz] {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            lda.on_arrival(at(0, 0, 50 * MS));
            for k in 1..20 {
                let closing = at(2 * k, 20 * k * MS, 40 * MS);
                assert_eq!(lda.on_arrival(closing), Some((Congestion, 1)), "{kind:?}");
            }
        }
    }

    #[test]
    fn late_and_duplicate_arrivals_are_not_episodes() {
        for kind in LdaKind::ALL {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            for seq in 0..3 {
                assert_eq!(lda.on_arrival(at(seq, seq * 10 * MS, 50 * MS)), None);
            }
            assert_eq!(
                lda.on_arrival(at(5, 50 * MS, 50 * MS)).map(|r| r.1),
                Some(2)
            );
            for seq in [3, 3, 5, 2, 0, 4, 4] {
                assert_eq!(lda.on_arrival(at(seq, 60 * MS, 50 * MS)), None, "{kind:?}");
            }
            assert_eq!(lda.on_arrival(at(6, 70 * MS, 50 * MS)), None);
            assert_eq!(
                lda.on_arrival(at(8, 90 * MS, 50 * MS)).map(|r| r.1),
                Some(1)
            );
        }
    }

    #[test]
    fn t_i_runs_from_the_highest_packet_not_from_late_ones() {
        let mut lda = Lda::new(LdaConfig::with_kind(LdaKind::Biaz));
        lda.on_arrival(at(0, 0, 0));
        lda.on_arrival(at(1, 10 * MS, 0));
        assert_eq!(lda.on_arrival(at(3, 30 * MS, 0)), Some((Wireless, 1)));
        assert_eq!(lda.on_arrival(at(2, 45 * MS, 0)), None);
        // T_i = 52 − 30 = 22 ms: inside [20, 30) ms. From the late packet it would be 7 ms.
        assert_eq!(lda.on_arrival(at(5, 52 * MS, 0)), Some((Wireless, 1)));
    }

    #[test]
    fn late_packets_feed_the_statistics_and_duplicates_do_not() {
        let spike = || Lda::new(LdaConfig::with_kind(LdaKind::Spike));
        let mut lda = spike();
        lda.on_arrival(at(0, 0, 10 * MS));
        lda.on_arrival(at(1, 10 * MS, 10 * MS));
        lda.on_arrival(at(3, 30 * MS, 10 * MS));
        assert!(!lda.in_spike());
        assert_eq!(lda.on_arrival(at(2, 35 * MS, 30 * MS)), None);
        assert!(
            lda.in_spike(),
            "the late packet's 30 ms ROTT starts a spike"
        );

        let mut lda = spike();
        lda.on_arrival(at(0, 0, 10 * MS));
        lda.on_arrival(at(1, 10 * MS, 20 * MS));
        lda.on_arrival(at(2, 20 * MS, 10 * MS));
        assert!(!lda.in_spike());
        assert_eq!(lda.on_arrival(at(2, 25 * MS, 30 * MS)), None);
        assert!(!lda.in_spike(), "a duplicate's ROTT is not a sample");
        // Had it counted, the range would be [10, 30] ms and 18 ms below B_start (20 ms).
        assert_eq!(
            lda.on_arrival(at(4, 40 * MS, 18 * MS)),
            Some((Congestion, 1))
        );
    }

    #[test]
    fn a_zero_t_min_makes_the_timing_algorithms_say_congestion() {
        for kind in [LdaKind::Biaz, LdaKind::MBiaz] {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            lda.on_arrival(at(0, 10 * MS, 50 * MS));
            lda.on_arrival(at(1, 10 * MS, 50 * MS));
            for t_i in [0, 1, 10 * MS, 1_000 * MS] {
                let closing = at(3, 10 * MS + t_i, 40 * MS);
                let mut probe = lda.clone();
                assert_eq!(probe.on_arrival(closing), Some((Congestion, 1)), "{kind:?}");
            }
        }
        // Spike does not use T_min: ROTT at its minimum is wireless. ZBS cannot read the path
        // without a positive T_min and hands the decision to ZigZag: 40 ms is well below the
        // 50 ms mean, wireless.
        for kind in [LdaKind::Spike, LdaKind::Zbs] {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            lda.on_arrival(at(0, 10 * MS, 50 * MS));
            lda.on_arrival(at(1, 10 * MS, 50 * MS));
            assert_eq!(
                lda.on_arrival(at(3, 20 * MS, 40 * MS)),
                Some((Wireless, 1)),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn in_spike_is_false_for_algorithms_without_a_spike_state() {
        for kind in LdaKind::ALL {
            let mut lda = Lda::new(LdaConfig::with_kind(kind));
            lda.on_arrival(at(0, 0, 10 * MS));
            lda.on_arrival(at(1, 10 * MS, 10 * MS));
            lda.on_arrival(at(2, 20 * MS, 40 * MS));
            // ZBS at start-up reads as ambiguous (ZigZag), so not using Spike.
            assert_eq!(lda.in_spike(), kind == LdaKind::Spike, "{kind:?}");
        }
    }

    /// The next sequence number after the highest so far: mostly in order or a short gap;
    /// sometimes late, duplicate, far ahead or anywhere; in runs `to_the_top`, sometimes at
    /// the very top of the range.
    fn next_seq(rng: &mut SplitMix64, highest: u64, to_the_top: bool) -> u64 {
        match rng.next_u64() % 16 {
            0 => highest.saturating_sub(rng.next_u64() % 200),
            1 => highest.saturating_add(rng.next_u64() % 1_000),
            2 if to_the_top => u64::MAX - rng.next_u64() % 4,
            3 => rng.next_u64(),
            _ => highest.saturating_add(rng.next_u64() % 3),
        }
    }

    /// The next time in nanoseconds: mostly forwards by up to 20 ms; sometimes backwards,
    /// zero, the top of the range or anywhere.
    fn next_time(rng: &mut SplitMix64, t: u64) -> u64 {
        match rng.next_u64() % 16 {
            0 => t.saturating_sub(rng.next_u64() % (50 * MS)),
            1 => 0,
            2 => u64::MAX - rng.next_u64() % 4,
            3 => rng.next_u64(),
            _ => t.saturating_add(rng.next_u64() % (20 * MS)),
        }
    }

    #[test]
    fn random_arrivals_never_panic_and_gaps_match_a_reference() {
        let weird = [
            LdaConfig::default(),
            LdaConfig {
                spike: SpikeThresholds {
                    alpha: f64::NAN,
                    beta: f64::INFINITY,
                },
                zigzag_gain: f64::NAN,
                zigzag_dev_factors: [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -1.0],
                biaz_lower: f64::NAN,
                biaz_upper: f64::INFINITY,
                mbiaz_upper: -1.0,
                zbs_spike_margin: f64::INFINITY,
                zbs_narr_low: f64::NAN,
                zbs_narr_mid: 0.0,
                zbs_narr_high: -1.0,
                zbs_avg_gain: 2.0,
                ..LdaConfig::default()
            },
        ];
        let mut rng = SplitMix64::new(0x1da);
        let mut episodes = 0;
        for config in weird {
            for kind in LdaKind::ALL {
                for run in 0..20 {
                    let mut lda = Lda::new(LdaConfig { kind, ..config });
                    // The reference: highest sequence number, its arrival, and whether an
                    // in-order pair has arrived forwards in time.
                    let mut highest: Option<(u64, u64)> = None;
                    let mut has_t_min = false;
                    let mut t = rng.next_u64() % 1_000_000;
                    let start = rng.next_u64() % 1_000;
                    for _ in 0..300 {
                        let top = highest.map_or(start, |(h, _)| h);
                        let seq = next_seq(&mut rng, top, run % 4 == 0);
                        t = next_time(&mut rng, t);
                        // One-way delays up to 100 ms, or anything at all.
                        let sent = match rng.next_u64() % 8 {
                            0 => next_time(&mut rng, t),
                            _ => t.saturating_sub(rng.next_u64() % (100 * MS)),
                        };
                        let arrival = Arrival {
                            seq,
                            at: Instant::from_nanos(t),
                            sent: Instant::from_nanos(sent),
                        };
                        let got = lda.on_arrival(arrival);
                        assert_eq!(lda.kind(), kind);
                        match highest {
                            None => {
                                assert_eq!(got.map(|g| g.1), (seq > 0).then_some(seq));
                                highest = Some((seq, t));
                            }
                            Some((h, _)) if seq <= h => assert_eq!(got, None),
                            Some((h, h_at)) => {
                                let missing = seq - h - 1;
                                if missing == 0 {
                                    assert_eq!(got, None);
                                    has_t_min |= t >= h_at;
                                } else {
                                    let (class, n) = got.expect("a gap is an episode");
                                    assert_eq!(n, missing);
                                    if !has_t_min && matches!(kind, LdaKind::Biaz | LdaKind::MBiaz)
                                    {
                                        assert_eq!(class, Congestion);
                                    }
                                    episodes += 1;
                                }
                                highest = Some((seq, t));
                            }
                        }
                    }
                }
            }
        }
        let runs = 2 * LdaKind::ALL.len() * 20;
        assert!(episodes > 50 * runs, "the generator makes gaps: {episodes}");
    }
}
