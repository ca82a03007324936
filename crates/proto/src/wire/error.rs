//! What can be wrong with a datagram, as a typed error.

use std::fmt;

/// Why a datagram could not be decoded (or a packet encoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The input ended before the `needed` bytes of what it announces (`got` were there).
    Short {
        /// Bytes the datagram needs.
        needed: usize,
        /// Bytes it has.
        got: usize,
    },
    /// The first bytes are not fairstream's magic.
    BadMagic(u16),
    /// A version this build does not speak.
    UnknownVersion(u8),
    /// A packet type number no header has.
    UnknownType(u8),
    /// A length that does not fit the packet type (bytes left after a feedback report).
    BadLength {
        /// The packet type's length.
        expected: usize,
        /// The datagram's.
        got: usize,
    },
    /// A field holds a value the format cannot carry (encoding) or that means nothing
    /// (decoding).
    FieldOutOfRange(&'static str),
    /// A header the fairstream format does not carry (TCP is the kernel's; plain UDP's
    /// sequence number travels in its payload).
    NotEncodable(&'static str),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Short { needed, got } => {
                write!(f, "datagram too short: {got} bytes, need {needed}")
            }
            Self::BadMagic(m) => write!(f, "not a fairstream datagram (magic {m:#06x})"),
            Self::UnknownVersion(v) => write!(
                f,
                "fairstream wire version {v} is not spoken here (this build speaks {})",
                super::VERSION
            ),
            Self::UnknownType(t) => write!(f, "unknown packet type {t}"),
            Self::BadLength { expected, got } => {
                write!(
                    f,
                    "bad length: {got} bytes where the packet type has {expected}"
                )
            }
            Self::FieldOutOfRange(field) => write!(f, "field `{field}` out of range"),
            Self::NotEncodable(what) => write!(f, "{what} headers have no fairstream encoding"),
        }
    }
}

impl std::error::Error for WireError {}
