//! The event calendar: a binary heap ordered by (time, insertion sequence).
//!
//! Events at the same instant come out first-in first-out, as in ns-2 and ns-3, so a run
//! is a pure function of its inputs. Time never goes backwards (debug-asserted).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use fairstream_core::Instant;

/// One calendar entry: a key `(time << 64) | seq` and the event payload.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A deterministic event calendar.
#[derive(Debug, Clone)]
pub struct Calendar<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Instant,
}

impl<E> Default for Calendar<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            now: Instant::ZERO,
        }
    }
}

impl<E: Copy> Calendar<E> {
    /// An empty calendar at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `at` (not earlier than the current time).
    #[inline]
    pub fn schedule(&mut self, at: Instant, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let key = (u128::from(at.as_nanos()) << 64) | u128::from(self.seq);
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// When the next event is due, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap
            .peek()
            .map(|e| Instant::from_nanos((e.key >> 64) as u64))
    }

    /// Removes the next event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let e = self.heap.pop()?;
        let t = Instant::from_nanos((e.key >> 64) as u64);
        debug_assert!(t >= self.now, "time went backwards");
        self.now = t;
        Some((t, e.event))
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut c = Calendar::new();
        c.schedule(Instant::from_nanos(20), 'a');
        c.schedule(Instant::from_nanos(10), 'b');
        c.schedule(Instant::from_nanos(20), 'c');
        c.schedule(Instant::from_nanos(10), 'd');
        let order: Vec<char> = std::iter::from_fn(|| c.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ['b', 'd', 'a', 'c']);
        assert_eq!(c.now(), Instant::from_nanos(20));
    }
}
