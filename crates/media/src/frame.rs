//! Frames and GOP patterns: the three MPEG picture types, one frame of a trace, and a group of
//! pictures (GOP) pattern such as `IBBPBBPBB`.
//!
//! Dependencies (MPEG-1, display order, open GOPs): an I frame decodes on its own; a P frame
//! needs the anchor (I or P) before it; a B frame needs the anchors on both sides of it, the
//! one after it possibly the next GOP's I frame.

use std::fmt;
use std::str::FromStr;

use fairstream_core::{DataSize, Duration};

/// An MPEG picture type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameType {
    /// Intra-coded: decodable on its own; starts a GOP.
    I,
    /// Predicted from the anchor (I or P) before it.
    P,
    /// Bidirectionally predicted from the anchors before and after it; nothing depends on it.
    B,
}

impl FrameType {
    /// Whether other frames may depend on this one (I and P frames are anchors).
    pub const fn is_anchor(self) -> bool {
        matches!(self, Self::I | Self::P)
    }

    /// The letter: `I`, `P` or `B`.
    pub const fn letter(self) -> char {
        match self {
            Self::I => 'I',
            Self::P => 'P',
            Self::B => 'B',
        }
    }

    /// The type a letter names (either case), if any.
    pub const fn from_letter(c: char) -> Option<Self> {
        match c {
            'I' | 'i' => Some(Self::I),
            'P' | 'p' => Some(Self::P),
            'B' | 'b' => Some(Self::B),
            _ => None,
        }
    }
}

impl fmt::Display for FrameType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// One frame of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// When the frame is due, from the start of the trace.
    pub time: Duration,
    /// Its picture type.
    pub kind: FrameType,
    /// Its encoded size (payload bytes, no transport headers).
    pub size: DataSize,
}

/// A GOP pattern: the picture types of one group of pictures in display order, starting with
/// its I frame (e.g. `IBBPBBPBB`: N = 9, M = 3).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GopPattern(Vec<FrameType>);

/// Why a GOP pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The pattern is empty.
    #[error("a GOP pattern has at least one frame; expected a form such as \"IBBPBBPBB\"")]
    Empty,
    /// It does not start with an I frame.
    #[error("a GOP pattern starts with its I frame; expected a form such as \"IBBPBBPBB\"")]
    NoLeadingI,
    /// It has a second I frame.
    #[error("a GOP pattern has one I frame (at its start); position {0} is another")]
    SecondI(usize),
    /// It has a letter other than I, P or B.
    #[error("`{0}` is not a frame type; expected I, P or B")]
    UnknownType(char),
}

impl GopPattern {
    /// The common MPEG-1 pattern `IBBPBBPBB` (paper 001's pattern 1).
    pub fn ibbpbbpbb() -> Self {
        "IBBPBBPBB".parse().expect("a valid pattern")
    }

    /// A pattern from its frame types: one I frame, first.
    pub fn new(kinds: Vec<FrameType>) -> Result<Self, PatternError> {
        match kinds.first() {
            None => return Err(PatternError::Empty),
            Some(FrameType::I) => {}
            Some(_) => return Err(PatternError::NoLeadingI),
        }
        if let Some(k) = kinds.iter().skip(1).position(|&k| k == FrameType::I) {
            return Err(PatternError::SecondI(k + 1));
        }
        Ok(Self(kinds))
    }

    /// The frame types, in display order.
    pub fn kinds(&self) -> &[FrameType] {
        &self.0
    }

    /// Frames per GOP (N).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true: a pattern has its I frame (here for clippy's `len_without_is_empty`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromStr for GopPattern {
    type Err = PatternError;

    /// Letters I, P, B in either case; spaces are ignored.
    fn from_str(s: &str) -> Result<Self, PatternError> {
        let kinds = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| FrameType::from_letter(c).ok_or(PatternError::UnknownType(c)))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(kinds)
    }
}

impl fmt::Display for GopPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|k| write!(f, "{k}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse_and_print() {
        let p: GopPattern = "ibb pbb pbb".parse().unwrap();
        assert_eq!(p, GopPattern::ibbpbbpbb());
        assert_eq!((p.len(), p.to_string()), (9, "IBBPBBPBB".to_string()));
        assert!(!p.is_empty());
        assert_eq!(p.kinds()[3], FrameType::P);
        assert!(FrameType::P.is_anchor() && !FrameType::B.is_anchor());
    }

    #[test]
    fn bad_patterns_say_why() {
        assert_eq!("".parse::<GopPattern>(), Err(PatternError::Empty));
        assert_eq!("BBI".parse::<GopPattern>(), Err(PatternError::NoLeadingI));
        assert_eq!("IBBI".parse::<GopPattern>(), Err(PatternError::SecondI(3)));
        let err = "IBX".parse::<GopPattern>().unwrap_err();
        assert_eq!(err, PatternError::UnknownType('X'));
        assert_eq!(
            err.to_string(),
            "`X` is not a frame type; expected I, P or B"
        );
    }
}
