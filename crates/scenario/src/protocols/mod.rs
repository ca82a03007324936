//! One reader file per protocol, each returning the protocol's configuration; [`READERS`] is
//! the list the flow reader chooses from. Adding a protocol's reader = its file and one line.
//! ATM ABR is not a `protocol = "…"` but carries any of them (`atm = "abr"`): its reader,
//! [`abr`], wraps the configuration the others return.

pub(crate) mod abr;
mod cbr;
mod media_scaling;
mod mmapp;
mod mpegapp;
mod multfrc;
mod rap;
mod surestream;
mod tcp;
mod tcp_control;
mod tfrc;
mod tfrc_wireless;
mod trace_file;
mod vtp;

use fairstream_core::DataSize;
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
    ProtocolReader {
        name: "tfrc",
        keys: || tfrc::KEYS.to_vec(),
        read: tfrc::read,
    },
    ProtocolReader {
        name: "tfrc-wireless",
        keys: tfrc_wireless::keys,
        read: tfrc_wireless::read,
    },
    ProtocolReader {
        name: "multfrc",
        keys: multfrc::keys,
        read: multfrc::read,
    },
    ProtocolReader {
        name: "vtp",
        keys: || vtp::KEYS.to_vec(),
        read: vtp::read,
    },
    ProtocolReader {
        name: "rap",
        keys: || rap::KEYS.to_vec(),
        read: rap::read,
    },
    ProtocolReader {
        name: "mmapp",
        keys: mmapp::keys,
        read: mmapp::read,
    },
    ProtocolReader {
        name: "mpegapp",
        keys: mpegapp::keys,
        read: mpegapp::read,
    },
    ProtocolReader {
        name: "surestream",
        keys: || surestream::KEYS.to_vec(),
        read: surestream::read,
    },
];

/// The largest packet on the wire: an IPv4 packet's total length is 16 bits.
const MAX_PACKET: u64 = 65_535;

/// Reads `packet_size` (size on the wire): at least `min` bytes (`what` says why), at most an
/// IPv4 packet's 65 535.
pub(crate) fn read_packet_size(
    f: &mut Section<'_, '_>,
    default: DataSize,
    min: u64,
    what: &str,
) -> Result<DataSize> {
    let size: DataSize = f.unit_or("packet_size", default)?;
    if size.as_bytes() < min {
        return Err(f.error("packet_size", format!("{what} is at least {min} bytes")));
    }
    if size.as_bytes() > MAX_PACKET {
        return Err(f.error(
            "packet_size",
            format!("a packet is at most {MAX_PACKET} bytes (an IPv4 packet's total length)"),
        ));
    }
    Ok(size)
}
