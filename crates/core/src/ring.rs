//! [`pop_front_rewinding`]: taking the first entry of a ring buffer so that, once it is empty,
//! the next entry goes back into its first slot.
//!
//! A ring that a packet at a time passes through (a link's queue or its packets in flight, an
//! endpoint's packets to send) would otherwise write each entry one slot further on, through
//! its whole room, and with thousands of rings every entry would land on a line the cache had
//! long let go. Rewound, a ring that holds one entry at a time keeps using one line.

use std::collections::VecDeque;

/// Removes and returns the first entry of `ring`; if that leaves it empty, the next entry
/// pushed goes into the ring's first slot.
#[inline]
pub fn pop_front_rewinding<T>(ring: &mut VecDeque<T>) -> Option<T> {
    let first = ring.pop_front();
    if ring.is_empty() {
        ring.clear(); // an empty `VecDeque` starts again at its first slot
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_ring_takes_its_next_entry_into_its_first_slot() {
        let mut ring = VecDeque::with_capacity(4);
        ring.push_back(1);
        let first_slot = ring.as_slices().0.as_ptr();
        assert_eq!(pop_front_rewinding(&mut ring), Some(1));
        ring.push_back(2);
        assert_eq!(ring.as_slices().0.as_ptr(), first_slot);
    }

    #[test]
    fn a_ring_that_still_holds_entries_keeps_its_order() {
        let mut ring = VecDeque::from([1, 2, 3]);
        assert_eq!(pop_front_rewinding(&mut ring), Some(1));
        ring.push_back(4);
        assert_eq!(ring, [2, 3, 4]);
        assert_eq!(pop_front_rewinding(&mut VecDeque::<u8>::new()), None);
    }
}
