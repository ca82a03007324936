//! One emulated link in real time: the simulator's own elements (the `fairstream-net` queue
//! discipline and error model, the capacity schedule), driven on **logical** time.
//!
//! Every instant here is the link model's, never the instant the emulator happened to wake up:
//! a packet starts transmission when the model says the transmitter frees (`busy_until`), ends
//! it `size / rate` later and reaches the far end one propagation delay after that. A late
//! wake-up of the forwarder therefore delays only the packets it handles late, never the ones
//! behind them (what Rattan calls logical timestamps against timer drift). The transmitter
//! follows the simulator's rules (`fairstream_sim`'s engine): work-conserving, a token bucket's
//! "not before", a zero-rate step waits for the next non-zero one, the error model drawn once
//! per packet as it is transmitted, and the random streams derived from the same
//! `(seed, kind, link index)` as in a simulation of the scenario.

use std::collections::VecDeque;

use fairstream_core::{Bitrate, DataSize, Duration, Instant, Occupancy, RateSchedule, RngStream};
use fairstream_net::{Dequeue, ErrorModel, Queue, QueuedPacket};
use fairstream_proto::Packet;
use fairstream_sim::LinkSpec;

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offer {
    /// Queued (or in transmission).
    Accepted,
    /// The queue dropped this packet (perhaps another than the one offered).
    Dropped(u32),
}

/// Counters of a link, for the whole run or one bin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LinkCounts {
    pub(crate) packets_forwarded: u64,
    pub(crate) bytes_forwarded: u64,
    pub(crate) packets_dropped: u64,
    pub(crate) packets_corrupted: u64,
}

/// An emulated link.
#[derive(Debug)]
pub(crate) struct EmuLink {
    capacity: RateSchedule,
    delay: Duration,
    queue: Queue,
    error: ErrorModel,
    error_rng: RngStream,
    /// The transmitter is busy until then (logical).
    busy_until: Instant,
    /// When the transmitter next looks at its queue, if it must (a backlog, a token bucket's
    /// "not before", a zero-rate step).
    wake: Option<Instant>,
    /// Packets on the wire: (arrival at the far end, slot), in order of arrival.
    in_flight: VecDeque<(Instant, u32)>,
    /// Packets lost to the error model, to free (their slots) by the forwarder.
    pub(crate) corrupted: Vec<u32>,
    pub(crate) total: LinkCounts,
    pub(crate) bin: LinkCounts,
    occupancy: Occupancy,
}

impl EmuLink {
    /// The link `spec`, number `index` of a scenario with master `seed`; room for `in_flight`
    /// packets on the wire before any allocation.
    pub(crate) fn new(spec: &LinkSpec, seed: u64, index: usize, in_flight: usize) -> Self {
        Self {
            capacity: spec.capacity.clone(),
            delay: spec.delay,
            queue: spec.build_queue(seed, index),
            error: spec.error.clone(),
            error_rng: LinkSpec::error_rng(seed, index),
            busy_until: Instant::ZERO,
            wake: None,
            in_flight: VecDeque::with_capacity(in_flight),
            corrupted: Vec::with_capacity(64),
            total: LinkCounts::default(),
            bin: LinkCounts::default(),
            occupancy: Occupancy::default(),
        }
    }

    /// Packets that can be on the wire of `spec` at once, at most (its delay over the
    /// transmission time of a 40-byte packet at its highest rate), capped at `cap`.
    pub(crate) fn max_in_flight(spec: &LinkSpec, cap: usize) -> usize {
        let t = spec.capacity.max().transmit_time(DataSize::bytes(40));
        let n = spec.delay.as_nanos() / t.as_nanos().max(1) + 2;
        (n as usize).min(cap)
    }

    /// The next logical instant something happens on the link (a packet reaches the far end,
    /// or the transmitter looks at its queue).
    #[inline]
    pub(crate) fn next_event(&self) -> Option<Instant> {
        match (self.in_flight.front(), self.wake) {
            (Some(&(a, _)), Some(w)) => Some(a.min(w)),
            (Some(&(a, _)), None) => Some(a),
            (None, w) => w,
        }
    }

    /// When the next packet on the wire reaches the far end.
    #[inline]
    pub(crate) fn next_arrival(&self) -> Option<Instant> {
        self.in_flight.front().map(|&(a, _)| a)
    }

    /// When the transmitter next looks at its queue.
    #[inline]
    pub(crate) fn next_wake(&self) -> Option<Instant> {
        self.wake
    }

    /// The queue discipline, as built for the link.
    pub(crate) fn queue(&self) -> &Queue {
        &self.queue
    }

    /// The propagation delay.
    pub(crate) fn delay(&self) -> Duration {
        self.delay
    }

    /// Offers the packet in `slot` (`packet` describes it to the discipline) at logical `now`.
    #[inline]
    pub(crate) fn offer(&mut self, now: Instant, slot: u32, packet: &mut Packet) -> Offer {
        let queued = QueuedPacket {
            slot,
            size: packet.size.as_bytes() as u32,
            enqueued_at: now,
        };
        match self.queue.enqueue(now, queued, packet) {
            Err(dropped) => {
                self.total.packets_dropped += 1;
                self.bin.packets_dropped += 1;
                Offer::Dropped(dropped.slot)
            }
            Ok(()) => {
                self.note_queue(now);
                if self.wake.is_some() {
                    // The transmitter looks at the queue when it is due.
                } else if now >= self.busy_until {
                    self.start_tx(now);
                } else {
                    self.wake = Some(self.busy_until);
                }
                Offer::Accepted
            }
        }
    }

    /// Runs the link's events due at logical `t` (its [`Self::next_event`]): the transmitter's
    /// wake-up, then at most one arrival at the far end, returned as its slot.
    #[inline]
    pub(crate) fn step(&mut self, t: Instant) -> Option<u32> {
        if self.wake.is_some_and(|w| w <= t) {
            let w = self.wake.take().unwrap_or(t);
            self.start_tx(w);
        }
        match self.in_flight.front() {
            Some(&(a, slot)) if a <= t => {
                self.in_flight.pop_front();
                Some(slot)
            }
            _ => None,
        }
    }

    fn start_tx(&mut self, now: Instant) {
        let rate = self.rate_at(now);
        if rate.is_zero() {
            self.wake = self.capacity.next_nonzero_after(now);
            return;
        }
        match self.queue.dequeue(now) {
            Dequeue::Packet(q) => {
                self.note_queue(now);
                let tx = rate.transmit_time(DataSize::bytes(u64::from(q.size)));
                self.busy_until = now + tx;
                for c in [&mut self.total, &mut self.bin] {
                    c.packets_forwarded += 1;
                    c.bytes_forwarded += u64::from(q.size);
                }
                if self.error.corrupts(&mut self.error_rng) {
                    self.total.packets_corrupted += 1;
                    self.bin.packets_corrupted += 1;
                    self.corrupted.push(q.slot);
                } else {
                    self.in_flight
                        .push_back((self.busy_until + self.delay, q.slot));
                }
                if self.queue.len_packets() > 0 {
                    self.wake = Some(self.busy_until);
                }
            }
            Dequeue::NotBefore(t) => self.wake = Some(t.max(now)),
            Dequeue::Empty => {}
        }
    }

    #[inline]
    fn rate_at(&self, now: Instant) -> Bitrate {
        if self.capacity.is_constant() {
            self.capacity.base()
        } else {
            self.capacity.rate_at(now)
        }
    }

    #[inline]
    fn note_queue(&mut self, now: Instant) {
        self.occupancy.set(now, self.queue.len_packets() as u64);
    }

    /// Packets and bytes waiting.
    pub(crate) fn queue_len(&self) -> (u64, u64) {
        (self.queue.len_packets() as u64, self.queue.len_bytes())
    }

    /// Mean queue length in packets over `[0, end]`.
    pub(crate) fn mean_queue(&self, end: Instant) -> f64 {
        self.occupancy.mean(end)
    }

    /// Bits the link could have carried over `[from, to)`.
    pub(crate) fn capacity_bits(&self, from: Instant, to: Instant) -> f64 {
        self.capacity.bits_between(from, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_core::{FlowId, NodeId};
    use fairstream_proto::cbr::UdpDatagram;
    use fairstream_proto::{Direction, Header};

    fn packet(size: u64) -> Packet {
        Packet {
            flow: FlowId(0),
            direction: Direction::Forward,
            size: DataSize::bytes(size),
            payload: 0,
            sent_at: Instant::ZERO,
            header: Header::Udp(UdpDatagram { seq: 0 }),
        }
    }

    fn at(us: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(us)
    }

    #[test]
    fn departures_follow_the_model_not_the_wake_ups() {
        // 1500 B at 12 Mbit/s: 1 ms each; 10 ms of delay.
        let spec = LinkSpec::new(
            NodeId(0),
            NodeId(1),
            Bitrate::mbps(12),
            Duration::from_millis(10),
        );
        let mut l = EmuLink::new(&spec, 1, 0, 16);
        for slot in 0..3 {
            assert_eq!(l.offer(at(0), slot, &mut packet(1500)), Offer::Accepted);
        }
        // The forwarder wakes 700 µs late for every event: the packets still arrive 1 ms apart,
        // from 11 ms on.
        let mut arrivals = Vec::new();
        while let Some(t) = l.next_event() {
            let late = t + Duration::from_micros(700);
            let _ = late; // the real instant plays no part in the model
            if let Some(slot) = l.step(t) {
                arrivals.push((slot, t));
            }
        }
        assert_eq!(
            arrivals,
            vec![(0, at(11_000)), (1, at(12_000)), (2, at(13_000))]
        );
        assert_eq!(l.total.packets_forwarded, 3);
    }

    #[test]
    fn a_full_drop_tail_queue_drops() {
        let mut spec = LinkSpec::new(NodeId(0), NodeId(1), Bitrate::mbps(1), Duration::ZERO);
        spec.queue = fairstream_net::QueueConfig::DropTail {
            limit: fairstream_net::QueueLimit::Packets(2),
            counting: fairstream_net::LimitCounting::Waiting,
        };
        let mut l = EmuLink::new(&spec, 1, 0, 4);
        let offers: Vec<Offer> = (0..5)
            .map(|s| l.offer(at(0), s, &mut packet(1000)))
            .collect();
        // One in transmission, two waiting, the rest dropped.
        assert_eq!(offers[3], Offer::Dropped(3));
        assert_eq!(offers[4], Offer::Dropped(4));
        assert_eq!(l.queue_len(), (2, 2000));
    }
}
