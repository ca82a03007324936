//! A link's run-time state: its queue, its transmitter and its error model, plus counters.

use fairstream_core::{Bitrate, Duration, Instant, NodeId, Occupancy, RateSchedule, RngStream};
use fairstream_net::{ErrorModel, Queue};

use crate::{LinkSpec, PERTURBATION_PACKET};

/// Run-time state of one link.
///
/// Laid out in the order written, starting on a cache line, with what every packet touches
/// first (transmitter, rate, counters) on one line, then the occupancy and the rate schedule, then
/// the queue on a line of its own, so that a packet's enqueue and transmission touch as few cache
/// lines as they can when thousands of links do not fit in the cache (B2's shape with 1024 flows
/// has 4098 links): one, for a packet that passes straight through an idle lossless drop-tail
/// link with a limit in packets (the first line knows the queue is empty), three when it waits
/// in the queue; the error model is read only on a link that loses packets. Closing a series
/// bin reads only the first line of an idle link with a constant rate.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(crate) struct Link {
    /// The transmitter is busy until then.
    pub(crate) busy_until: Instant,
    pub(crate) delay: Duration,
    /// The rate, when the link's is constant (see `constant_rate`).
    rate: Bitrate,
    pub(crate) counters: LinkCounters,
    /// A wake-up of the transmitter is in the calendar (at most one at a time). The engine
    /// keeps the invariant: a packet waits in the queue only while the transmitter is busy
    /// and a wake-up is due when it frees, or a wake-up is due when the queue may send.
    pub(crate) wake_scheduled: bool,
    /// The link loses nothing (its error model is none): a transmission need not look at the
    /// model, two cache lines further on.
    pub(crate) lossless: bool,
    /// The rate never changes: `rate` is it, and `capacity` is not read per packet.
    constant_rate: bool,
    /// What an empty queue does with a packet offered to an idle transmitter.
    straight: Straight,
    /// Packets waiting in the queue as of its last change ([`Link::note_queue`], after every
    /// enqueue and dequeue that changes it): what each packet asks, here rather than on the
    /// queue's line.
    waiting: u32,
    /// Time-weighted queue occupancy in packets.
    occupancy: Occupancy,
    pub(crate) capacity: RateSchedule,
    pub(crate) queue: Queue,
    pub(crate) error: ErrorModel,
    pub(crate) error_rng: RngStream,
    pub(crate) from: NodeId,
    pub(crate) to: NodeId,
}

/// Whether a packet offered to an idle transmitter while the queue is empty may pass straight
/// to it ([`Queue::passes_straight_through`]), found once from the empty queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Straight {
    /// Any packet does (a drop-tail queue with room for a packet).
    Always,
    /// None does (a discipline that decides at enqueue).
    Never,
    /// The queue decides by the packet's size (a drop-tail queue limited in bytes).
    BySize,
}

impl Straight {
    fn of(queue: &Queue) -> Self {
        if queue.passes_straight_through(u32::MAX) {
            Self::Always
        } else if queue.passes_straight_through(1) {
            Self::BySize
        } else {
            Self::Never
        }
    }
}

/// Cumulative counters of a link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LinkCounters {
    pub(crate) packets_forwarded: u64,
    pub(crate) bytes_forwarded: u64,
    pub(crate) packets_dropped: u64,
    pub(crate) packets_corrupted: u64,
}

impl Link {
    /// The run-time state of `spec`, the link numbered `index` of a run with master `seed`;
    /// `perturb` is the engine's delay perturbation (a fraction of an MTU's transmission time).
    pub(crate) fn new(spec: &LinkSpec, seed: u64, index: usize, perturb: f64) -> Self {
        let rate = spec.capacity.base();
        let mut extra = Duration::ZERO;
        if perturb > 0.0 && !rate.is_zero() {
            let mtu_time = rate.transmit_time(PERTURBATION_PACKET).as_secs_f64();
            let mut rng = RngStream::derive(seed, "delay-perturbation", index as u64);
            extra = Duration::from_secs_f64(rng.uniform() * perturb * mtu_time);
        }
        let queue = spec.build_queue(seed, index);
        Self {
            from: spec.from,
            to: spec.to,
            rate,
            constant_rate: spec.capacity.is_constant(),
            capacity: spec.capacity.clone(),
            delay: spec.delay + extra,
            straight: Straight::of(&queue),
            waiting: 0,
            queue,
            error: spec.error.clone(),
            error_rng: LinkSpec::error_rng(seed, index),
            busy_until: Instant::ZERO,
            wake_scheduled: false,
            lossless: spec.error == ErrorModel::None,
            counters: LinkCounters::default(),
            occupancy: Occupancy::default(),
        }
    }

    /// The rate in force at `now`.
    #[inline]
    pub(crate) fn rate_at(&self, now: Instant) -> Bitrate {
        if self.constant_rate {
            self.rate
        } else {
            self.capacity.rate_at(now)
        }
    }

    /// The next instant after `now` at which the rate becomes non-zero, if any.
    pub(crate) fn next_nonzero_rate(&self, now: Instant) -> Option<Instant> {
        self.capacity.next_nonzero_after(now)
    }

    /// Accounts the queue length after a change at `now`.
    #[inline]
    pub(crate) fn note_queue(&mut self, now: Instant) {
        let waiting = self.queue.len_packets();
        self.waiting = waiting as u32;
        self.occupancy.set(now, waiting as u64);
    }

    /// Whether packets wait in the queue (read from the link's first line).
    #[inline]
    pub(crate) fn backlogged(&self) -> bool {
        debug_assert_eq!(self.waiting as usize, self.queue.len_packets());
        self.waiting > 0
    }

    /// Whether a packet of `size` bytes offered now to the idle transmitter may go to it
    /// directly, the queue left as it is ([`Queue::passes_straight_through`]).
    #[inline]
    pub(crate) fn passes_straight_through(&self, size: u32) -> bool {
        !self.backlogged()
            && match self.straight {
                Straight::Always => true,
                Straight::Never => false,
                Straight::BySize => self.queue.passes_straight_through(size),
            }
    }

    /// Mean queue length in packets over `[0, end]`.
    pub(crate) fn mean_queue(&self, end: Instant) -> f64 {
        self.occupancy.mean(end)
    }

    /// Bits the link could have carried over `[from, to)` given its schedule (a constant rate
    /// read from the first line).
    pub(crate) fn capacity_bits(&self, from: Instant, to: Instant) -> f64 {
        if self.constant_rate {
            self.rate.bits_in(to.saturating_since(from))
        } else {
            self.capacity.bits_between(from, to)
        }
    }

    /// Packets and bytes waiting in the queue; an empty queue is known from the first line,
    /// without reading the queue's.
    pub(crate) fn queue_len(&self) -> (usize, u64) {
        if self.backlogged() {
            (self.queue.len_packets(), self.queue.len_bytes())
        } else {
            debug_assert_eq!(self.queue.len_bytes(), 0, "bytes wait in an empty queue");
            (0, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    #[test]
    fn an_empty_queue_says_once_what_passes_straight_through_it() {
        use fairstream_core::DataSize;
        use fairstream_net::QueueLimit;
        use fairstream_net::queue::{DropTail, LimitCounting};
        let of = |q: DropTail| Straight::of(&Queue::DropTail(q));
        assert_eq!(of(DropTail::new(QueueLimit::Packets(50))), Straight::Always);
        let bytes = QueueLimit::Bytes(DataSize::bytes(3000));
        assert_eq!(of(DropTail::new(bytes)), Straight::BySize);
        // ns-2's counting holds one packet less: a limit of one holds none waiting.
        let ns2 = |l| DropTail::with_counting(l, LimitCounting::Ns2);
        assert_eq!(of(ns2(QueueLimit::Packets(1))), Straight::Never);
        assert_eq!(of(ns2(QueueLimit::Packets(2))), Straight::Always);
    }

    #[test]
    fn a_bins_close_reads_what_the_schedule_and_the_queue_would_say() {
        use fairstream_core::{NodeId, RateSchedule};
        use fairstream_net::queue::QueuedPacket;
        let (a, b) = (NodeId(0), NodeId(1));
        let constant = LinkSpec::new(a, b, Bitrate::mbps(10), Duration::from_millis(5));
        let mut stepped = constant.clone();
        let steps = vec![(Instant::ZERO + Duration::from_millis(300), Bitrate::kbps(1))];
        stepped.capacity = RateSchedule::new(Bitrate::mbps(7), steps);
        for spec in [&constant, &stepped] {
            let link = Link::new(spec, 1, 0, 0.0);
            for (from, to) in [(0, 250), (250, 1250), (1000, 1001)] {
                let at = |ms| Instant::ZERO + Duration::from_millis(ms);
                let (from, to) = (at(from), at(to));
                let bits = spec.capacity.bits_between(from, to);
                assert_eq!(link.capacity_bits(from, to).to_bits(), bits.to_bits());
            }
        }
        let mut link = Link::new(&constant, 1, 0, 0.0);
        assert_eq!(link.queue_len(), (0, 0));
        let Queue::DropTail(q) = &mut link.queue else {
            panic!("a drop-tail queue")
        };
        for (slot, size) in [(0, 1000), (1, 500)] {
            let pkt = QueuedPacket {
                slot,
                size,
                enqueued_at: Instant::ZERO,
            };
            q.enqueue(Instant::ZERO, pkt).expect("room");
        }
        link.note_queue(Instant::ZERO);
        assert_eq!(link.queue_len(), (2, 1500));
        link.queue.dequeue(Instant::ZERO);
        link.note_queue(Instant::ZERO);
        assert_eq!(link.queue_len(), (1, 500));
    }

    #[test]
    fn a_packet_passing_an_idle_lossless_drop_tail_link_touches_one_of_its_lines() {
        let end = |offset: usize, size: usize| offset + size;
        for (field, offset, size) in [
            (
                "busy_until",
                offset_of!(Link, busy_until),
                size_of::<Instant>(),
            ),
            ("delay", offset_of!(Link, delay), size_of::<Duration>()),
            ("rate", offset_of!(Link, rate), size_of::<Bitrate>()),
            (
                "counters",
                offset_of!(Link, counters),
                size_of::<LinkCounters>(),
            ),
            ("wake_scheduled", offset_of!(Link, wake_scheduled), 1),
            ("lossless", offset_of!(Link, lossless), 1),
            ("constant_rate", offset_of!(Link, constant_rate), 1),
            (
                "straight",
                offset_of!(Link, straight),
                size_of::<Straight>(),
            ),
            ("waiting", offset_of!(Link, waiting), size_of::<u32>()),
        ] {
            assert!(end(offset, size) <= 64, "{field} on the transmitter's line");
        }
        assert!(offset_of!(Link, occupancy) >= 64 && offset_of!(Link, capacity) >= 64);
        assert_eq!(
            offset_of!(Link, queue),
            128,
            "the queue on a line of its own"
        );
    }
}
