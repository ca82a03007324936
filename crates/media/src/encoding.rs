//! Multi-rate encodings: one clip encoded at several levels, each with its bit rate and its
//! frame trace (a SureStream-like server switches between them; paper 000).

use fairstream_core::{Bitrate, RngStream};

use crate::trace::{FrameTrace, SyntheticGop};

/// One level of an encoding: its nominal bit rate and its frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    /// The nominal (advertised) encoded rate.
    pub bitrate: Bitrate,
    /// The frames of the clip at this level.
    pub trace: FrameTrace,
}

/// A clip encoded at several levels, in increasing bit rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoding {
    levels: Vec<Level>,
}

/// Why an encoding was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodingError {
    /// No levels.
    #[error("an encoding has at least one level")]
    NoLevels,
    /// Levels out of order or repeated.
    #[error("level {index}'s bit rate {rate} is not above the level before it ({previous})")]
    NotIncreasing {
        /// The offending level's index.
        index: usize,
        /// Its bit rate.
        rate: Bitrate,
        /// The previous level's.
        previous: Bitrate,
    },
}

impl Encoding {
    /// An encoding of `levels`, in strictly increasing bit rate.
    pub fn new(levels: Vec<Level>) -> Result<Self, EncodingError> {
        if levels.is_empty() {
            return Err(EncodingError::NoLevels);
        }
        if let Some(i) = (1..levels.len()).find(|&i| levels[i].bitrate <= levels[i - 1].bitrate) {
            return Err(EncodingError::NotIncreasing {
                index: i,
                rate: levels[i].bitrate,
                previous: levels[i - 1].bitrate,
            });
        }
        Ok(Self { levels })
    }

    /// One level per rate of `bitrates` (strictly increasing), each `gops` GOPs of `gop` with
    /// every frame size scaled so that the level's mean rate is its bit rate (the I/P/B size
    /// ratios kept). Size noise, if `gop` has any, is drawn from `rng`, level after level.
    pub fn from_gop(
        gop: &SyntheticGop,
        bitrates: &[Bitrate],
        gops: usize,
        rng: &mut RngStream,
    ) -> Result<Self, EncodingError> {
        let levels = bitrates
            .iter()
            .map(|&bitrate| Level {
                bitrate,
                trace: FrameTrace::synthetic(gop, gops, rng).scaled_to(bitrate),
            })
            .collect();
        Self::new(levels)
    }

    /// The levels, lowest rate first.
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// The highest level whose bit rate is at most `available` (level 0 if none is).
    pub fn level_for(&self, available: Bitrate) -> usize {
        self.levels
            .iter()
            .rposition(|l| l.bitrate <= available)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels(kbps: &[u64]) -> Result<Encoding, EncodingError> {
        let rates: Vec<Bitrate> = kbps.iter().map(|&k| Bitrate::kbps(k)).collect();
        Encoding::from_gop(
            &SyntheticGop::paper001(),
            &rates,
            2,
            &mut RngStream::from_seed(1),
        )
    }

    #[test]
    fn levels_are_scaled_to_their_rates() {
        let e = levels(&[20, 34, 225, 450]).unwrap();
        assert_eq!(e.levels().len(), 4);
        for l in e.levels() {
            let got = l.trace.mean_rate().as_bps_f64();
            assert!((got - l.bitrate.as_bps_f64()).abs() / got < 0.01, "{l:?}");
            assert_eq!(l.trace.len(), 18);
        }
        assert_eq!(e.level_for(Bitrate::kbps(10)), 0);
        assert_eq!(e.level_for(Bitrate::kbps(34)), 1);
        assert_eq!(e.level_for(Bitrate::kbps(449)), 2);
        assert_eq!(e.level_for(Bitrate::mbps(10)), 3);
    }

    #[test]
    fn bad_level_lists_are_refused() {
        assert_eq!(levels(&[]), Err(EncodingError::NoLevels));
        let err = levels(&[100, 100]).unwrap_err();
        assert!(matches!(err, EncodingError::NotIncreasing { index: 1, .. }));
        assert_eq!(
            err.to_string(),
            "level 1's bit rate 100kbps is not above the level before it (100kbps)"
        );
    }
}
