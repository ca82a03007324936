//! Test helpers shared by the LDA unit tests: arrivals built from integer nanoseconds, so
//! that the times the tests reason about are exactly the times the LDAs see.

use fairstream_core::Instant;

use super::Arrival;

/// One millisecond in nanoseconds.
pub(super) const MS: u64 = 1_000_000;

/// 2⁻⁷ s in nanoseconds: a packet time whose small multiples and quarters are exact in
/// binary, so window edges can be tested exactly.
pub(super) const TAU: u64 = 7_812_500;

/// Where the tests' arrival times start, so that `sent = at − rott` never goes below zero.
const BASE: u64 = 1_000_000_000_000;

/// Packet `seq` arriving `at_ns` after the tests' origin with a one-way delay of `rott_ns`.
pub(super) fn at(seq: u64, at_ns: u64, rott_ns: u64) -> Arrival {
    Arrival {
        seq,
        at: Instant::from_nanos(BASE + at_ns),
        sent: Instant::from_nanos(BASE + at_ns - rott_ns),
    }
}
