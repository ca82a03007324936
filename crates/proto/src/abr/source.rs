//! The ABR source end system (TM 4.0 §5.10.4, simplified as in PROTOCOLS.md §7.2) and the
//! destination's turn-around.
//!
//! The source sends cells at its allowed cell rate (ACR), one every 53·8/ACR seconds. Its first
//! cell is a forward RM cell (FRM); after that an in-rate FRM replaces a data cell when `nrm − 1`
//! cells have gone since the last FRM, or at least `mrm` cells and `trm` of time have. Before an
//! FRM leaves, ACR falls back to ICR if the source has been quiet longer than ADTF (the ADTF rule),
//! and by ACR·CDF (not below MCR) if CRM FRMs have gone since the last backward RM cell (BRM)
//! came back. A BRM with CI set lowers ACR by ACR·RDF; without CI and NI it raises ACR by RIF·PCR
//! up to PCR; then ACR is clamped to the BRM's ER and floored at MCR.
//!
//! Every constant is a field of [`AbrParams`] with §7.2's default; the defaults tagged [paper?]
//! there are not verified in a primary source (see `docs/scenarios.md` once ABR is wired).

use fairstream_core::{Bitrate, Duration, Instant};

use super::cell::{CELL_SIZE, RmCell, RmDirection};

/// The parameters of an ABR connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrParams {
    /// Peak cell rate.
    pub pcr: Bitrate,
    /// Minimum cell rate (default 0 [paper?]).
    pub mcr: Bitrate,
    /// Initial cell rate (default PCR [paper?]).
    pub icr: Bitrate,
    /// Rate increase factor, in (0, 1] (default 1/16 [paper?]).
    pub rif: f64,
    /// Rate decrease factor, in (0, 1] (default 1/16 [paper?]).
    pub rdf: f64,
    /// Most cells between FRM cells, at least 2 (default 32 [paper?]; paper 003 Section 3.1).
    pub nrm: u32,
    /// Fewest cells between FRM cells when `trm` has passed (default 2 [paper?]).
    pub mrm: u32,
    /// Most time between FRM cells (default 100 ms [paper?]).
    pub trm: Duration,
    /// ACR decrease time factor: quiet longer than this resets ACR to ICR (default 0.5 s [paper?]).
    pub adtf: Duration,
    /// Cutoff decrease factor, in [0, 1] (default 1/16 [paper?]).
    pub cdf: f64,
    /// FRM cells without a BRM before CDF applies (CRM = ⌈TBE/Nrm⌉; default from TBE =
    /// 16 777 215 cells [paper?]).
    pub crm: u32,
}

impl Default for AbrParams {
    fn default() -> Self {
        let nrm = 32;
        Self {
            pcr: Bitrate::mbps(10),
            mcr: Bitrate::ZERO,
            icr: Bitrate::mbps(10),
            rif: 1.0 / 16.0,
            rdf: 1.0 / 16.0,
            nrm,
            mrm: 2,
            trm: Duration::from_millis(100),
            adtf: Duration::from_millis(500),
            cdf: 1.0 / 16.0,
            crm: Self::crm_of(16_777_215, nrm),
        }
    }
}

/// Why a set of ABR parameters was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AbrParamsError {
    /// A factor outside its range.
    #[error("{name} = {value} is outside {range}")]
    Factor {
        /// `rif`, `rdf` or `cdf`.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The range allowed, as written in the error.
        range: &'static str,
    },
    /// Rates out of order.
    #[error("{what}")]
    Rates {
        /// The parameter at fault: `pcr`, `icr` or `mcr`.
        name: &'static str,
        /// Which order is broken.
        what: &'static str,
    },
    /// Nrm below 2 or Mrm not below Nrm.
    #[error("{what}")]
    Counts {
        /// The parameter at fault: `nrm`, `mrm` or `crm`.
        name: &'static str,
        /// Which bound is broken.
        what: &'static str,
    },
}

impl AbrParamsError {
    /// The parameter at fault, as a scenario names it.
    pub fn parameter(&self) -> &'static str {
        match self {
            Self::Factor { name, .. } | Self::Rates { name, .. } | Self::Counts { name, .. } => {
                name
            }
        }
    }
}

impl AbrParams {
    /// CRM = ⌈TBE / Nrm⌉.
    pub fn crm_of(tbe: u64, nrm: u32) -> u32 {
        u32::try_from(tbe.div_ceil(u64::from(nrm.max(1)))).unwrap_or(u32::MAX)
    }

    /// Checks the parameters: RIF and RDF in (0, 1], CDF in [0, 1], 0 ≤ MCR ≤ ICR ≤ PCR, PCR above
    /// 0, Nrm at least 2, 1 ≤ Mrm < Nrm, CRM at least 1.
    pub fn validate(&self) -> Result<(), AbrParamsError> {
        for (name, value) in [("rif", self.rif), ("rdf", self.rdf)] {
            if !(value > 0.0 && value <= 1.0) {
                return Err(AbrParamsError::Factor {
                    name,
                    value,
                    range: "(0, 1]",
                });
            }
        }
        if !(0.0..=1.0).contains(&self.cdf) {
            return Err(AbrParamsError::Factor {
                name: "cdf",
                value: self.cdf,
                range: "[0, 1]",
            });
        }
        if self.pcr.is_zero() {
            return Err(AbrParamsError::Rates {
                name: "pcr",
                what: "pcr is 0: the peak cell rate must be above 0",
            });
        }
        if self.icr > self.pcr {
            return Err(AbrParamsError::Rates {
                name: "icr",
                what: "icr is above pcr: the initial cell rate must be at most the peak cell rate",
            });
        }
        if self.mcr > self.icr {
            return Err(AbrParamsError::Rates {
                name: "mcr",
                what: "mcr is above icr: the minimum cell rate must be at most the initial cell rate",
            });
        }
        if self.nrm < 2 {
            return Err(AbrParamsError::Counts {
                name: "nrm",
                what: "nrm is below 2: at least one data cell must go between forward RM cells",
            });
        }
        if self.mrm == 0 || self.mrm >= self.nrm {
            return Err(AbrParamsError::Counts {
                name: "mrm",
                what: "mrm must be at least 1 and below nrm",
            });
        }
        if self.crm == 0 {
            return Err(AbrParamsError::Counts {
                name: "crm",
                what: "crm must be at least 1",
            });
        }
        Ok(())
    }
}

/// What the source sends in its next cell slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellKind {
    /// A forward RM cell with these fields.
    Rm(RmCell),
    /// A data cell.
    Data,
}

/// The ABR source of one virtual circuit.
#[derive(Clone, Debug)]
pub struct AbrSource {
    params: AbrParams,
    acr: Bitrate,
    /// Cells sent since the last FRM (the FRM itself not counted); `None` before the first.
    since_frm: Option<u32>,
    last_frm: Instant,
    frm_without_brm: u32,
}

impl AbrSource {
    /// A source starting at ICR. The parameters should have passed [`AbrParams::validate`].
    pub fn new(params: AbrParams) -> Self {
        Self {
            acr: params.icr.max(params.mcr),
            params,
            since_frm: None,
            last_frm: Instant::ZERO,
            frm_without_brm: 0,
        }
    }

    /// The allowed cell rate.
    pub fn acr(&self) -> Bitrate {
        self.acr
    }

    /// The parameters.
    pub fn params(&self) -> &AbrParams {
        &self.params
    }

    /// Time between cells at the current ACR.
    pub fn cell_interval(&self) -> Duration {
        self.acr.transmit_time(CELL_SIZE)
    }

    /// The source sends a cell at `now`: an FRM (with the rules that precede one applied) or a
    /// data cell.
    pub fn next_cell(&mut self, now: Instant) -> CellKind {
        let p = self.params;
        let frm_due = match self.since_frm {
            None => true,
            Some(n) => {
                n + 1 >= p.nrm || (n >= p.mrm && now.saturating_since(self.last_frm) >= p.trm)
            }
        };
        if !frm_due {
            self.since_frm = self.since_frm.map(|n| n + 1);
            return CellKind::Data;
        }
        if self.since_frm.is_some()
            && self.acr > p.icr
            && now.saturating_since(self.last_frm) > p.adtf
        {
            self.acr = p.icr;
        }
        if self.frm_without_brm >= p.crm {
            let cut = self.acr.as_bps_f64() * (1.0 - p.cdf);
            self.acr = Bitrate::from_bps_f64(cut).max(p.mcr);
        }
        self.since_frm = Some(0);
        self.last_frm = now;
        self.frm_without_brm = self.frm_without_brm.saturating_add(1);
        CellKind::Rm(RmCell {
            dir: RmDirection::Forward,
            ci: false,
            ni: false,
            er: p.pcr,
            ccr: self.acr,
            mcr: p.mcr,
        })
    }

    /// A backward RM cell came back.
    pub fn on_brm(&mut self, rm: &RmCell) {
        let p = self.params;
        self.frm_without_brm = 0;
        let acr = self.acr.as_bps_f64();
        let mut next = if rm.ci {
            acr - acr * p.rdf
        } else if !rm.ni {
            (acr + p.rif * p.pcr.as_bps_f64()).min(p.pcr.as_bps_f64())
        } else {
            acr
        };
        next = next.min(rm.er.as_bps_f64()).max(p.mcr.as_bps_f64());
        self.acr = Bitrate::from_bps_f64(next);
    }
}

/// The destination turns a forward RM cell around: DIR becomes backward, and CI is set when the
/// last data cell it received carried EFCI.
pub fn turn_around(frm: RmCell, last_efci: bool) -> RmCell {
    RmCell {
        dir: RmDirection::Backward,
        ci: frm.ci || last_efci,
        ..frm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(n)
    }

    fn brm(er: Bitrate, ci: bool, ni: bool) -> RmCell {
        RmCell {
            dir: RmDirection::Backward,
            ci,
            ni,
            er,
            ccr: Bitrate::ZERO,
            mcr: Bitrate::ZERO,
        }
    }

    fn params() -> AbrParams {
        AbrParams {
            pcr: Bitrate::mbps(10),
            icr: Bitrate::kbps(56),
            mcr: Bitrate::kbps(56),
            ..AbrParams::default()
        }
    }

    #[test]
    fn the_first_cell_is_an_frm_and_then_one_in_nrm() {
        let mut s = AbrSource::new(params());
        let kinds: Vec<bool> = (0..70)
            .map(|_| matches!(s.next_cell(ms(0)), CellKind::Rm(_)))
            .collect();
        let frms: Vec<usize> = (0..70).filter(|&i| kinds[i]).collect();
        // Cell 0 is an FRM, then every 32nd: 31 data cells between.
        assert_eq!(frms, vec![0, 32, 64]);
        let CellKind::Rm(rm) = AbrSource::new(params()).next_cell(ms(0)) else {
            panic!("not an FRM");
        };
        assert_eq!(rm.dir, RmDirection::Forward);
        assert_eq!(
            (rm.ccr, rm.er, rm.mcr),
            (Bitrate::kbps(56), Bitrate::mbps(10), Bitrate::kbps(56))
        );
        assert!(!rm.ci && !rm.ni);
    }

    #[test]
    fn after_trm_an_frm_goes_once_mrm_cells_have() {
        let mut s = AbrSource::new(params());
        assert!(matches!(s.next_cell(ms(0)), CellKind::Rm(_)));
        // One cell since the FRM: not yet Mrm = 2, even long after Trm.
        assert_eq!(s.next_cell(ms(150)), CellKind::Data);
        assert_eq!(s.next_cell(ms(150)), CellKind::Data);
        // Two cells since, and Trm = 100 ms passed: an FRM.
        assert!(matches!(s.next_cell(ms(150)), CellKind::Rm(_)));
        // Two cells since, but only 50 ms: data.
        s.next_cell(ms(160));
        s.next_cell(ms(170));
        assert_eq!(s.next_cell(ms(200)), CellKind::Data);
    }

    #[test]
    fn brm_processing_increases_by_rif_decreases_by_rdf_and_clamps() {
        let mut s = AbrSource::new(params());
        s.next_cell(ms(0));
        // No CI, no NI: + RIF·PCR = 625 kbit/s.
        s.on_brm(&brm(Bitrate::mbps(10), false, false));
        assert_eq!(s.acr(), Bitrate::kbps(56 + 625));
        // NI: no increase.
        s.on_brm(&brm(Bitrate::mbps(10), false, true));
        assert_eq!(s.acr(), Bitrate::kbps(681));
        // CI: − ACR·RDF.
        s.on_brm(&brm(Bitrate::mbps(10), true, false));
        assert_eq!(s.acr(), Bitrate::from_bps_f64(681_000.0 * 15.0 / 16.0));
        // ER below: clamped to ER.
        s.on_brm(&brm(Bitrate::kbps(300), false, false));
        assert_eq!(s.acr(), Bitrate::kbps(300));
        // ER below MCR: floored at MCR.
        s.on_brm(&brm(Bitrate::kbps(10), false, false));
        assert_eq!(s.acr(), Bitrate::kbps(56));
        // Never above PCR.
        for _ in 0..40 {
            s.on_brm(&brm(Bitrate::mbps(100), false, false));
        }
        assert_eq!(s.acr(), Bitrate::mbps(10));
    }

    #[test]
    fn adtf_resets_a_quiet_source_to_icr_before_its_next_frm() {
        let mut s = AbrSource::new(params());
        s.next_cell(ms(0));
        s.on_brm(&brm(Bitrate::mbps(2), false, false));
        assert_eq!(s.acr(), Bitrate::kbps(681));
        s.next_cell(ms(1));
        s.next_cell(ms(2));
        // Exactly ADTF (0.5 s) after the last FRM: not longer, ACR kept.
        assert!(matches!(s.next_cell(ms(500)), CellKind::Rm(rm) if rm.ccr == Bitrate::kbps(681)));
        s.next_cell(ms(501));
        s.next_cell(ms(502));
        // More than ADTF after it: back to ICR, and the FRM carries it.
        assert!(matches!(s.next_cell(ms(1001)), CellKind::Rm(rm) if rm.ccr == Bitrate::kbps(56)));
        assert_eq!(s.acr(), Bitrate::kbps(56));
    }

    #[test]
    fn crm_frms_without_a_brm_cut_acr_by_cdf_down_to_mcr() {
        let p = AbrParams {
            crm: 2,
            icr: Bitrate::mbps(1),
            mcr: Bitrate::kbps(900),
            ..params()
        };
        let mut s = AbrSource::new(p);
        let mut frms = Vec::new();
        for _ in 0..(32 * 4) {
            if let CellKind::Rm(rm) = s.next_cell(ms(0)) {
                frms.push(rm.ccr);
            }
        }
        // FRMs 1 and 2 at ICR; before the 3rd, 2 = CRM have gone without a BRM: × 15/16; the
        // 4th again, but not below MCR.
        assert_eq!(
            frms,
            vec![
                Bitrate::mbps(1),
                Bitrate::mbps(1),
                Bitrate::bps(937_500),
                Bitrate::kbps(900)
            ]
        );
        // A BRM resets the count.
        s.on_brm(&brm(Bitrate::mbps(1), false, true));
        for _ in 0..32 {
            s.next_cell(ms(0));
        }
        assert_eq!(s.acr(), Bitrate::kbps(900));
    }

    #[test]
    fn the_destination_turns_frms_around_with_ci_from_efci() {
        let frm = RmCell {
            dir: RmDirection::Forward,
            ci: false,
            ni: false,
            er: Bitrate::mbps(3),
            ccr: Bitrate::mbps(1),
            mcr: Bitrate::ZERO,
        };
        let b = turn_around(frm, false);
        assert_eq!(
            (b.dir, b.ci, b.er, b.ccr),
            (RmDirection::Backward, false, frm.er, frm.ccr)
        );
        assert!(turn_around(frm, true).ci);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let ok = params();
        assert_eq!(ok.validate(), Ok(()));
        assert!(AbrParams { rif: 0.0, ..ok }.validate().is_err());
        assert!(AbrParams { rif: 1.5, ..ok }.validate().is_err());
        assert!(AbrParams { rif: 1.0, ..ok }.validate().is_ok());
        assert!(
            AbrParams {
                icr: Bitrate::mbps(20),
                ..ok
            }
            .validate()
            .is_err()
        );
        assert!(AbrParams { nrm: 1, ..ok }.validate().is_err());
        assert!(
            AbrParams {
                mcr: Bitrate::mbps(1),
                ..ok
            }
            .validate()
            .is_err()
        );
        assert_eq!(AbrParams::default().crm, 524_288);
    }
}
