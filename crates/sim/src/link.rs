//! A link's run-time state: its queue, its transmitter and its error model, plus counters.

use fairstream_core::{Bitrate, Duration, Instant, NodeId, RateSchedule, RngStream};
use fairstream_net::{ErrorModel, Queue};

use crate::{LinkSpec, PERTURBATION_PACKET};

/// Run-time state of one link.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) from: NodeId,
    pub(crate) to: NodeId,
    pub(crate) capacity: RateSchedule,
    pub(crate) delay: Duration,
    pub(crate) queue: Queue,
    pub(crate) error: ErrorModel,
    pub(crate) error_rng: RngStream,
    /// The transmitter is busy until then.
    pub(crate) busy_until: Instant,
    /// A wake-up of the transmitter is in the calendar (at most one at a time). The engine
    /// keeps the invariant: a packet waits in the queue only while the transmitter is busy
    /// and a wake-up is due when it frees, or a wake-up is due when the queue may send.
    pub(crate) wake_scheduled: bool,
    pub(crate) counters: LinkCounters,
    /// Time-weighted queue occupancy: packets × nanoseconds, and when it last changed.
    queue_area: u128,
    queue_changed_at: Instant,
    queue_len: u64,
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
            queue: Queue::new(
                &spec.queue,
                rate,
                spec.delay,
                RngStream::derive(seed, "queue", index as u64),
            ),
            error: spec.error.clone(),
            error_rng: RngStream::derive(seed, "link-error", index as u64),
            busy_until: Instant::ZERO,
            wake_scheduled: false,
            counters: LinkCounters::default(),
            queue_area: 0,
            queue_changed_at: Instant::ZERO,
            queue_len: 0,
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
        self.capacity
            .steps()
            .iter()
            .find(|&&(t, r)| t > now && !r.is_zero())
            .map(|&(t, _)| t)
    }

    /// Accounts the queue length after a change at `now`.
    #[inline]
    pub(crate) fn note_queue(&mut self, now: Instant) {
        let len = self.queue.len_packets() as u64;
        if len != self.queue_len {
            self.queue_area += u128::from(self.queue_len)
                * u128::from(now.saturating_since(self.queue_changed_at).as_nanos());
            self.queue_changed_at = now;
            self.queue_len = len;
        }
    }

    /// Mean queue length in packets over `[0, end]`.
    pub(crate) fn mean_queue(&self, end: Instant) -> f64 {
        let area = self.queue_area
            + u128::from(self.queue_len)
                * u128::from(end.saturating_since(self.queue_changed_at).as_nanos());
        if end.as_nanos() == 0 {
            0.0
        } else {
            area as f64 / end.as_nanos() as f64
        }
    }

    /// Bits the link could have carried over `[from, to)` given its schedule.
    pub(crate) fn capacity_bits(&self, from: Instant, to: Instant) -> f64 {
        if self.capacity.is_constant() {
            return self.capacity.base().as_bps_f64() * to.saturating_since(from).as_secs_f64();
        }
        let mut bits = 0.0;
        let mut t = from;
        let mut rate = self.capacity.rate_at(from);
        for &(at, r) in self
            .capacity
            .steps()
            .iter()
            .filter(|&&(at, _)| at > from && at < to)
        {
            bits += rate.as_bps_f64() * at.saturating_since(t).as_secs_f64();
            t = at;
            rate = r;
        }
        bits + rate.as_bps_f64() * to.saturating_since(t).as_secs_f64()
    }
}
