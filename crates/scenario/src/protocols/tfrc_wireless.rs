//! A `protocol = "tfrc-wireless"` flow: TFRC whose receiver runs a loss discrimination
//! algorithm (`lda`), with every TFRC key.

use fairstream_proto::ProtocolConfig;
use fairstream_proto::lda::{LdaConfig, LdaKind};
use fairstream_proto::tfrc::TfrcWirelessConfig;

use super::tfrc::{self, read_tfrc};
use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// Every key of a TFRC Wireless flow: `lda` and the TFRC keys.
pub(crate) fn keys() -> Vec<&'static str> {
    [&["lda"][..], tfrc::KEYS].concat()
}

/// Reads a TFRC Wireless flow's parameters.
pub(crate) fn read(
    f: &mut Section<'_, '_>,
    _warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    let tfrc = read_tfrc(f)?;
    let names: Vec<&'static str> = LdaKind::ALL.iter().map(|k| k.name()).collect();
    let kind = f.choice("lda", &names, LdaKind::default().name())?;
    let kind = LdaKind::from_name(kind).unwrap_or_default();
    Ok(ProtocolConfig::TfrcWireless(TfrcWirelessConfig {
        tfrc,
        lda: LdaConfig {
            kind,
            ..LdaConfig::default()
        },
    }))
}
