//! The protocols the driver runs: `fairstream_proto::RtProtocol`, which follows from the
//! protocol list (those it marks `real_time`), each building its configuration for a real run in
//! its own folder.

pub use fairstream_proto::RtProtocol;

use crate::RtError;

/// The protocol a name stands for, or an error listing those the driver runs (and the one a
/// misspelt name probably means).
pub fn parse(name: &str) -> Result<RtProtocol, RtError> {
    RtProtocol::parse(name).ok_or_else(|| RtError::UnknownProtocol(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_is_refused_with_the_one_it_probably_misspells() {
        assert_eq!(parse("vtp").map(RtProtocol::name).ok(), Some("vtp"));
        let err = parse("tfrcc").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "unknown protocol `tfrcc` (did you mean `tfrc`? expected one of: tfrc, "
            ),
            "{err}"
        );
        let err = parse("tcp").unwrap_err().to_string();
        assert!(
            err.starts_with("unknown protocol `tcp` (expected one of: "),
            "{err}"
        );
    }
}
