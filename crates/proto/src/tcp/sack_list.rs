//! The receiver's SACK blocks (RFC 2018 §4): the contiguous runs of packets it holds above its
//! cumulative ACK that its ACKs report, the run holding the most recently received packet first,
//! then the runs it reported most recently.
//!
//! The list keeps the four most recent runs. A run that fell off the list is still in the sink's
//! reorder ring; when a packet arrives next to it, the run is found again by walking the ring from
//! the new packet, so the first block always covers the whole run (RFC 2018 requires it; Linux's
//! list of four can report a shorter one).

use super::options::SackBlocks;

/// The runs an ACK reports, most recent first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackList {
    /// `[start, end)` packet ranges; the first `n` are in use.
    runs: [(i64, i64); SackBlocks::MAX],
    n: usize,
}

impl SackList {
    /// The runs, most recent first.
    pub fn runs(&self) -> &[(i64, i64)] {
        &self.runs[..self.n]
    }

    /// Packet `seq`, above the next expected packet `next`, arrived (new or again); `held(s)`
    /// says whether packet `s` (in `(next, maxseen]`) is held out of order. Its run goes first.
    pub fn arrived(&mut self, seq: i64, next: i64, maxseen: i64, held: impl Fn(i64) -> bool) {
        let (mut start, mut end) = (seq, seq + 1);
        // Runs that touch or hold the packet merge with it.
        let mut i = 0;
        while i < self.n {
            let (s, e) = self.runs[i];
            if s <= end && e >= start {
                start = start.min(s);
                end = end.max(e);
                self.remove(i);
            } else {
                i += 1;
            }
        }
        // Packets beyond the runs the list remembers.
        while start - 1 > next && held(start - 1) {
            start -= 1;
        }
        while end <= maxseen && held(end) {
            end += 1;
        }
        // Runs the walk swallowed are part of this one now.
        let mut i = 0;
        while i < self.n {
            let (s, e) = self.runs[i];
            if s >= start && e <= end {
                self.remove(i);
            } else {
                i += 1;
            }
        }
        let keep = self.n.min(SackBlocks::MAX - 1);
        self.runs.copy_within(0..keep, 1);
        self.runs[0] = (start, end);
        self.n = keep + 1;
    }

    /// The cumulative ACK moved: runs now at or below it are gone.
    pub fn advanced(&mut self, next: i64) {
        let mut i = 0;
        while i < self.n {
            if self.runs[i].1 <= next {
                self.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// The first `max` runs as the blocks of an ACK of `ack`.
    pub fn blocks(&self, ack: i64, max: usize) -> SackBlocks {
        let mut b = SackBlocks::NONE;
        for &(s, e) in self.runs().iter().take(max) {
            b.push(ack, s, e);
        }
        b
    }

    fn remove(&mut self, i: usize) {
        self.runs.copy_within(i + 1..self.n, i);
        self.n -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Packets held by a receiver whose next expected packet is `next`, and its list.
    struct Rx {
        held: BTreeSet<i64>,
        next: i64,
        list: SackList,
    }

    impl Rx {
        fn new() -> Self {
            Self {
                held: BTreeSet::new(),
                next: 0,
                list: SackList::default(),
            }
        }
        fn get(&mut self, seq: i64) -> Vec<(i64, i64)> {
            if seq == self.next {
                self.next += 1;
                while self.held.remove(&self.next) {
                    self.next += 1;
                }
                self.list.advanced(self.next);
            } else if seq > self.next {
                self.held.insert(seq);
                let max = self.held.last().copied().unwrap_or(seq);
                let held = &self.held;
                self.list
                    .arrived(seq, self.next, max, |s| held.contains(&s));
            }
            self.list.runs().to_vec()
        }
    }

    #[test]
    fn the_newest_run_goes_first_and_runs_merge() {
        let mut rx = Rx::new();
        rx.get(0);
        assert_eq!(rx.get(2), [(2, 3)]);
        assert_eq!(rx.get(3), [(2, 4)]);
        assert_eq!(rx.get(6), [(6, 7), (2, 4)]);
        assert_eq!(rx.get(8), [(8, 9), (6, 7), (2, 4)]);
        // A duplicate brings its run to the front.
        assert_eq!(rx.get(3), [(2, 4), (8, 9), (6, 7)]);
        // 7 joins 6 and 8.
        assert_eq!(rx.get(7), [(6, 9), (2, 4)]);
        // 1 fills the first hole: 0..=3 are in order, the run 2..4 is gone.
        assert_eq!(rx.get(1), [(6, 9)]);
        assert_eq!(rx.next, 4);
        assert_eq!(rx.list.blocks(3, 4).iter(3).collect::<Vec<_>>(), [(6, 9)]);
    }

    #[test]
    fn a_run_that_fell_off_the_list_is_found_again_whole() {
        let mut rx = Rx::new();
        rx.get(0);
        // Five runs: 2..4 (two packets), 6, 8, 10, 12; the oldest falls off the list.
        for s in [2, 3, 6, 8, 10, 12] {
            rx.get(s);
        }
        assert_eq!(rx.list.runs(), [(12, 13), (10, 11), (8, 9), (6, 7)]);
        // 4 arrives next to the forgotten run 2..4: the first block is the whole of 2..5.
        assert_eq!(rx.get(4)[0], (2, 5));
        // Three blocks beside timestamps.
        assert_eq!(rx.list.blocks(0, 3).len(), 3);
    }
}
