//! ERICA, the explicit-rate computation of one switch output port (PROTOCOLS.md §7.1; Jain et
//! al., ATM Forum/96-1172), basic and complete variants.
//!
//! The port counts the ABR cells that arrive for it. An averaging interval ends after
//! `interval` of time or `interval_cells` cells, whichever comes first; then
//! input rate = cells / interval length, Target = U · capacity, z = input rate / Target,
//! FairShare = Target / N (N the VCs that sent a cell in the interval, at least 1), and the
//! complete variant's MaxAllocPrevious takes MaxAllocCurrent, which restarts at FairShare.
//! A forward RM cell records its VC's CCR; an RM cell the port marks gets
//! ER = min(ER, min(Target, max(FairShare, CCR/z))) in the basic variant, while the complete
//! variant uses max(MaxAllocPrevious, CCR/z) when z ≤ 1 + δ, keeps the largest ER it gave in
//! MaxAllocCurrent, and gives no more than FairShare to a VC whose CCR is below it. A port
//! never raises an ER set downstream. Before the first interval ends ER = Target; a VC with no
//! CCR yet, or a z of 0, gets VCShare = Target (so the VC gets at least FairShare).
//!
//! Per-VC state is a table indexed by VC number, grown when a new VC appears: nothing is
//! allocated per cell in steady state.

use fairstream_core::{Bitrate, Duration, Instant};

use super::cell::RmCell;

/// Which ERICA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EricaVariant {
    /// ER = max(FairShare, VCShare).
    Basic,
    /// With MaxAllocPrevious below the overload band and the FairShare cap for slow VCs.
    #[default]
    Complete,
}

/// ERICA's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaParams {
    /// Target utilisation U of the ABR capacity (default 0.9 [paper?]).
    pub target_utilisation: f64,
    /// Longest averaging interval (default 1 ms [paper?]).
    pub interval: Duration,
    /// Most ABR cells in an averaging interval (default 100 [paper?]).
    pub interval_cells: u32,
    /// Overload band δ of the complete variant (default 0.1 [paper?]).
    pub delta: f64,
    /// Basic or complete.
    pub variant: EricaVariant,
}

impl EricaVariant {
    /// The scenario keyword: `basic` or `complete`.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Basic => "basic",
            Self::Complete => "complete",
        }
    }
}

impl Default for EricaParams {
    fn default() -> Self {
        Self {
            target_utilisation: 0.9,
            interval: Duration::from_millis(1),
            interval_cells: 100,
            delta: 0.1,
            variant: EricaVariant::Complete,
        }
    }
}

/// The per-VC entry: its latest CCR and whether it sent in this interval.
#[derive(Clone, Copy, Debug, Default)]
struct Vc {
    ccr: Option<f64>,
    active: bool,
}

/// ERICA at one output port of capacity `capacity` (the ABR capacity: no CBR/VBR traffic).
#[derive(Clone, Debug)]
pub struct Erica {
    params: EricaParams,
    target: f64,
    cells: u32,
    start: Instant,
    vcs: Vec<Vc>,
    active: u32,
    last_active: u32,
    z: Option<f64>,
    fair_share: f64,
    max_alloc_previous: f64,
    max_alloc_current: f64,
}

impl Erica {
    /// A port of `capacity`, its first interval starting at `start`.
    pub fn new(params: EricaParams, capacity: Bitrate, start: Instant) -> Self {
        let target = params.target_utilisation * capacity.as_bps_f64();
        Self {
            params,
            target,
            cells: 0,
            start,
            vcs: Vec::new(),
            active: 0,
            last_active: 0,
            z: None,
            fair_share: target,
            max_alloc_previous: target,
            max_alloc_current: target,
        }
    }

    /// The target rate U · capacity.
    pub fn target(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.target)
    }

    /// The overload factor of the last interval (`None` before the first ends; infinite when
    /// the target is 0).
    pub fn z(&self) -> Option<f64> {
        self.z
    }

    /// The fair share of the last interval.
    pub fn fair_share(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.fair_share)
    }

    /// VCs that sent a cell in the last interval.
    pub fn active_vcs(&self) -> u32 {
        self.last_active
    }

    fn vc(&mut self, vc: u32) -> &mut Vc {
        let i = vc as usize;
        if i >= self.vcs.len() {
            self.vcs.resize(i + 1, Vc::default());
        }
        &mut self.vcs[i]
    }

    /// An ABR cell of `vc` arrived at the port at `now` (data or RM). Returns whether an
    /// averaging interval ended with it.
    pub fn on_cell(&mut self, now: Instant, vc: u32) -> bool {
        let entry = self.vc(vc);
        if !entry.active {
            entry.active = true;
            self.active += 1;
        }
        self.cells += 1;
        let elapsed = now.saturating_since(self.start);
        if self.cells >= self.params.interval_cells || elapsed >= self.params.interval {
            self.end_interval(now);
            return true;
        }
        false
    }

    fn end_interval(&mut self, now: Instant) {
        let secs = now.saturating_since(self.start).as_secs_f64();
        let bits = f64::from(self.cells) * super::cell::CELL_SIZE.as_bits() as f64;
        // An interval of no time (cells at one instant) measures nothing: keep the last z.
        if secs > 0.0 {
            let input = bits / secs;
            self.z = Some(if self.target > 0.0 {
                input / self.target
            } else {
                f64::INFINITY
            });
        }
        self.last_active = self.active;
        let n = self.active.max(1);
        self.fair_share = self.target / f64::from(n);
        self.max_alloc_previous = self.max_alloc_current;
        self.max_alloc_current = self.fair_share;
        self.cells = 0;
        self.active = 0;
        for vc in &mut self.vcs {
            vc.active = false;
        }
        self.start = now;
    }

    /// A forward RM cell of `vc` passed: remember its CCR.
    pub fn on_forward_rm(&mut self, vc: u32, rm: &RmCell) {
        self.vc(vc).ccr = Some(rm.ccr.as_bps_f64());
    }

    /// The explicit rate this port allows `vc` now.
    pub fn explicit_rate(&mut self, vc: u32) -> Bitrate {
        let Some(z) = self.z else {
            return self.target();
        };
        let ccr = self.vc(vc).ccr;
        let vc_share = match ccr {
            Some(c) if z > 0.0 => c / z,
            _ => self.target,
        };
        let er = match self.params.variant {
            EricaVariant::Basic => self.fair_share.max(vc_share),
            EricaVariant::Complete => {
                let mut er = if z > 1.0 + self.params.delta {
                    self.fair_share.max(vc_share)
                } else {
                    self.max_alloc_previous.max(vc_share)
                };
                self.max_alloc_current = self.max_alloc_current.max(er);
                if er > self.fair_share && ccr.unwrap_or(0.0) < self.fair_share {
                    er = self.fair_share;
                }
                er
            }
        };
        Bitrate::from_bps_f64(er.min(self.target))
    }

    /// Marks an RM cell of `vc`: its ER becomes the lower of its own and this port's.
    pub fn mark(&mut self, vc: u32, rm: &mut RmCell) {
        rm.er = rm.er.min(self.explicit_rate(vc));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abr::cell::RmDirection;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(n)
    }

    fn rm(ccr: Bitrate, er: Bitrate) -> RmCell {
        RmCell {
            dir: RmDirection::Forward,
            ci: false,
            ni: false,
            er,
            ccr,
            mcr: Bitrate::ZERO,
        }
    }

    /// A 10 Mbit/s port (target 9 Mbit/s) with 100 ms intervals, after one interval of `cells`
    /// cells from VCs 0 and 1 (it ends on time).
    fn port(variant: EricaVariant, cells: u32) -> Erica {
        let params = EricaParams {
            variant,
            interval: Duration::from_millis(100),
            interval_cells: 10_000,
            ..EricaParams::default()
        };
        let mut e = Erica::new(params, Bitrate::mbps(10), us(0));
        for k in 0..cells - 1 {
            let at =
                Instant::ZERO + Duration::from_nanos(u64::from(k) * 99_900_000 / u64::from(cells));
            assert!(!e.on_cell(at, k % 2));
        }
        assert!(e.on_cell(us(100_000), 1));
        e
    }

    #[test]
    fn before_the_first_interval_er_is_the_target() {
        let mut e = Erica::new(EricaParams::default(), Bitrate::mbps(10), us(0));
        assert_eq!(e.explicit_rate(3), Bitrate::mbps(9));
        let mut cell = rm(Bitrate::mbps(1), Bitrate::mbps(10));
        e.mark(3, &mut cell);
        assert_eq!(cell.er, Bitrate::mbps(9));
    }

    #[test]
    fn an_interval_ends_on_cells_or_time_and_measures_z_and_fair_share() {
        // 100 cells (the default count) in 0.5 ms: 84.8 Mbit/s of input, z = 84.8 / 9.
        let mut e = Erica::new(EricaParams::default(), Bitrate::mbps(10), us(0));
        for k in 0..99 {
            assert!(!e.on_cell(us(k * 5), (k % 3) as u32));
        }
        assert!(e.on_cell(us(500), 0));
        let z = e.z().unwrap();
        assert!((z - 100.0 * 424.0 / 0.0005 / 9e6).abs() < 1e-12, "{z}");
        assert_eq!(e.fair_share(), Bitrate::mbps(3));
        // 1 ms passes with one cell: the interval ends on time; one VC active.
        assert!(!e.on_cell(us(900), 2));
        assert!(e.on_cell(us(1500), 2));
        assert_eq!(e.fair_share(), Bitrate::mbps(9));
    }

    #[test]
    fn basic_er_is_the_larger_of_fair_share_and_vc_share_capped_at_target() {
        // 2359 cells in 100 ms: 10.002 Mbit/s of input, z = 1.111 (overload).
        let mut e = port(EricaVariant::Basic, 2359);
        let z = e.z().unwrap();
        assert!((z - 2359.0 * 424.0 / 0.1 / 9e6).abs() < 1e-9, "{z}");
        // FairShare 4.5 Mbit/s (2 VCs). VC 0 at 8 Mbit/s: VCShare = 8/z = 7.2 > 4.5.
        e.on_forward_rm(0, &rm(Bitrate::mbps(8), Bitrate::mbps(10)));
        assert_eq!(e.explicit_rate(0), Bitrate::from_bps_f64(8e6 / z));
        // VC 1 at 2 Mbit/s: VCShare 1.8 < FairShare: 4.5.
        e.on_forward_rm(1, &rm(Bitrate::mbps(2), Bitrate::mbps(10)));
        assert_eq!(e.explicit_rate(1), Bitrate::bps(4_500_000));
        // VC 0 at 20 Mbit/s: VCShare 18 is capped at Target 9.
        e.on_forward_rm(0, &rm(Bitrate::mbps(20), Bitrate::mbps(10)));
        assert_eq!(e.explicit_rate(0), Bitrate::mbps(9));
        // A VC with no CCR yet: VCShare = Target, capped.
        assert_eq!(e.explicit_rate(7), Bitrate::mbps(9));
    }

    #[test]
    fn er_is_never_raised() {
        let mut e = port(EricaVariant::Basic, 2359);
        e.on_forward_rm(1, &rm(Bitrate::mbps(2), Bitrate::mbps(10)));
        let mut cell = rm(Bitrate::mbps(2), Bitrate::mbps(1));
        e.mark(1, &mut cell);
        assert_eq!(
            cell.er,
            Bitrate::mbps(1),
            "a downstream ER of 1 Mbit/s stays"
        );
        let mut cell = rm(Bitrate::mbps(2), Bitrate::mbps(10));
        e.mark(1, &mut cell);
        assert_eq!(cell.er, Bitrate::bps(4_500_000));
    }

    #[test]
    fn complete_uses_max_alloc_previous_below_the_overload_band() {
        // 1500 cells in 100 ms: 6.36 Mbit/s, z = 0.707 (underload).
        let mut e = port(EricaVariant::Complete, 1500);
        let z = e.z().unwrap();
        assert!(z < 1.1);
        // MaxAllocPrevious is the first interval's MaxAllocCurrent: the initial Target, 9.
        // VC 0 at 5 Mbit/s: max(9, 5/z = 7.07) = 9, capped at Target 9.
        e.on_forward_rm(0, &rm(Bitrate::mbps(5), Bitrate::mbps(10)));
        assert_eq!(e.explicit_rate(0), Bitrate::mbps(9));
        // VC 1 at 1 Mbit/s, below FairShare 4.5: ER capped at FairShare.
        e.on_forward_rm(1, &rm(Bitrate::mbps(1), Bitrate::mbps(10)));
        assert_eq!(e.explicit_rate(1), Bitrate::bps(4_500_000));
        // The next interval: MaxAllocPrevious = the largest ER given (9), MaxAllocCurrent
        // restarts at the new FairShare.
        for k in 0..10 {
            e.on_cell(us(100_100 + k), 0);
        }
        assert!(e.on_cell(us(200_000), 0));
        // One VC active: FairShare 9; z small; VC 0 at 5: max(MaxAllocPrevious 9, 5/z) → 9.
        assert_eq!(e.fair_share(), Bitrate::mbps(9));
        assert_eq!(e.explicit_rate(0), Bitrate::mbps(9));
    }

    #[test]
    fn complete_above_the_band_is_basic() {
        let mut c = port(EricaVariant::Complete, 2359);
        let mut b = port(EricaVariant::Basic, 2359);
        for (vc, ccr) in [(0, 8), (1, 2)] {
            let cell = rm(Bitrate::mbps(ccr), Bitrate::mbps(10));
            c.on_forward_rm(vc, &cell);
            b.on_forward_rm(vc, &cell);
            assert_eq!(c.explicit_rate(vc), b.explicit_rate(vc), "vc {vc}");
        }
    }

    #[test]
    fn the_vc_table_grows_once_and_not_per_cell() {
        let mut e = Erica::new(EricaParams::default(), Bitrate::mbps(155), us(0));
        e.on_cell(us(0), 40);
        let cap = e.vcs.capacity();
        for k in 0..10_000 {
            e.on_cell(us(k), (k % 41) as u32);
        }
        assert_eq!(e.vcs.capacity(), cap);
    }
}
