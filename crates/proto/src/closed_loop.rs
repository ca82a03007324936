//! A test harness shared by the protocols' closed-loop tests: a sender and a receiver joined by
//! a small event loop over a [`Channel`] that decides what happens to each packet (drop,
//! duplicate, delay, forge: a protocol's chaos channel, built on [`Mangler`]; or the queue of a
//! drop-tail [`Bottleneck`]).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use fairstream_core::{Bitrate, Duration, Instant, RngStream};

use crate::{Endpoint, MetricSink, NullSink, Packet};

/// A packet on its way to one of the two endpoints.
struct InFlight {
    at: Instant,
    id: u64,
    to_receiver: bool,
    packet: Packet,
}

impl PartialEq for InFlight {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.id) == (other.at, other.id)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for InFlight {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.id).cmp(&(other.at, other.id))
    }
}

/// The part the chaos channels share: drops, duplicates and delays (so reorders) packets, with
/// every choice drawn from one random stream that the channel's forgeries draw from as well.
pub(crate) struct Mangler {
    pub(crate) rng: RngStream,
    /// The probability that a packet is dropped.
    pub(crate) p_drop: f64,
    /// The probability that a packet not dropped arrives twice.
    pub(crate) p_duplicate: f64,
    /// The least delay: up to 30 ms more is drawn, and with probability 0.02 one second more.
    pub(crate) base_delay: Duration,
}

impl Mangler {
    pub(crate) fn new(rng: RngStream, p_drop: f64, p_duplicate: f64, base_delay: Duration) -> Self {
        Self {
            rng,
            p_drop,
            p_duplicate,
            base_delay,
        }
    }
    pub(crate) fn upto(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }
    pub(crate) fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.rng.next_u64() % xs.len() as u64) as usize]
    }
    pub(crate) fn delay(&mut self) -> Duration {
        let extra = if self.rng.bernoulli(0.02) {
            Duration::from_secs(1)
        } else {
            Duration::ZERO
        };
        self.base_delay + Duration::from_micros(self.upto(30_000)) + extra
    }
    /// Pushes `p` towards the receiver (`to_receiver`) or the sender: dropped, once or twice.
    pub(crate) fn mangle(
        &mut self,
        now: Instant,
        p: Packet,
        to_receiver: bool,
        out: &mut Vec<(Instant, Packet, bool)>,
    ) {
        if self.rng.bernoulli(self.p_drop) {
            return;
        }
        let copies = if self.rng.bernoulli(self.p_duplicate) {
            2
        } else {
            1
        };
        for _ in 0..copies {
            out.push((now.saturating_add(self.delay()), p, to_receiver));
        }
    }
}

/// What happens to packets between the endpoints: each call pushes the deliveries it makes
/// (time, packet, whether it goes to the receiver).
pub(crate) trait Channel {
    fn forward(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>);
    fn reverse(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>);
}

/// A drop-tail bottleneck of `rate` with room for `buffer` packets (the one in service
/// included), `delay` of propagation each way, and random loss `p_loss` behind it (drawn from
/// its own stream, so a lossless bottleneck draws nothing the endpoints see).
pub(crate) struct Bottleneck {
    rate: Bitrate,
    buffer: usize,
    delay: Duration,
    p_loss: f64,
    rng: RngStream,
    /// Departure times of the packets in the queue.
    queue: VecDeque<Instant>,
    /// Packets the full queue refused.
    pub(crate) drops: u64,
    /// Wire bytes the queue took (random losses behind it included).
    pub(crate) admitted: u64,
}

impl Bottleneck {
    /// A lossless bottleneck.
    pub(crate) fn new(rate: Bitrate, buffer: usize, delay: Duration) -> Self {
        Self {
            rate,
            buffer,
            delay,
            p_loss: 0.0,
            rng: RngStream::from_seed(0),
            queue: VecDeque::new(),
            drops: 0,
            admitted: 0,
        }
    }

    /// The same with random loss `p_loss` behind the queue, drawn from `rng`.
    pub(crate) fn with_loss(self, p_loss: f64, rng: RngStream) -> Self {
        Self {
            p_loss,
            rng,
            ..self
        }
    }
}

impl Channel for Bottleneck {
    fn forward(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        while self.queue.front().is_some_and(|&d| d <= now) {
            self.queue.pop_front();
        }
        if self.queue.len() >= self.buffer {
            self.drops += 1;
            return;
        }
        let start = self.queue.back().copied().unwrap_or(now).max(now);
        let departs = start + self.rate.transmit_time(p.size);
        self.queue.push_back(departs);
        self.admitted += p.size.as_bytes();
        if self.p_loss <= 0.0 || !self.rng.bernoulli(self.p_loss) {
            out.push((departs + self.delay, p, true));
        }
    }
    fn reverse(&mut self, now: Instant, p: Packet, out: &mut Vec<(Instant, Packet, bool)>) {
        out.push((now + self.delay, p, false));
    }
}

/// Runs the pair until `end`, calling `check` after every event; the sender's metrics go to
/// `m`. Returns the number of events; panics if the loop stops advancing.
pub(crate) fn run<S: Endpoint, R: Endpoint>(
    s: &mut S,
    r: &mut R,
    ch: &mut impl Channel,
    end: Instant,
    m: &mut dyn MetricSink,
    mut check: impl FnMut(&S, &R, Instant),
) -> u64 {
    let mut wire: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut out = Vec::new();
    let mut id = 0u64;
    let mut now = Instant::ZERO;
    for events in 0..20_000_000u64 {
        let tw = wire.peek().map(|e| e.0.at);
        let next = [s.poll_timeout(), r.poll_timeout(), tw]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = next.filter(|&t| t <= end) else {
            return events;
        };
        now = now.max(t);
        if tw == Some(t) {
            let Reverse(e) = wire.pop().expect("peeked");
            if e.to_receiver {
                r.handle_packet(now, &e.packet, &mut NullSink);
            } else {
                s.handle_packet(now, &e.packet, m);
            }
        } else if s.poll_timeout() == Some(t) {
            s.handle_timeout(now, m);
        } else {
            r.handle_timeout(now, &mut NullSink);
        }
        while let Some(p) = s.poll_transmit(now) {
            ch.forward(now, p, &mut out);
        }
        while let Some(p) = r.poll_transmit(now) {
            ch.reverse(now, p, &mut out);
        }
        for (at, packet, to_receiver) in out.drain(..) {
            id += 1;
            wire.push(Reverse(InFlight {
                at,
                id,
                to_receiver,
                packet,
            }));
        }
        check(s, r, now);
    }
    panic!("the event loop does not advance");
}
