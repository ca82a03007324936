//! What stops a real run before it starts, one clear line each.

use std::net::SocketAddr;

/// Why a real-time run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RtError {
    /// The address does not resolve.
    #[error("cannot resolve `{addr}`: {reason}")]
    Resolve {
        /// What was given.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The socket could not be bound (a port in use, an address not of this host).
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// The socket failed while running.
    #[error("socket error: {0}")]
    Io(#[from] std::io::Error),
    /// The protocol name is none the driver runs.
    #[error(
        "unknown protocol `{0}` ({hint}expected one of: {names})",
        hint = fairstream_core::did_you_mean(.0, crate::RtProtocol::ALL.map(crate::RtProtocol::name)),
        names = crate::RtProtocol::names()
    )]
    UnknownProtocol(String),
    /// A rate cap was given for a protocol that takes none.
    #[error("{0} takes no rate cap: it sends at its levels' rates")]
    NoRateCap(&'static str),
    /// The receiver answered that it does not run the protocol asked for.
    #[error("the receiver at {peer} does not speak {protocol}")]
    Refused {
        /// The receiver.
        peer: SocketAddr,
        /// The protocol asked for.
        protocol: &'static str,
    },
    /// The receiver serves another sender.
    #[error("the receiver at {0} is busy with another sender")]
    Busy(SocketAddr),
    /// No handshake answer came back.
    #[error("no answer from {peer} after {attempts} hellos: is `fairstream recv` running there?")]
    NoAnswer {
        /// The receiver.
        peer: SocketAddr,
        /// Hellos sent.
        attempts: u32,
    },
    /// The peer speaks another version of the wire format.
    #[error("{peer} speaks another fairstream wire version ({detail})")]
    Version {
        /// The peer.
        peer: SocketAddr,
        /// The decoder's message.
        detail: String,
    },
    /// Results could not be written.
    #[error(transparent)]
    Results(#[from] fairstream_results::ResultsError),
}
