//! A flow's `atm` key: `"none"` (packets as they are) or `"abr"`, which carries the flow's
//! packets on ATM ABR virtual circuits with the parameters of its `abr = { … }` table (TM 4.0
//! source parameters, PROTOCOLS.md §7.2, and the source buffer). ABR carries whatever
//! protocol, and transport, the flow has.

use fairstream_core::{Bitrate, DataSize, Duration};
use fairstream_proto::ProtocolConfig;
use fairstream_proto::abr::{AbrFlowConfig, AbrParams};
use toml::Value;
use toml::de::DeTable;

use crate::reader::{Result, Section};

/// The keys of a flow table this module reads.
pub(crate) const KEYS: &[&str] = &["atm", "abr"];

/// The keys of `abr = { … }`.
const ABR_KEYS: &[&str] = &[
    "pcr",
    "icr",
    "mcr",
    "rif",
    "rdf",
    "nrm",
    "mrm",
    "trm",
    "adtf",
    "cdf",
    "tbe",
    "source_buffer",
];

/// TM 4.0's default transient buffer exposure, cells (CRM = ⌈TBE / Nrm⌉) [paper?].
const DEFAULT_TBE: i64 = 16_777_215;

/// Wraps `config` in ABR virtual circuits if the flow says `atm = "abr"`.
pub(crate) fn read(f: &mut Section<'_, '_>, config: ProtocolConfig) -> Result<ProtocolConfig> {
    let atm = f.choice("atm", &["none", "abr"], "none")?;
    if atm != "abr" {
        if f.raw("abr").is_some() {
            return Err(f.error("abr", "applies only to a flow with atm = \"abr\""));
        }
        return Ok(config);
    }
    let empty = DeTable::new();
    let mut t = match f.opt_table("abr", ABR_KEYS)? {
        Some(t) => t,
        None => f.absent_table("abr", &empty, ABR_KEYS)?,
    };
    let base = AbrParams::default();
    let rate = |t: &mut Section<'_, '_>, key: &str, default: Bitrate| -> Result<Bitrate> {
        t.unit_or(key, default)
    };
    let pcr = rate(&mut t, "pcr", base.pcr)?;
    // ICR defaults to PCR (TM 4.0), whatever PCR the flow gives.
    let icr = rate(&mut t, "icr", pcr)?;
    let mcr = rate(&mut t, "mcr", base.mcr)?;
    let rif = t.float_or("rif", f64::MIN, f64::MAX, base.rif)?;
    let rdf = t.float_or("rdf", f64::MIN, f64::MAX, base.rdf)?;
    let cdf = t.float_or("cdf", f64::MIN, f64::MAX, base.cdf)?;
    let nrm = t.int_or("nrm", 0, i64::from(u32::MAX), i64::from(base.nrm))? as u32;
    let mrm = t.int_or("mrm", 0, i64::from(u32::MAX), i64::from(base.mrm))? as u32;
    let trm: Duration = t.unit_or("trm", base.trm)?;
    let adtf: Duration = t.unit_or("adtf", base.adtf)?;
    let tbe = t.int_or("tbe", 1, i64::MAX, DEFAULT_TBE)? as u64;
    let source_buffer: DataSize =
        t.unit_or("source_buffer", AbrFlowConfig::DEFAULT_SOURCE_BUFFER)?;
    let params = AbrParams {
        pcr,
        mcr,
        icr,
        rif,
        rdf,
        nrm,
        mrm,
        trm,
        adtf,
        cdf,
        crm: AbrParams::crm_of(tbe, nrm),
    };
    if let Err(e) = params.validate() {
        let key = match e.parameter() {
            "crm" => "tbe",
            key => key,
        };
        return Err(t.error(key, e.to_string()));
    }
    if source_buffer.as_bytes() == 0 {
        return Err(t.error(
            "source_buffer",
            "the source buffer must hold at least one byte",
        ));
    }
    f.set("abr", Value::Table(t.take_resolved()));
    Ok(ProtocolConfig::Abr(AbrFlowConfig {
        inner: Box::new(config),
        params,
        source_buffer,
    }))
}
