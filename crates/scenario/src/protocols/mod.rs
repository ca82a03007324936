//! One reader file per protocol, each returning the protocol's configuration; [`READERS`] is
//! the list the flow reader chooses from. Adding a protocol's reader = its file and one line.

mod cbr;
mod tcp;
mod tcp_control;

use fairstream_proto::ProtocolConfig;

use crate::error::ScenarioError;
use crate::reader::{Result, Section};

/// A protocol's reader: its `protocol = "…"` name, its keys, and the function that reads them.
pub(crate) struct ProtocolReader {
    /// The name in `protocol = "…"`.
    pub(crate) name: &'static str,
    /// The keys only this protocol's flows take.
    pub(crate) keys: fn() -> Vec<&'static str>,
    /// Reads the protocol's parameters of a flow table.
    pub(crate) read: fn(&mut Section<'_, '_>, &mut Vec<ScenarioError>) -> Result<ProtocolConfig>,
}

/// The protocols a scenario may name; the first is the default.
pub(crate) const READERS: &[ProtocolReader] = &[
    ProtocolReader {
        name: "tcp",
        keys: tcp::keys,
        read: tcp::read,
    },
    ProtocolReader {
        name: "cbr",
        keys: || cbr::KEYS.to_vec(),
        read: cbr::read,
    },
];
