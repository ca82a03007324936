//! The event calendar: a binary heap and FIFO lanes, ordered by (time, tie-break key).
//!
//! Two events due at the same nanosecond are simultaneous; which runs first is a modelling
//! choice, and in a deterministic drop-tail simulation it can decide which flow loses a packet
//! (the phase effect of Floyd and Jacobson, 1992). The calendar therefore orders ties by a
//! [`TieRule`]:
//!
//! - [`TieRule::Random`] (the default of scenarios): same-instant events run in a seeded random
//!   order, a pure function of the run's seed and the order the events were scheduled in, so
//!   no flow gains systematically from the order and a run is still reproducible bit for bit;
//! - [`TieRule::Fifo`]: first scheduled, first run, as in ns-2 and ns-3.
//!
//! Time never goes backwards (debug-asserted).
//!
//! **Lanes.** A source that schedules its events in time order (a link's arrivals: constant
//! delay, first in first out) may schedule them in a *lane* of its own
//! ([`Calendar::schedule_in_lane`]): a FIFO of entries of which only the first sits in a heap
//! of lane heads, so the heap holds one entry per lane rather than one per packet in flight.
//! Every entry takes its key (time and tie-break) from the same sequence as a heap entry would,
//! and the calendar pops the smallest key of the heap and of the lane heads, so the order in
//! which events run is exactly the order one heap of all of them would give. An entry that
//! would not come after its lane's last one (a zero transmission time, say) goes into the heap
//! instead, so the order never depends on the caller keeping its promise.
//!
//! **The far heap.** An entry due more than [`FAR_AHEAD`] after the present (a retransmission
//! timer, the next bin of a series, an endpoint's timer entry left behind when the endpoint
//! re-armed earlier) waits in a second heap, so that the heap every near event goes through
//! stays small: with one heap, B7's held about a thousand entries on average.
//! The calendar pops the smallest key of the two heaps and the lane heads, so the far heap, like
//! the lanes, changes how fast the order is found, never the order.

use std::cmp::Ordering;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};

use fairstream_core::{Duration, Instant};

/// How events due at the same instant are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TieRule {
    /// In a random order drawn from the run's seed (reproducible for a given seed).
    #[default]
    Random,
    /// In the order they were scheduled (ns-2 and ns-3's rule).
    Fifo,
}

impl TieRule {
    /// The scenario keyword: `"random"` or `"fifo"`.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::Fifo => "fifo",
        }
    }
}

/// How far ahead of the present an entry must be due to wait in the far heap (see the module
/// header). It decides speed, never order.
const FAR_AHEAD: Duration = Duration::from_millis(10);

/// Which of the calendar's stores holds an entry.
#[derive(Debug, Clone, Copy)]
enum Source {
    Heap,
    Lane,
    Far,
}

/// One calendar entry: a key `(time << 64) | tie-break` and the event payload.
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
    /// Entries due within `far_ahead` of the time they were scheduled at.
    heap: BinaryHeap<Entry<E>>,
    /// [`FAR_AHEAD`] (tests set it out of reach, to compare with one heap).
    far_ahead: Duration,
    /// Entries due later than that (see the module header).
    far: BinaryHeap<Entry<E>>,
    /// Each lane's entries, keys strictly increasing.
    lanes: Vec<VecDeque<Entry<E>>>,
    /// The key of each non-empty lane's first entry, with the lane's number as the event.
    heads: BinaryHeap<Entry<u32>>,
    seq: u64,
    now: Instant,
    /// `Some(salt)` under [`TieRule::Random`].
    salt: Option<u64>,
}

impl<E> Default for Calendar<E> {
    fn default() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            far: BinaryHeap::new(),
            far_ahead: FAR_AHEAD,
            lanes: Vec::new(),
            heads: BinaryHeap::new(),
            seq: 0,
            now: Instant::ZERO,
            salt: None,
        }
    }
}

/// A bijective 64-bit mix (SplitMix64's finaliser): consecutive inputs give unrelated outputs.
#[inline]
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<E: Copy> Calendar<E> {
    /// An empty calendar at time zero whose ties run first scheduled, first run.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty calendar at time zero whose ties follow `rule`; `seed` draws the random order.
    pub fn with_ties(rule: TieRule, seed: u64) -> Self {
        Self {
            salt: match rule {
                TieRule::Random => Some(mix(seed ^ 0x7469_6573_2d72_6e64)),
                TieRule::Fifo => None,
            },
            ..Self::default()
        }
    }

    /// Gives the calendar `n` lanes, numbered from 0 (see the module header). Lanes that already
    /// hold entries keep them.
    pub fn add_lanes(&mut self, n: usize) {
        if n > self.lanes.len() {
            self.lanes.resize_with(n, VecDeque::new);
        }
    }

    /// The key of the next event scheduled at `at`: the time, then the tie-break.
    #[inline]
    fn next_key(&mut self, at: Instant) -> u128 {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        // Under the random rule the upper half of the tie-break is a mix of the sequence
        // number (a permutation, so no two entries share it within 2^64 schedules); the
        // lower half keeps the sequence so that keys stay unique either way.
        let tie = match self.salt {
            None => self.seq,
            Some(salt) => (mix(self.seq ^ salt) & 0xFFFF_FFFF_0000_0000) | (self.seq & 0xFFFF_FFFF),
        };
        self.seq += 1;
        (u128::from(at.as_nanos()) << 64) | u128::from(tie)
    }

    /// Schedules `event` at `at` (not earlier than the current time).
    #[inline]
    pub fn schedule(&mut self, at: Instant, event: E) {
        let key = self.next_key(at);
        if at.saturating_since(self.now) > self.far_ahead {
            self.far.push(Entry { key, event });
        } else {
            self.heap.push(Entry { key, event });
        }
    }

    /// Schedules `event` at `at` in lane `lane` (one [`Calendar::add_lanes`] made). It runs
    /// exactly when [`Calendar::schedule`] would have run it; it is cheaper when it comes after
    /// every entry already in the lane, as a FIFO link's arrivals do.
    #[inline]
    pub fn schedule_in_lane(&mut self, lane: usize, at: Instant, event: E) {
        let key = self.next_key(at);
        let fifo = &mut self.lanes[lane];
        match fifo.back() {
            None => {
                fifo.push_back(Entry { key, event });
                self.heads.push(Entry {
                    key,
                    event: lane as u32,
                });
            }
            Some(last) if last.key < key => fifo.push_back(Entry { key, event }),
            Some(_) => self.heap.push(Entry { key, event }),
        }
    }

    /// The smallest key waiting, if any.
    #[inline]
    fn first_key(&self) -> Option<u128> {
        self.first().map(|(key, _)| key)
    }

    /// The smallest key waiting and where it waits.
    #[inline]
    fn first(&self) -> Option<(u128, Source)> {
        let mut first = self.heap.peek().map(|h| (h.key, Source::Heap));
        if let Some(l) = self.heads.peek()
            && first.is_none_or(|(key, _)| l.key < key)
        {
            first = Some((l.key, Source::Lane));
        }
        if let Some(f) = self.far.peek()
            && first.is_none_or(|(key, _)| f.key < key)
        {
            first = Some((f.key, Source::Far));
        }
        first
    }

    /// When the next event is due, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Instant> {
        self.first_key()
            .map(|k| Instant::from_nanos((k >> 64) as u64))
    }

    /// Removes the next event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.pop_due(Instant::from_nanos(u64::MAX))
    }

    /// Removes the next event if it is due at `until` or earlier, and advances the clock to it:
    /// one look for the first entry where [`Calendar::peek_time`] and [`Calendar::pop`] take two.
    #[inline]
    pub fn pop_due(&mut self, until: Instant) -> Option<(Instant, E)> {
        let (key, source) = self.first()?;
        if (key >> 64) as u64 > until.as_nanos() {
            return None;
        }
        let e = match source {
            Source::Heap => self.heap.pop()?,
            Source::Lane => self.pop_lane(),
            Source::Far => self.far.pop()?,
        };
        let t = Instant::from_nanos((e.key >> 64) as u64);
        debug_assert!(t >= self.now, "time went backwards");
        self.now = t;
        Some((t, e.event))
    }

    /// Removes the first entry of the lane whose head is first; its next entry becomes the head.
    #[inline]
    fn pop_lane(&mut self) -> Entry<E> {
        let mut head = self.heads.peek_mut().expect("a lane head to pop");
        let fifo = &mut self.lanes[head.event as usize];
        let e =
            fairstream_core::pop_front_rewinding(fifo).expect("a lane with a head has an entry");
        match fifo.front() {
            Some(next) => head.key = next.key, // sifted down when `head` drops
            None => {
                PeekMut::pop(head);
            }
        }
        e
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len() + self.far.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Whether no event waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.heads.is_empty() && self.far.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(c: &mut Calendar<u32>) -> Vec<u32> {
        std::iter::from_fn(|| c.pop().map(|(_, e)| e)).collect()
    }

    #[test]
    fn fifo_pops_in_time_then_insertion_order() {
        let mut c = Calendar::new();
        for (t, e) in [(20, 0), (10, 1), (20, 2), (10, 3)] {
            c.schedule(Instant::from_nanos(t), e);
        }
        assert_eq!(drain(&mut c), [1, 3, 0, 2]);
        assert_eq!(c.now(), Instant::from_nanos(20));
    }

    #[test]
    fn random_ties_keep_time_order_and_depend_only_on_the_seed() {
        let order = |seed| {
            let mut c = Calendar::with_ties(TieRule::Random, seed);
            for e in 0..64 {
                c.schedule(Instant::from_nanos(u64::from(e % 2) * 100), e);
            }
            let mut times = Vec::new();
            let events: Vec<u32> = std::iter::from_fn(|| {
                c.pop().map(|(t, e)| {
                    times.push(t);
                    e
                })
            })
            .collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]));
            assert!(events[..32].iter().all(|e| e % 2 == 0));
            events
        };
        assert_eq!(order(7), order(7));
        assert_ne!(order(7), order(8));
        let fifo: Vec<u32> = (0..64).filter(|e| e % 2 == 0).collect();
        assert_ne!(order(7)[..32], fifo[..]);
    }

    /// Schedules the same events in one calendar through lanes and in another all in the heap,
    /// popping as it goes, and checks both run them in the same order at the same times.
    fn lanes_match_one_heap(rule: TieRule, seed: u64) {
        let mut rng = fairstream_core::RngStream::derive(seed, "calendar-test", 0);
        let mut draw = |n: u64| (rng.uniform() * n as f64) as u64;
        let mut laned = Calendar::with_ties(rule, seed);
        laned.add_lanes(4);
        let mut plain = Calendar::with_ties(rule, seed);
        let mut last = [0u64; 4];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for e in 0..20_000u32 {
            let now = plain.now().as_nanos();
            match draw(4) {
                0 => {
                    let at = Instant::from_nanos(now + draw(50));
                    laned.schedule(at, e);
                    plain.schedule(at, e);
                }
                1 => {
                    // Pop a few: both must agree.
                    for _ in 0..draw(4) {
                        a.push(laned.pop());
                        b.push(plain.pop());
                    }
                }
                _ => {
                    // Mostly in order, sometimes a repeated instant or one out of order.
                    let lane = draw(4) as usize;
                    let at = match draw(10) {
                        0 => last[lane],
                        1 => now + draw(5),
                        _ => last[lane].max(now) + 1 + draw(30),
                    }
                    .max(now);
                    last[lane] = last[lane].max(at);
                    laned.schedule_in_lane(lane, Instant::from_nanos(at), e);
                    plain.schedule(Instant::from_nanos(at), e);
                }
            }
            assert_eq!(laned.len(), plain.len());
            assert_eq!(laned.peek_time(), plain.peek_time());
        }
        while !plain.is_empty() {
            a.push(laned.pop());
            b.push(plain.pop());
        }
        assert!(laned.is_empty());
        assert_eq!(a, b);
        assert!(a.len() > 10_000);
    }

    #[test]
    fn lanes_run_events_in_the_order_of_one_heap() {
        for seed in 0..4 {
            lanes_match_one_heap(TieRule::Random, seed);
            lanes_match_one_heap(TieRule::Fifo, seed);
        }
    }

    /// Schedules the same events, due up to a second ahead, in a calendar with the far heap and
    /// in one whose entries all go into one heap, popping as it goes (sometimes only what is due
    /// by a bound), and checks both run them in the same order at the same times.
    fn far_heap_matches_one_heap(rule: TieRule, seed: u64) {
        let mut rng = fairstream_core::RngStream::derive(seed, "calendar-far-test", 0);
        let mut draw = |n: u64| (rng.uniform() * n as f64) as u64;
        let mut split = Calendar::with_ties(rule, seed);
        let mut one = Calendar::with_ties(rule, seed);
        one.far_ahead = Duration::from_nanos(u64::MAX);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut far = 0;
        for e in 0..50_000u32 {
            let now = one.now().as_nanos();
            // Near and far, with ties: on a grid of whole milliseconds a third of the time.
            let ahead = match draw(3) {
                0 => draw(20) * 1_000_000,
                1 => draw(FAR_AHEAD.as_nanos() * 2),
                _ => draw(1_000_000_000),
            };
            let at = Instant::from_nanos(now + ahead);
            far += u32::from(ahead > FAR_AHEAD.as_nanos());
            split.schedule(at, e);
            one.schedule(at, e);
            match draw(4) {
                0 => {
                    let until = Instant::from_nanos(now + draw(30_000_000));
                    a.push(split.pop_due(until));
                    b.push(one.pop_due(until));
                }
                1 | 2 => {
                    a.push(split.pop());
                    b.push(one.pop());
                }
                _ => {}
            }
            assert_eq!(split.peek_time(), one.peek_time());
        }
        a.extend(std::iter::from_fn(|| split.pop().map(Some)));
        b.extend(std::iter::from_fn(|| one.pop().map(Some)));
        assert!(far > 10_000, "{far} entries went far");
        assert_eq!(a, b);
    }

    #[test]
    fn the_far_heap_runs_events_in_the_order_of_one_heap() {
        for seed in 0..4 {
            far_heap_matches_one_heap(TieRule::Random, seed);
            far_heap_matches_one_heap(TieRule::Fifo, seed);
        }
    }

    #[test]
    fn random_ties_favour_neither_of_two_same_instant_events() {
        // Schedule pairs (a, b) at one instant, a always first; a should win about half.
        let mut first_a = 0;
        let mut c = Calendar::with_ties(TieRule::Random, 3);
        for round in 0..2000u64 {
            c.schedule(Instant::from_nanos(round), 0u32);
            c.schedule(Instant::from_nanos(round), 1u32);
            if c.pop().map(|(_, e)| e) == Some(0) {
                first_a += 1;
            }
            c.pop();
        }
        assert!((850..1150).contains(&first_a), "{first_a} of 2000");
    }
}
