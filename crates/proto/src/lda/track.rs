//! Sequence and timing bookkeeping shared by every LDA (PROTOCOLS.md §3.1): which arrival
//! closes a gap and of how many packets, which arrivals are late or duplicate, the
//! inter-arrival time `T_i` across a gap, and `T_min`, the smallest inter-arrival time between
//! consecutive in-order packets.

use fairstream_core::Instant;

/// How far below the highest sequence number the tracker remembers which packets arrived,
/// to tell a late packet (its first copy) from a duplicate. Anything further below is
/// ignored like a duplicate: too late to tell, and too late to say anything about the path.
const WINDOW: u64 = u128::BITS as u64;

/// Seconds from `earlier` to `later`, negative when `later` is earlier. Taken as a signed
/// nanosecond difference before converting, so it stays exact to the nanosecond however late
/// in the run (two large `f64` second counts subtracted would lose the low bits).
pub(super) fn secs_between(later: Instant, earlier: Instant) -> f64 {
    (i128::from(later.as_nanos()) - i128::from(earlier.as_nanos())) as f64 / 1e9
}

/// What one (non-duplicate) arrival means for the sequence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Step {
    /// The first arrival: there is nothing to compare it with.
    First,
    /// A new highest sequence number, `missing` numbers above the previous highest
    /// (0: in order), arriving `t_i` seconds after it (negative if time went backwards).
    Advance {
        /// Packets skipped: `n` of the spec.
        missing: u64,
        /// `T_i` of the spec: arrival time minus the previous highest packet's.
        t_i: f64,
    },
    /// A packet below the highest, not seen before (reordered): not a loss episode, but its
    /// delay is still a sample of the path.
    Late,
}

/// The receiver's view of the sequence: highest number seen, which recent numbers arrived,
/// and `T_min`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Tracker {
    /// The highest sequence number and its arrival time, once anything has arrived.
    highest: Option<(u64, Instant)>,
    /// Bit `k` set: `highest − k` has arrived (bit 0 is the highest itself).
    seen: u128,
    /// Smallest in-order inter-arrival time in seconds; `+∞` before any.
    t_min: f64,
}

impl Tracker {
    /// A tracker that has seen nothing.
    pub(super) fn new() -> Self {
        Self {
            highest: None,
            seen: 0,
            t_min: f64::INFINITY,
        }
    }

    /// Takes one arrival; `None` for a duplicate (or a packet too far below the highest to
    /// tell), which must then be ignored entirely.
    pub(super) fn observe(&mut self, seq: u64, at: Instant) -> Option<Step> {
        let Some((highest, highest_at)) = self.highest else {
            self.highest = Some((seq, at));
            self.seen = 1;
            return Some(Step::First);
        };
        if seq > highest {
            let jump = seq - highest;
            let shift = u32::try_from(jump).unwrap_or(u32::MAX);
            self.seen = self.seen.checked_shl(shift).unwrap_or(0) | 1;
            self.highest = Some((seq, at));
            let t_i = secs_between(at, highest_at);
            let missing = jump - 1;
            // Only a consecutive pair measures the bottleneck's packet time; a pair that went
            // backwards in time measures nothing.
            if missing == 0 && t_i >= 0.0 {
                self.t_min = self.t_min.min(t_i);
            }
            return Some(Step::Advance { missing, t_i });
        }
        let behind = highest - seq;
        if behind >= WINDOW {
            return None;
        }
        let bit = 1u128 << behind;
        if self.seen & bit != 0 {
            return None;
        }
        self.seen |= bit;
        Some(Step::Late)
    }

    /// `T_min` in seconds, once two consecutive packets have arrived in order (it may be 0
    /// if they arrived at the same instant).
    pub(super) fn t_min(&self) -> Option<f64> {
        self.t_min.is_finite().then_some(self.t_min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn ms(t: u64) -> Instant {
        Instant::from_nanos(t * MS)
    }

    #[test]
    fn t_min_comes_from_consecutive_pairs_only() {
        let mut t = Tracker::new();
        assert_eq!(t.observe(0, ms(0)), Some(Step::First));
        assert_eq!(t.t_min(), None);
        // A gap closed quickly is not a T_min sample.
        assert_eq!(
            t.observe(2, ms(3)),
            Some(Step::Advance {
                missing: 1,
                t_i: 0.003
            })
        );
        assert_eq!(t.t_min(), None);
        assert_eq!(
            t.observe(3, ms(13)),
            Some(Step::Advance {
                missing: 0,
                t_i: 0.010
            })
        );
        assert_eq!(t.t_min(), Some(0.010));
        t.observe(4, ms(20));
        assert_eq!(t.t_min(), Some(0.007));
        t.observe(5, ms(40));
        assert_eq!(t.t_min(), Some(0.007));
    }

    #[test]
    fn a_late_packet_counts_once_then_is_a_duplicate() {
        let mut t = Tracker::new();
        t.observe(0, ms(0));
        t.observe(1, ms(1));
        t.observe(4, ms(2));
        assert_eq!(t.observe(2, ms(3)), Some(Step::Late));
        assert_eq!(t.observe(2, ms(4)), None);
        assert_eq!(t.observe(4, ms(5)), None);
        assert_eq!(t.observe(0, ms(5)), None);
        assert_eq!(t.observe(3, ms(6)), Some(Step::Late));
        assert_eq!(t.observe(3, ms(6)), None);
    }

    #[test]
    fn late_packets_are_remembered_across_a_long_jump_only_within_the_window() {
        let mut t = Tracker::new();
        t.observe(0, ms(0));
        t.observe(100, ms(1));
        // 1 is 99 below 100: inside the window, never seen.
        assert_eq!(t.observe(1, ms(2)), Some(Step::Late));
        // 0 arrived before the jump and is still inside the window: duplicate.
        assert_eq!(t.observe(0, ms(2)), None);
        t.observe(1_000, ms(3));
        // 900 below the highest: outside the window, ignored.
        assert_eq!(t.observe(100, ms(4)), None);
        assert_eq!(t.observe(999, ms(4)), Some(Step::Late));
    }

    #[test]
    fn time_going_backwards_gives_a_negative_t_i_and_no_t_min() {
        let mut t = Tracker::new();
        t.observe(7, ms(10));
        assert_eq!(
            t.observe(8, ms(4)),
            Some(Step::Advance {
                missing: 0,
                t_i: -0.006
            })
        );
        assert_eq!(t.t_min(), None);
    }

    #[test]
    fn sequence_numbers_at_the_top_of_the_range() {
        let mut t = Tracker::new();
        t.observe(0, ms(0));
        assert_eq!(
            t.observe(u64::MAX, Instant::MAX),
            Some(Step::Advance {
                missing: u64::MAX - 1,
                t_i: secs_between(Instant::MAX, ms(0)),
            })
        );
        assert_eq!(t.observe(u64::MAX, ms(1)), None);
        assert_eq!(t.observe(u64::MAX - 1, ms(1)), Some(Step::Late));
        assert_eq!(t.observe(1, ms(1)), None);
    }
}
