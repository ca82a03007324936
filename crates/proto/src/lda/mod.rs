//! Loss discrimination algorithms (PROTOCOLS.md §3): a receiver that sees a gap in the
//! sequence numbers asks its [`Lda`] whether the missing packets were lost to congestion or
//! to a lossy (wireless) link. Spike (the default), Biaz, mBiaz, ZigZag and ZBS sit behind
//! one interface, so any receiver can use any of them.

mod spike;

pub use spike::{SpikeDetector, SpikeThresholds};
