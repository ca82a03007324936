//! A `protocol = "multfrc"` flow: n TFRC connections whose number follows the RTT, with every
//! TFRC key for the connections.

use fairstream_proto::ProtocolConfig;
use fairstream_proto::multfrc::MultfrcConfig;

use super::tfrc::{self, read_tfrc};
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// The keys only a MULTFRC flow takes.
const OWN_KEYS: &[&str] = &[
    "alpha",
    "beta",
    "initial_connections",
    "max_connections",
    "update_period",
    "rtt_min_reset",
];

/// Every key of a MULTFRC flow, the connections' TFRC keys included.
pub(crate) fn keys() -> Vec<&'static str> {
    [OWN_KEYS, tfrc::KEYS].concat()
}

/// Reads a MULTFRC flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let d = MultfrcConfig::default();
    let tfrc = read_tfrc(f)?;
    let alpha = f.float_or("alpha", 0.0, 10.0, d.alpha)?;
    if alpha <= 0.0 {
        return Err(f.error("alpha", "the RTT threshold must be above 0"));
    }
    let beta = f.float_or("beta", 0.0, 128.0, d.beta)?;
    if beta <= 0.0 {
        return Err(f.error("beta", "the step must be above 0"));
    }
    let max_connections = f.int_or("max_connections", 1, 128, i64::from(d.max_connections))? as u32;
    let initial = f.float_or(
        "initial_connections",
        1.0,
        f64::from(max_connections),
        d.initial,
    )?;
    let update_period = f.opt_unit("update_period")?;
    let rtt_min_reset = f.opt_unit("rtt_min_reset")?;
    Ok(ProtocolConfig::Multfrc(MultfrcConfig {
        tfrc,
        alpha,
        beta,
        initial,
        max_connections,
        update_period,
        rtt_min_reset,
    }))
}
