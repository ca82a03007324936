//! The protocols the driver runs: `fairstream_proto::RtProtocol`, which follows from the
//! protocol list (those it marks `real_time`), each building its configuration for a real run in
//! its own folder.

pub use fairstream_proto::RtProtocol;

use crate::RtError;

/// The protocol a name stands for, or an error listing those the driver runs.
pub fn parse(name: &str) -> Result<RtProtocol, RtError> {
    RtProtocol::parse(name).ok_or_else(|| RtError::UnknownProtocol(name.to_string()))
}
