//! Drop-tail FIFO with a limit in packets or bytes.
//!
//! Also home of [`Fifo`], the packet store that every discipline of this module is built on:
//! a ring buffer preallocated from the queue limit plus a running byte count, so that enqueue
//! and dequeue are O(1) and allocate nothing once the ring has reached its working size.

use std::collections::VecDeque;

use fairstream_core::{DataSize, Instant};
use fairstream_records::{Column, ColumnKind, Declared, Value};

use super::{Dequeue, QueueLimit, QueuedPacket};

/// Most slots reserved up front; a queue with a larger limit grows on demand (amortised,
/// and a ring never shrinks, so the steady state does not allocate either way).
const MAX_PREALLOC: usize = 4096;

/// Smallest packet assumed when sizing the ring for a byte limit (a bare TCP/IP header
/// is 40 B; 64 B is the Ethernet minimum frame).
const MIN_PACKET_FOR_PREALLOC: u64 = 64;

/// A FIFO of packets with a running byte count.
#[derive(Clone, Debug)]
pub(super) struct Fifo {
    pkts: VecDeque<QueuedPacket>,
    bytes: u64,
}

impl Fifo {
    /// An empty FIFO with room for as many packets as `limit` can hold (capped).
    pub(super) fn for_limit(limit: QueueLimit) -> Self {
        let slots = match limit {
            QueueLimit::Packets(n) => u64::from(n),
            QueueLimit::Bytes(b) => b.as_bytes() / MIN_PACKET_FOR_PREALLOC + 1,
        };
        let slots = usize::try_from(slots)
            .unwrap_or(MAX_PREALLOC)
            .min(MAX_PREALLOC);
        Self {
            pkts: VecDeque::with_capacity(slots),
            bytes: 0,
        }
    }

    /// Bytes of the room it allocated.
    pub(super) fn capacity_bytes(&self) -> usize {
        self.pkts.capacity() * size_of::<QueuedPacket>()
    }

    /// Whether a packet of `size` bytes may join without exceeding `limit`.
    #[inline]
    pub(super) fn fits(&self, limit: QueueLimit, size: u32) -> bool {
        match limit {
            QueueLimit::Packets(n) => (self.pkts.len() as u64) < u64::from(n),
            QueueLimit::Bytes(b) => self.bytes + u64::from(size) <= b.as_bytes(),
        }
    }

    /// Appends `pkt` at the tail.
    #[inline]
    pub(super) fn push(&mut self, pkt: QueuedPacket) {
        self.bytes += u64::from(pkt.size);
        self.pkts.push_back(pkt);
    }

    /// Removes and returns the head.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<QueuedPacket> {
        let pkt = fairstream_core::pop_front_rewinding(&mut self.pkts)?;
        self.bytes -= u64::from(pkt.size);
        Some(pkt)
    }

    /// The head, without removing it.
    #[inline]
    pub(super) fn front(&self) -> Option<&QueuedPacket> {
        self.pkts.front()
    }

    /// Packets held.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.pkts.len()
    }

    /// Whether no packet is held.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// Bytes held.
    #[inline]
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Which packets count against a drop-tail limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LimitCounting {
    /// The packets waiting, not the one being transmitted (Linux `pfifo`/`bfifo`): a limit of
    /// `n` packets holds `n` waiting; a byte limit `b` takes an arrival if the bytes waiting plus
    /// its size stay within `b`.
    #[default]
    Waiting,
    /// ns-2's `Queue/DropTail`: an arrival is dropped when the packets waiting plus one reach
    /// the limit (`q_->length() + 1 >= qlim_`), so a limit of `n` holds `n - 1` waiting (the
    /// packet on the wire makes `n`); a byte limit takes an arrival only if the bytes waiting
    /// plus its size stay below it.
    Ns2,
}

/// A drop-tail queue's parameter in the link summary.
pub(super) static COLUMNS: [&Column; 1] = [&COUNTING];
static COUNTING: Column = Column::new(
    "droptail_counting",
    ColumnKind::Text,
    "",
    "drop-tail: which packets count against the limit, `pfifo` (those waiting) or `ns2` (the one on the wire too, so a limit of n holds n - 1 waiting)",
);

impl LimitCounting {
    /// The parameter, as the link summary shows it.
    pub(super) fn params(self) -> Declared {
        vec![(&COUNTING, Value::Text(self.keyword()))]
    }

    /// The scenario keyword: `"pfifo"` or `"ns2"`.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::Waiting => "pfifo",
            Self::Ns2 => "ns2",
        }
    }
}

/// First in, first out; an arrival that would exceed the limit is dropped. Which packets
/// count against the limit is a [`LimitCounting`].
#[derive(Clone, Debug)]
#[repr(C)]
pub struct DropTail {
    // What every packet touches first (with the tag of the `Queue` holding it: one cache line).
    fifo: Fifo,
    /// The limit on the packets waiting that `limit` comes to under its counting (ns-2's
    /// counting holds one packet, or one byte, less).
    waiting_limit: QueueLimit,
    limit: QueueLimit,
}

impl DropTail {
    /// An empty drop-tail queue with `limit`, counting the packets waiting.
    pub fn new(limit: QueueLimit) -> Self {
        Self::with_counting(limit, LimitCounting::Waiting)
    }

    /// An empty drop-tail queue with `limit`, counted as `counting` says.
    pub fn with_counting(limit: QueueLimit, counting: LimitCounting) -> Self {
        let waiting_limit = match (counting, limit) {
            (LimitCounting::Waiting, l) => l,
            (LimitCounting::Ns2, QueueLimit::Packets(n)) => {
                QueueLimit::Packets(n.saturating_sub(1))
            }
            (LimitCounting::Ns2, QueueLimit::Bytes(b)) => {
                QueueLimit::Bytes(DataSize::bytes(b.as_bytes().saturating_sub(1)))
            }
        };
        Self {
            limit,
            waiting_limit,
            fifo: Fifo::for_limit(limit),
        }
    }

    /// Offers `pkt`; gives it back as `Err` if it does not fit.
    #[inline]
    pub fn enqueue(&mut self, _now: Instant, pkt: QueuedPacket) -> Result<(), QueuedPacket> {
        if self.fifo.fits(self.waiting_limit, pkt.size) {
            self.fifo.push(pkt);
            Ok(())
        } else {
            Err(pkt)
        }
    }

    /// Whether a packet of `size` bytes would be taken and be the next to leave: the queue is
    /// empty and the packet fits (see [`super::Queue::passes_straight_through`]).
    #[inline]
    pub fn passes_straight_through(&self, size: u32) -> bool {
        self.fifo.is_empty() && self.fifo.fits(self.waiting_limit, size)
    }

    /// The head packet, or [`Dequeue::Empty`].
    #[inline]
    pub fn dequeue(&mut self, _now: Instant) -> Dequeue {
        self.fifo.pop().map_or(Dequeue::Empty, Dequeue::Packet)
    }

    /// Packets waiting.
    #[inline]
    pub fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    /// Bytes waiting.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    /// The limit.
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use fairstream_core::DataSize;

    use super::*;

    fn pkt(slot: u32, size: u32) -> QueuedPacket {
        QueuedPacket {
            slot,
            size,
            enqueued_at: Instant::from_nanos(u64::from(slot)),
        }
    }

    #[test]
    fn what_a_packet_touches_fits_one_cache_line_with_the_queues_tag() {
        // `Queue` is `repr(u8)`: its tag, then the variant from offset 8.
        let touched = std::mem::offset_of!(DropTail, waiting_limit) + size_of::<QueueLimit>();
        assert!(8 + touched <= 64, "{touched} bytes after the tag");
    }

    #[test]
    fn packet_limit_drops_the_arrival_that_finds_the_queue_full() {
        let mut q = DropTail::new(QueueLimit::Packets(3));
        let t = Instant::ZERO;
        for i in 0..3 {
            assert_eq!(q.enqueue(t, pkt(i, 1500)), Ok(()));
        }
        assert_eq!(q.enqueue(t, pkt(3, 40)), Err(pkt(3, 40)));
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.len_bytes(), 4500);
        assert!(matches!(q.dequeue(t), Dequeue::Packet(p) if p.slot == 0));
        assert_eq!(q.enqueue(t, pkt(4, 40)), Ok(()));
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.len_bytes(), 3040);
    }

    #[test]
    fn a_packet_passes_straight_through_exactly_when_enqueue_then_dequeue_gives_it_back() {
        let queues = [
            DropTail::new(QueueLimit::Packets(2)),
            DropTail::with_counting(QueueLimit::Packets(1), LimitCounting::Ns2),
            DropTail::new(QueueLimit::Bytes(DataSize::bytes(1000))),
            DropTail::with_counting(QueueLimit::Bytes(DataSize::bytes(1000)), LimitCounting::Ns2),
        ];
        let t = Instant::ZERO;
        for empty in queues {
            let mut one_waiting = empty.clone();
            let _ = one_waiting.enqueue(t, pkt(9, 40)); // dropped where nothing may wait
            for q in [empty, one_waiting] {
                for size in [40, 999, 1000, 1500] {
                    let mut tried = q.clone();
                    let gives_it_back = tried.enqueue(t, pkt(1, size)).is_ok()
                        && matches!(tried.dequeue(t), Dequeue::Packet(p) if p == pkt(1, size))
                        && tried.len_packets() == q.len_packets()
                        && tried.len_bytes() == q.len_bytes();
                    assert_eq!(
                        q.passes_straight_through(size),
                        gives_it_back,
                        "{q:?}, {size} B"
                    );
                }
            }
        }
    }

    #[test]
    fn byte_limit_accepts_exact_fit_and_drops_overflow() {
        let mut q = DropTail::new(QueueLimit::Bytes(DataSize::bytes(3000)));
        let t = Instant::ZERO;
        assert_eq!(q.enqueue(t, pkt(0, 1500)), Ok(()));
        assert_eq!(q.enqueue(t, pkt(1, 1000)), Ok(()));
        assert_eq!(q.enqueue(t, pkt(2, 501)), Err(pkt(2, 501)));
        assert_eq!(q.enqueue(t, pkt(3, 500)), Ok(()));
        assert_eq!(q.len_bytes(), 3000);
        assert_eq!(q.enqueue(t, pkt(4, 1)), Err(pkt(4, 1)));
        assert_eq!(q.len_packets(), 3);
    }

    #[test]
    fn fifo_order_and_empty() {
        let mut q = DropTail::new(QueueLimit::Packets(100));
        let t = Instant::ZERO;
        assert_eq!(q.dequeue(t), Dequeue::Empty);
        for i in 0..50 {
            q.enqueue(t, pkt(i, 100 + i)).unwrap(); // limit 100 > 50 packets
        }
        for i in 0..50 {
            assert_eq!(q.dequeue(t), Dequeue::Packet(pkt(i, 100 + i)));
        }
        assert_eq!(q.dequeue(t), Dequeue::Empty);
        assert_eq!(q.len_bytes(), 0);
        assert_eq!(q.len_packets(), 0);
    }

    #[test]
    fn ns2_counting_holds_one_packet_less() {
        let mut q = DropTail::with_counting(QueueLimit::Packets(3), LimitCounting::Ns2);
        let t = Instant::ZERO;
        for i in 0..2 {
            assert_eq!(q.enqueue(t, pkt(i, 1500)), Ok(()));
        }
        assert_eq!(q.enqueue(t, pkt(2, 40)), Err(pkt(2, 40)));
        assert_eq!(q.len_packets(), 2);
        let mut q =
            DropTail::with_counting(QueueLimit::Bytes(DataSize::bytes(3000)), LimitCounting::Ns2);
        assert_eq!(q.enqueue(t, pkt(0, 1500)), Ok(()));
        assert_eq!(q.enqueue(t, pkt(1, 1500)), Err(pkt(1, 1500)));
        assert_eq!(q.enqueue(t, pkt(2, 1499)), Ok(()));
    }

    #[test]
    fn zero_limit_drops_everything() {
        let mut q = DropTail::new(QueueLimit::Packets(0));
        assert!(q.enqueue(Instant::ZERO, pkt(0, 1)).is_err());
        let mut q = DropTail::new(QueueLimit::Bytes(DataSize::ZERO));
        assert!(q.enqueue(Instant::ZERO, pkt(0, 1)).is_err());
    }

    #[test]
    fn steady_state_does_not_grow_the_ring() {
        let mut q = DropTail::new(QueueLimit::Packets(64));
        let cap = q.fifo.pkts.capacity();
        assert!(cap >= 64);
        let t = Instant::ZERO;
        for round in 0..1000u32 {
            for i in 0..64 {
                q.enqueue(t, pkt(round * 64 + i, 1000)).unwrap(); // 64 fit the limit
            }
            while q.dequeue(t) != Dequeue::Empty {}
        }
        assert_eq!(q.fifo.pkts.capacity(), cap);
    }
}
