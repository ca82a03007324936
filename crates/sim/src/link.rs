//! A link's run-time state: its queue, its transmitter and its error model, plus counters.

use fairstream_core::{Bitrate, Duration, Instant, NodeId, Occupancy, RateSchedule, RngStream};
use fairstream_net::{ErrorModel, Queue};

use crate::{LinkSpec, PERTURBATION_PACKET};

/// Run-time state of one link.
///
/// Laid out in the order written, starting on a cache line, with what every packet touches
/// first (transmitter, rate, occupancy, counters, then the queue on a line of its own), so that a
/// packet's enqueue and transmission touch as few cache lines as they can when thousands of links
/// do not fit in the cache (B2's shape with 1024 flows has 4098 links): three, on a lossless
/// drop-tail link, whose error model is never read.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(crate) struct Link {
    /// The transmitter is busy until then.
    pub(crate) busy_until: Instant,
    pub(crate) delay: Duration,
    pub(crate) capacity: RateSchedule,
    /// A wake-up of the transmitter is in the calendar (at most one at a time). The engine
    /// keeps the invariant: a packet waits in the queue only while the transmitter is busy
    /// and a wake-up is due when it frees, or a wake-up is due when the queue may send.
    pub(crate) wake_scheduled: bool,
    /// The link loses nothing (its error model is none): a transmission need not look at the
    /// model, two cache lines further on.
    pub(crate) lossless: bool,
    /// Time-weighted queue occupancy in packets.
    occupancy: Occupancy,
    pub(crate) counters: LinkCounters,
    pub(crate) queue: Queue,
    pub(crate) error: ErrorModel,
    pub(crate) error_rng: RngStream,
    pub(crate) from: NodeId,
    pub(crate) to: NodeId,
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
        Self {
            from: spec.from,
            to: spec.to,
            capacity: spec.capacity.clone(),
            delay: spec.delay + extra,
            queue: spec.build_queue(seed, index),
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
        if self.capacity.is_constant() {
            self.capacity.base()
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
        self.occupancy.set(now, self.queue.len_packets() as u64);
    }

    /// Mean queue length in packets over `[0, end]`.
    pub(crate) fn mean_queue(&self, end: Instant) -> f64 {
        self.occupancy.mean(end)
    }

    /// Bits the link could have carried over `[from, to)` given its schedule.
    pub(crate) fn capacity_bits(&self, from: Instant, to: Instant) -> f64 {
        self.capacity.bits_between(from, to)
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    #[test]
    fn a_packet_touches_three_lines_of_a_lossless_drop_tail_link() {
        assert!(offset_of!(Link, lossless) < 64, "the transmitter's line");
        let counters_end = offset_of!(Link, counters) + size_of::<LinkCounters>();
        assert!(offset_of!(Link, occupancy) >= 64 && counters_end <= 128);
        assert_eq!(
            offset_of!(Link, queue),
            128,
            "the queue on a line of its own"
        );
    }
}
