//! The forwarder: packets read from the hosts' devices ([`crate::device`]: veth pairs or TUN
//! devices) cross their flow's links ([`crate::link`]) and are written to the destination
//! host's device when the link model says they arrive.
//!
//! [`Core`] is the sans-IO part: the packet arena (fixed slots allocated up front; a slot's
//! index is what queues and links hold), the links, each flow's route each way, the interval
//! series, and the departure-error histograms. It reads no clock: [`Core::ingest_all`] takes a
//! batch of packets read ([`Arrivals`]), each with the instant it left its host, and enters
//! them in that order (never before the instant the links have run to: `entered_late` counts
//! those), [`Core::process_due`] the logical instant up to which to run and a clock to
//! timestamp each write. [`run`] is the I/O loop around it: each turn it reads what the devices
//! hold, ingests it, runs the links to now, and waits (`ppoll`, timer slack 1 ns) until shortly
//! before the next instant a packet may have to be written to a host ([`Core::next_deadline`]:
//! events inside the emulator, such as a packet reaching a router, need no wake-up of their own
//! and run on their logical instants at the next one), spinning the end of the wait
//! ([`spin_before`]: longer after a long idle stretch, whose wake-up is slow). With TUN
//! devices a packet from a host ends the wait too (its arrival is the instant it is read); with
//! veth pairs, whose packets carry the kernel's stamp, the forwarder sleeps through arrivals
//! and reads them in batches ([`Core::batch_window`]). Nothing is allocated per packet in steady
//! state (`tests/steady_state_alloc.rs`).
//!
//! Packets are told apart by port: flow `i`'s receiver listens on [`RECV_PORT`]` + i`, so a
//! packet to that port is flow `i`'s data (forward) and one from it is its feedback (back);
//! anything else (ICMP, another port) is not forwarded and is counted as unrouted.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::record::{FlowSeries, LinkSeries};
use fairstream_core::{DataSize, Duration, FlowId, Instant};
use fairstream_proto::cbr::UdpDatagram;
use fairstream_proto::{Direction, Header, Packet};
use fairstream_rt::clock::Clock;
use fairstream_rt::pacer::Lateness;
use rustix::event::{PollFd, PollFlags, Timespec, poll};

use crate::device::Device;
use crate::link::{EmuLink, Offer};
use crate::plan::{Plan, RECV_PORT};
use crate::stamp::KernelClock;

/// The least stretch before an event that the forwarder spins rather than sleeps.
pub const SPIN: Duration = Duration::from_micros(10);
/// The most it spins: before an event far ahead, when its core has gone idle and wakes slowly.
pub const MAX_SPIN: Duration = Duration::from_micros(120);
/// The share of a wait spent spinning (one tenth), between [`SPIN`] and [`MAX_SPIN`].
pub const SPIN_SHARE: u64 = 10;

/// How long before a hand-over `gap` after the one before it the forwarder stops sleeping and
/// spins: a tenth of the gap, at least [`SPIN`] and at most [`MAX_SPIN`]. A core left idle for
/// long wakes slowly (on the VM we test on, about 40 µs at the median), so a hand-over long
/// after the last ends a long spin; a busy forwarder, whose hand-overs come close together,
/// spins little and leaves the CPU to the hosts. The gap runs from the last hand-over, not from
/// now, so that a wake-up in between (to read a batch) does not shorten the spin.
pub fn spin_before(gap: Duration) -> Duration {
    (gap / SPIN_SHARE).clamp(SPIN, MAX_SPIN)
}
/// A packet written this much or more after its logical instant counts as forwarded late.
pub const LATE: Duration = Duration::from_millis(1);
/// The forwarder's `SCHED_FIFO` priority, where the process may set one.
pub const REALTIME_PRIORITY: i32 = 10;
/// Most slots allocated up front (more are added only if a run needs them).
const MAX_SLOTS: usize = 1 << 16;

/// One flow's counts over the run or one bin (its forward direction: data).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FlowCounts {
    pub(crate) packets_sent: u64,
    pub(crate) bytes_sent: u64,
    pub(crate) packets_delivered: u64,
    pub(crate) bytes_delivered: u64,
    pub(crate) packets_dropped: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct SlotMeta {
    len: u32,
    /// Flow `f`'s data route is `2f`, its feedback route `2f + 1`.
    route: u32,
    hop: u16,
}

impl SlotMeta {
    #[inline]
    fn flow(&self) -> usize {
        (self.route / 2) as usize
    }

    /// Whether the packet is its flow's data (not its feedback).
    #[inline]
    fn forward(&self) -> bool {
        self.route.is_multiple_of(2)
    }
}

#[derive(Clone, Debug)]
struct Route {
    links: Box<[u32]>,
    deliver_to: u32,
}

/// What the forwarder counted besides the links' and flows' own counts.
#[derive(Clone, Debug, Default)]
pub struct ForwardStats {
    /// Packets read that belong to no flow (another port, ICMP, not IPv4): not forwarded.
    pub unrouted: u64,
    /// Packets read from a host that is not the flow's end they claim: not forwarded.
    pub misdirected: u64,
    /// Packets longer than a slot (larger than the MTU): cut (never seen: neither device hands
    /// over a packet larger than its MTU).
    pub oversize: u64,
    /// Writes a device refused.
    pub write_failures: u64,
    /// Packets that found no free slot (more were then allocated).
    pub arena_grown: u64,
    /// Packets written [`LATE`] or more after their logical arrival.
    pub late: u64,
    /// The largest packet read, bytes.
    pub largest_packet: u64,
    /// Packets read from the hosts.
    pub packets_read: u64,
    /// Whether the forwarder ran at a real-time priority (`SCHED_FIFO`).
    pub realtime: bool,
    /// Packets that left their host before the instant the links had been run to when they
    /// were read: they entered their first link that much later.
    pub entered_late: u64,
    /// How much later those packets entered.
    pub entered_late_by: Lateness,
    /// Packets the kernel dropped before the forwarder read them (a veth's socket buffer
    /// full): lost outside the link model.
    pub device_drops: u64,
    /// How long the forwarder left stamped devices unread at most (0: it woke for every
    /// packet).
    pub batch_window_us: u64,
    /// CPU seconds the forwarder's thread used (sleeping costs none; spinning does).
    pub cpu_s: f64,
}

/// The sans-IO forwarder.
pub struct Core {
    links: Vec<EmuLink>,
    routes: Vec<Route>,
    /// (sender's host, receiver's host) by flow.
    flow_hosts: Vec<(u32, u32)>,
    slot_size: usize,
    arena: Vec<u8>,
    meta: Vec<SlotMeta>,
    free: Vec<u32>,
    /// Departure error (the instant a packet was written to its host less its logical arrival)
    /// per link, for the packets whose last hop it is.
    pub(crate) errors: Vec<Lateness>,
    pub(crate) stats: ForwardStats,
    pub(crate) flows_total: Vec<FlowCounts>,
    flows_bin: Vec<FlowCounts>,
    pub(crate) flow_series: FlowSeries,
    pub(crate) link_series: LinkSeries,
    /// Whether each link's rows go into `link_series` (`Plan::link_series_kept`).
    link_series_kept: Vec<bool>,
    interval: Duration,
    bin_start: Instant,
    /// Bytes delivered over all flows since the last live line.
    pub(crate) live_bytes: u64,
    /// The instant the links have been run to.
    horizon: Instant,
    /// The logical instant of the last packet handed to a host.
    last_handover: Instant,
    /// Per link, the least propagation delay still ahead of a packet that reaches its far end
    /// (zero where the link is some route's last hop): how far a link event may run late
    /// without any packet being handed to a host late.
    rest: Vec<Duration>,
}

impl Core {
    /// The forwarder of `plan`'s links and flows.
    pub fn new(plan: &Plan) -> Self {
        let links: Vec<EmuLink> = plan
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| EmuLink::new(l, plan.seed, i, EmuLink::max_in_flight(l, 1 << 16)))
            .collect();
        let mut routes = Vec::with_capacity(2 * plan.flows.len());
        for f in &plan.flows {
            let r = |links: &[fairstream_core::LinkId], to: usize| Route {
                links: links.iter().map(|l| l.0).collect(),
                deliver_to: to as u32,
            };
            routes.push(r(&f.route.forward, f.dst));
            routes.push(r(&f.route.back, f.src));
        }
        let slots: usize = plan
            .links
            .iter()
            .map(|l| {
                let q = l.queue.max_packets(DataSize::bytes(40)).min(1 << 16) as usize;
                q + EmuLink::max_in_flight(l, 1 << 16)
            })
            .sum::<usize>()
            .clamp(1024, MAX_SLOTS);
        let slot_size = plan.mtu as usize + 4;
        let bins = (plan.duration.as_nanos() / plan.interval.as_nanos().max(1) + 2) as usize;
        let n = plan.flows.len();
        let mut flow_series = FlowSeries::default();
        reserve_flow_series(&mut flow_series, bins * n);
        let mut link_series = LinkSeries::default();
        let series_links = plan.link_series_kept.iter().filter(|&&k| k).count();
        reserve_link_series(&mut link_series, bins * series_links);
        let mut rest = vec![Duration::MAX; links.len()];
        for r in &routes {
            for (i, &l) in r.links.iter().enumerate() {
                let after = r.links[i + 1..]
                    .iter()
                    .fold(Duration::ZERO, |d, &k| d + plan.links[k as usize].delay);
                rest[l as usize] = rest[l as usize].min(after);
            }
        }
        Self {
            errors: vec![Lateness::default(); links.len()],
            links,
            routes,
            flow_hosts: plan
                .flows
                .iter()
                .map(|f| (f.src as u32, f.dst as u32))
                .collect(),
            slot_size,
            arena: vec![0; slots * slot_size],
            meta: vec![SlotMeta::default(); slots],
            free: (0..slots as u32).rev().collect(),
            stats: ForwardStats::default(),
            flows_total: vec![FlowCounts::default(); n],
            flows_bin: vec![FlowCounts::default(); n],
            flow_series,
            link_series,
            link_series_kept: plan.link_series_kept.clone(),
            interval: plan.interval,
            bin_start: Instant::ZERO,
            live_bytes: 0,
            horizon: Instant::ZERO,
            last_handover: Instant::ZERO,
            rest,
        }
    }

    /// A free slot to read a packet into: its number and its bytes.
    #[inline]
    pub fn slot(&mut self) -> (u32, &mut [u8]) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                // More packets held than foreseen: grow (never in steady state).
                self.stats.arena_grown += 1;
                let old = self.meta.len();
                self.meta.resize(old * 2, SlotMeta::default());
                self.arena.resize(old * 2 * self.slot_size, 0);
                self.free.extend((old as u32 + 1..2 * old as u32).rev());
                old as u32
            }
        };
        let at = slot as usize * self.slot_size;
        (slot, &mut self.arena[at..at + self.slot_size])
    }

    /// Gives back a slot taken with [`Self::slot`] and not ingested.
    #[inline]
    pub fn unused(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// The packet of `len` bytes just read into `slot` from host `host`'s device at `now`:
    /// onto its flow's first link, or dropped (unrouted, misdirected).
    #[inline]
    pub fn ingest(&mut self, host: u32, slot: u32, len: usize, now: Instant) {
        self.stats.packets_read += 1;
        // The links may have run past the instant the packet left its host (it was read after
        // they were run to a later instant): it enters them where they are.
        let now = if now < self.horizon {
            self.stats.entered_late += 1;
            self.stats
                .entered_late_by
                .record(self.horizon.saturating_since(now));
            self.horizon
        } else {
            now
        };
        self.stats.largest_packet = self.stats.largest_packet.max(len as u64);
        if len >= self.slot_size {
            self.stats.oversize += 1;
        }
        let len = len.min(self.slot_size);
        let at = slot as usize * self.slot_size;
        let Some((flow, forward)) = classify(&self.arena[at..at + len], self.flow_hosts.len())
        else {
            self.stats.unrouted += 1;
            self.free.push(slot);
            return;
        };
        let (src, dst) = self.flow_hosts[flow];
        if host != if forward { src } else { dst } {
            self.stats.misdirected += 1;
            self.free.push(slot);
            return;
        }
        let route = (2 * flow + usize::from(!forward)) as u32;
        self.meta[slot as usize] = SlotMeta {
            len: len as u32,
            route,
            hop: 0,
        };
        if forward {
            for c in [&mut self.flows_total[flow], &mut self.flows_bin[flow]] {
                c.packets_sent += 1;
                c.bytes_sent += len as u64;
            }
        }
        self.onto(0, slot, now);
    }

    /// Puts the packet in `slot` on hop `hop` of its route at logical `now` (or delivers it, if
    /// the route has no more hops: then at the next [`Self::process_due`]).
    fn onto(&mut self, hop: usize, slot: u32, now: Instant) {
        let m = self.meta[slot as usize];
        let route = &self.routes[m.route as usize];
        let Some(&link) = route.links.get(hop) else {
            return;
        };
        let mut packet = Packet {
            flow: FlowId(m.flow() as u32),
            direction: if m.forward() {
                Direction::Forward
            } else {
                Direction::Reverse
            },
            size: DataSize::bytes(u64::from(m.len)),
            payload: 0,
            sent_at: now,
            header: Header::Udp(UdpDatagram { seq: 0 }),
        };
        let l = &mut self.links[link as usize];
        if let Offer::Dropped(s) = l.offer(now, slot, &mut packet) {
            self.lose(s);
        }
        self.reap(link as usize);
    }

    /// Frees the slots of the packets link `link`'s error model destroyed.
    #[inline]
    fn reap(&mut self, link: usize) {
        while let Some(s) = self.links[link].corrupted.pop() {
            self.lose(s);
        }
    }

    #[inline]
    fn lose(&mut self, slot: u32) {
        let m = self.meta[slot as usize];
        if m.forward() {
            let flow = m.flow();
            self.flows_total[flow].packets_dropped += 1;
            self.flows_bin[flow].packets_dropped += 1;
        }
        self.free.push(slot);
    }

    /// The next logical instant anything happens on a link.
    #[inline]
    pub fn next_event(&self) -> Option<Instant> {
        self.links.iter().filter_map(EmuLink::next_event).min()
    }

    /// The earliest instant a packet may have to be handed to a host (the I/O loop's next
    /// wake-up): a link event is run by then only if something a host sees can follow from it
    /// in time. Events inside the emulator are run late, on their logical instants, at the next
    /// wake-up or before the next packet read is offered (`process_due`), so they cost no
    /// wake-up of their own.
    #[inline]
    pub fn next_deadline(&self) -> Option<Instant> {
        self.links
            .iter()
            .zip(&self.rest)
            .filter_map(|(l, &rest)| {
                let arrive = l.next_arrival().map(|t| t.saturating_add(rest));
                let wake = l
                    .next_wake()
                    .map(|t| t.saturating_add(l.delay()).saturating_add(rest));
                [arrive, wake].into_iter().flatten().min()
            })
            .min()
    }

    /// The end of the current interval-series bin.
    pub fn bin_end(&self) -> Instant {
        self.bin_start + self.interval
    }

    /// Runs every link event due by logical `upto`, in time order (links by index at equal
    /// instants), closing the series' bins on the way; a packet's last hop hands it to
    /// `deliver(host, bytes)` (which returns whether the device took it), timestamped with
    /// `clock` as the hand-over begins for its departure error.
    pub fn process_due(
        &mut self,
        upto: Instant,
        clock: &dyn Fn() -> Instant,
        deliver: &mut dyn FnMut(u32, &[u8]) -> bool,
    ) {
        loop {
            let mut best: Option<(Instant, usize)> = None;
            for (i, l) in self.links.iter().enumerate() {
                if let Some(t) = l.next_event()
                    && t <= upto
                    && best.is_none_or(|(b, _)| t < b)
                {
                    best = Some((t, i));
                }
            }
            let Some((t, i)) = best else {
                break;
            };
            self.close_bins(t);
            let arrived = self.links[i].step(t);
            self.reap(i);
            if let Some(slot) = arrived {
                self.arrive(i, slot, t, clock, deliver);
            }
        }
        self.close_bins(upto);
        self.horizon = self.horizon.max(upto);
    }

    /// Ingests `arrivals` (emptying it) in the order the packets left their hosts (by host,
    /// then as read, at equal instants), running the links up to each first: a packet read late
    /// still enters at the instant it left, unless the links have already run past it.
    pub fn ingest_all(
        &mut self,
        arrivals: &mut Arrivals,
        clock: &dyn Fn() -> Instant,
        deliver: &mut dyn FnMut(u32, &[u8]) -> bool,
    ) {
        // Unstable (it never allocates), on keys that are all different.
        arrivals
            .reads
            .sort_unstable_by_key(|r| (r.at, r.host, r.order));
        for r in arrivals.reads.drain(..) {
            self.process_due(r.at, clock, deliver);
            self.ingest(r.host, r.slot, r.len as usize, r.at);
        }
    }

    /// The logical instant of the last packet handed to a host (zero before the first).
    pub fn last_handover(&self) -> Instant {
        self.last_handover
    }

    /// Half the least time any packet still has ahead of it on entering a link (its propagation
    /// delays to its host): how long a forwarder whose packets carry the instant they left their
    /// hosts may leave them unread without a host seeing anything late.
    pub fn batch_window(&self) -> Duration {
        let least = self
            .links
            .iter()
            .zip(&self.rest)
            .filter(|&(_, &rest)| rest != Duration::MAX)
            .map(|(l, &rest)| l.delay() + rest)
            .min()
            .unwrap_or(Duration::ZERO);
        least / 2
    }

    fn arrive(
        &mut self,
        link: usize,
        slot: u32,
        t: Instant,
        clock: &dyn Fn() -> Instant,
        deliver: &mut dyn FnMut(u32, &[u8]) -> bool,
    ) {
        let m = &mut self.meta[slot as usize];
        m.hop += 1;
        let m = *m;
        let route = &self.routes[m.route as usize];
        if usize::from(m.hop) < route.links.len() {
            self.onto(usize::from(m.hop), slot, t);
            return;
        }
        let at = slot as usize * self.slot_size;
        self.last_handover = t;
        // How late the hand-over began: what the host's own stack then takes inside the write
        // (a veth pair's whole receive path) is the host's, as on a wire.
        let error = clock().saturating_since(t);
        let ok = deliver(route.deliver_to, &self.arena[at..at + m.len as usize]);
        self.errors[link].record(error);
        if error >= LATE {
            self.stats.late += 1;
        }
        if !ok {
            self.stats.write_failures += 1;
        }
        if m.forward() {
            let flow = m.flow();
            for c in [&mut self.flows_total[flow], &mut self.flows_bin[flow]] {
                c.packets_delivered += 1;
                c.bytes_delivered += u64::from(m.len);
            }
            self.live_bytes += u64::from(m.len);
        }
        self.free.push(slot);
    }

    /// Closes the bins that end by logical `t`.
    fn close_bins(&mut self, t: Instant) {
        while t >= self.bin_start + self.interval {
            self.close_bin(self.interval);
        }
    }

    fn close_bin(&mut self, width: Duration) {
        let (t0, t1) = (self.bin_start, self.bin_start + width);
        let s = &mut self.flow_series;
        for (i, b) in self.flows_bin.iter_mut().enumerate() {
            s.flow_id.push(i as u32);
            s.t_start.push(t0.as_secs_f64());
            s.t_end.push(t1.as_secs_f64());
            s.packets_sent.push(b.packets_sent);
            s.bytes_sent.push(b.bytes_sent);
            s.packets_delivered.push(b.packets_delivered);
            s.bytes_delivered.push(b.bytes_delivered);
            // Filled in from the receivers' own counts when the run ends.
            s.goodput_bytes.push(0);
            s.packets_dropped.push(b.packets_dropped);
            s.rtt_mean_s.push(f64::NAN);
            *b = FlowCounts::default();
        }
        let s = &mut self.link_series;
        for (i, l) in self.links.iter_mut().enumerate() {
            let b = std::mem::take(&mut l.bin);
            if !self.link_series_kept[i] {
                continue;
            }
            let (qp, qb) = l.queue_len();
            let cap = l.capacity_bits(t0, t1);
            s.link_id.push(i as u32);
            s.t_start.push(t0.as_secs_f64());
            s.t_end.push(t1.as_secs_f64());
            s.queue_packets.push(qp);
            s.queue_bytes.push(qb);
            s.packets_forwarded.push(b.packets_forwarded);
            s.bytes_forwarded.push(b.bytes_forwarded);
            s.packets_dropped
                .push(b.packets_dropped + b.packets_corrupted);
            s.utilisation.push(if cap > 0.0 {
                (b.bytes_forwarded * 8) as f64 / cap
            } else {
                0.0
            });
        }
        self.bin_start = t1;
    }

    /// Closes the last, partial bin at `end`.
    pub(crate) fn finish(&mut self, end: Instant) {
        self.close_bins(end);
        if end > self.bin_start {
            self.close_bin(end.saturating_since(self.bin_start));
        }
    }

    /// The links, by link id.
    pub(crate) fn links(&self) -> &[EmuLink] {
        &self.links
    }

    /// Packets held (queued or on a link's wire).
    pub fn held(&self) -> usize {
        self.meta.len() - self.free.len()
    }
}

fn reserve_flow_series(s: &mut FlowSeries, n: usize) {
    s.flow_id.reserve(n);
    s.t_start.reserve(n);
    s.t_end.reserve(n);
    s.packets_sent.reserve(n);
    s.bytes_sent.reserve(n);
    s.packets_delivered.reserve(n);
    s.bytes_delivered.reserve(n);
    s.goodput_bytes.reserve(n);
    s.packets_dropped.reserve(n);
    s.rtt_mean_s.reserve(n);
}

fn reserve_link_series(s: &mut LinkSeries, n: usize) {
    s.link_id.reserve(n);
    s.t_start.reserve(n);
    s.t_end.reserve(n);
    s.queue_packets.reserve(n);
    s.queue_bytes.reserve(n);
    s.packets_forwarded.reserve(n);
    s.bytes_forwarded.reserve(n);
    s.packets_dropped.reserve(n);
    s.utilisation.reserve(n);
}

/// The flow an IPv4 UDP or TCP packet belongs to, by port, and whether it travels forward
/// (to the receiver's port) or back (from it).
#[inline]
pub fn classify(p: &[u8], flows: usize) -> Option<(usize, bool)> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(p[0] & 0x0f) * 4;
    if !matches!(p[9], 6 | 17) || p.len() < ihl + 4 {
        return None;
    }
    // A fragment other than the first carries no ports.
    if u16::from_be_bytes([p[6], p[7]]) & 0x1fff != 0 {
        return None;
    }
    let sport = u16::from_be_bytes([p[ihl], p[ihl + 1]]);
    let dport = u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]);
    let flow_of = |port: u16| {
        port.checked_sub(RECV_PORT)
            .map(usize::from)
            .filter(|&f| f < flows)
    };
    flow_of(dport)
        .map(|f| (f, true))
        .or_else(|| flow_of(sport).map(|f| (f, false)))
}

/// A line about the emulation, about once a second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EmuLive {
    /// Seconds since the emulation started.
    pub t_s: f64,
    /// Bits per second delivered over the last second, all flows.
    pub delivered_bps: f64,
    /// Packets dropped so far (queues and loss models), all links.
    pub dropped: u64,
    /// Packets forwarded late so far.
    pub late: u64,
}

/// A packet read and not yet ingested: its slot, length, host and the instant it left its host.
#[derive(Clone, Copy, Debug)]
struct Read {
    at: Instant,
    host: u32,
    /// The order it was read in (among packets of equal instant and host).
    order: u32,
    slot: u32,
    len: u32,
}

/// Packets read from the hosts' devices and not yet ingested ([`Core::ingest_all`]).
#[derive(Debug, Default)]
pub struct Arrivals {
    reads: Vec<Read>,
}

impl Arrivals {
    /// Room for `n` packets before any allocation.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            reads: Vec::with_capacity(n),
        }
    }

    /// The packet of `len` bytes read into `slot` from host `host`'s device, which left its
    /// host at `at`.
    #[inline]
    pub fn push(&mut self, host: u32, slot: u32, len: usize, at: Instant) {
        self.reads.push(Read {
            at,
            host,
            order: self.reads.len() as u32,
            slot,
            len: len as u32,
        });
    }
}

/// Reads waiting in one device before looking at the next (the rest are read on the next
/// turn).
const READS_PER_DEVICE: usize = 4096;
/// The longest a forwarder with stamped devices sleeps between reads.
pub const MAX_BATCH: Duration = Duration::from_millis(1);
/// Below this batch window (half the least delay a packet has ahead of it), the forwarder
/// wakes for every packet even with stamped devices.
pub const MIN_BATCH: Duration = Duration::from_micros(50);

/// Runs the forwarder on the calling thread until `end` (on `clock`) or either `stop` flag is
/// set; returns where it stopped.
///
/// Each turn reads what the devices hold, ingests it in the order the packets left their
/// hosts (a veth's kernel stamp, or the instant of the read for a TUN device), runs the links up
/// to now, and waits. With TUN devices it waits for a packet or the next deadline, whichever
/// comes first; with stamped devices it sleeps through arrivals, up to half the least delay any
/// packet has ahead of it ([`Core::batch_window`], at most [`MAX_BATCH`]), so that it reads in
/// batches and wakes only for what a host must see on time.
pub fn run(
    core: &mut Core,
    devices: &[Device],
    clock: Clock,
    end: Instant,
    stop: [&AtomicBool; 2],
    live: &mut dyn FnMut(&EmuLive),
) -> std::io::Result<Instant> {
    // Sleeps end when asked, not up to 50 µs later (the default timer slack); and where the
    // process may, the forwarder runs ahead of ordinary threads (a real-time priority below the
    // kernel's own threads'), so that a busy machine delays it less.
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let realtime = crate::sys::set_realtime(REALTIME_PRIORITY).is_ok();
    let cpu = || rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let cpu_start = cpu();
    let mut pfds: Vec<PollFd<'_>> = devices
        .iter()
        .map(|d| PollFd::from_borrowed_fd(d.fd(), PollFlags::IN))
        .collect();
    let window = core.batch_window().min(MAX_BATCH);
    let batched = !devices.is_empty() && devices.iter().all(Device::stamped) && window >= MIN_BATCH;
    core.stats.batch_window_us = if batched { window.as_nanos() / 1000 } else { 0 };
    let mut stamps = KernelClock::new(&clock);
    let mut arrivals = Arrivals::with_capacity(1024);
    let now_fn = || clock.now();
    let mut deliver = |host: u32, bytes: &[u8]| devices[host as usize].write(bytes);
    let mut next_live = Instant::ZERO + Duration::from_secs(1);
    let zero = timespec(Duration::ZERO);
    // Whether the last wait polled the devices, and what it found (a wait that slept or spun
    // did not: the devices are polled again first).
    let mut waited_on_devices: Option<bool> = None;
    let stopped_at = loop {
        // Every packet that left its host by `now` is read before the links run to it (but
        // one still on its way through the kernel: `entered_late` counts those).
        let now = clock.now();
        let ready = match waited_on_devices.take() {
            Some(ready) => ready,
            None => match poll(&mut pfds, Some(&zero)) {
                Ok(n) => n > 0,
                Err(rustix::io::Errno::INTR) => false,
                Err(e) => return Err(e.into()),
            },
        };
        if ready {
            for (h, (dev, pfd)) in devices.iter().zip(&pfds).enumerate() {
                if pfd.revents().contains(PollFlags::IN) {
                    read_device(core, dev, h as u32, &clock, &mut stamps, &mut arrivals)?;
                }
            }
            core.ingest_all(&mut arrivals, &now_fn, &mut deliver);
        }
        core.process_due(now.min(end), &now_fn, &mut deliver);
        if now >= end {
            break end;
        }
        if stop.iter().any(|s| s.load(Ordering::Relaxed)) {
            break now;
        }
        if now >= next_live {
            let dropped = core
                .links()
                .iter()
                .map(|l| l.total.packets_dropped + l.total.packets_corrupted)
                .sum();
            live(&EmuLive {
                t_s: now.as_secs_f64(),
                delivered_bps: (core.live_bytes * 8) as f64,
                dropped,
                late: core.stats.late,
            });
            core.live_bytes = 0;
            next_live += Duration::from_secs(1);
        }
        // Wait until shortly before the next event, spinning the rest ([`spin_before`]: no
        // wait at all within that spin of it, the loop comes round again at once); with TUN
        // devices, or a path too short to batch, a packet from a host ends the wait too.
        let next = core
            .next_deadline()
            .unwrap_or(Instant::MAX)
            .min(core.bin_end())
            .min(next_live)
            .min(end);
        let spin = spin_before(next.saturating_since(core.last_handover()));
        let nap = next.saturating_since(clock.now() + spin);
        if nap == Duration::ZERO {
            continue;
        }
        if batched {
            match poll(&mut [], Some(&timespec(nap.min(window)))) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        } else {
            // A TUN packet's arrival is the instant it is read, so what this wait finds is read
            // at once, without polling again.
            match poll(&mut pfds, Some(&timespec(nap))) {
                Ok(n) => waited_on_devices = Some(n > 0),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    };
    core.finish(stopped_at);
    core.stats.realtime = realtime;
    core.stats.device_drops = devices.iter().map(Device::drops).sum();
    let (a, b) = (cpu_start, cpu());
    core.stats.cpu_s = (b.tv_sec - a.tv_sec) as f64 + (b.tv_nsec - a.tv_nsec) as f64 / 1e9;
    Ok(stopped_at)
}

fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: (d.as_nanos() / 1_000_000_000) as i64,
        tv_nsec: (d.as_nanos() % 1_000_000_000) as i64,
    }
}

/// Reads what `dev` (host `host`'s device) holds into free slots, each with the instant it left
/// its host: the kernel's stamp where the device has one, else now.
fn read_device(
    core: &mut Core,
    dev: &Device,
    host: u32,
    clock: &Clock,
    stamps: &mut KernelClock,
    arrivals: &mut Arrivals,
) -> std::io::Result<()> {
    for _ in 0..READS_PER_DEVICE {
        let (slot, buf) = core.slot();
        match dev.read(buf)? {
            Some((len, stamp)) => {
                let now = clock.now();
                let at = stamp.map_or(now, |s| stamps.instant_of(s, now).min(now));
                arrivals.push(host, slot, len, at);
            }
            None => {
                core.unused(slot);
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(sport: u16, dport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[9] = 17;
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    /// The core of one linux-tcp flow from host `a` along a chain of 12 Mbit/s links, each
    /// given as (the node it reaches, its delay); the last node is the receiving host.
    fn core_of(hops: &[(&str, &str)]) -> Core {
        let mut nodes = vec!["\"a\"".to_string()];
        let mut links = String::new();
        let mut from = "a";
        for &(to, delay) in hops {
            nodes.push(format!("\"{to}\""));
            links += &format!(
                "[[topology.link]]\nbetween = [\"{from}\", \"{to}\"]\nrate = \"12Mbps\"\ndelay = \"{delay}\"\n"
            );
            from = to;
        }
        let text = format!(
            "name = \"chain\"\nduration = \"1s\"\n[topology]\nnodes = [{}]\n{links}\
             [[flow]]\nprotocol = \"linux-tcp\"\nfrom = \"a\"\nto = \"{from}\"\n",
            nodes.join(", ")
        );
        let s = fairstream_scenario::load(&text, "chain.toml", None).unwrap();
        Core::new(&Plan::new(&s).unwrap())
    }

    /// A 1500-byte UDP datagram to the flow's receiver in a free slot, its last header byte set
    /// to `mark`; returns the slot.
    fn data_packet(core: &mut Core, mark: u8) -> u32 {
        let (slot, buf) = core.slot();
        buf[..28].copy_from_slice(&udp(40_000, RECV_PORT));
        buf[2..4].copy_from_slice(&1500u16.to_be_bytes());
        buf[27] = mark;
        slot
    }

    #[test]
    fn packets_are_told_apart_by_the_receivers_port() {
        assert_eq!(classify(&udp(40_000, RECV_PORT + 2), 3), Some((2, true)));
        assert_eq!(classify(&udp(RECV_PORT + 1, 40_001), 3), Some((1, false)));
        assert_eq!(classify(&udp(1, RECV_PORT + 3), 3), None);
        let mut v6 = udp(1, RECV_PORT);
        v6[0] = 0x60;
        assert_eq!(classify(&v6, 3), None);
        assert_eq!(classify(&[0x45; 10], 3), None);
        let mut icmp = udp(1, RECV_PORT);
        icmp[9] = 1;
        assert_eq!(classify(&icmp, 3), None);
    }

    #[test]
    fn a_wait_ends_with_a_tenth_of_the_gap_spun_within_its_bounds() {
        let us = Duration::from_micros;
        assert_eq!(
            spin_before(us(50)),
            SPIN,
            "close hand-overs: the least spin"
        );
        assert_eq!(spin_before(us(400)), us(40));
        assert_eq!(spin_before(us(1200)), MAX_SPIN, "a light path: the most");
        assert_eq!(spin_before(Duration::from_secs(1)), MAX_SPIN);
    }

    #[test]
    fn only_a_packet_about_to_reach_a_host_needs_a_wake_up() {
        let mut core = core_of(&[("r", "5ms"), ("b", "20ms")]);
        let slot = data_packet(&mut core, 0);
        core.ingest(0, slot, 1500, Instant::ZERO);
        // On the first link: 1 ms of transmission and 5 ms of delay to the router, then at
        // least the second link's 20 ms to b: no wake-up is needed before 26 ms.
        let ms = |n| Instant::ZERO + Duration::from_millis(n);
        assert_eq!(core.next_event(), Some(ms(6)));
        assert_eq!(core.next_deadline(), Some(ms(26)));
        let mut handed = Vec::new();
        core.process_due(ms(26), &|| ms(26), &mut |host, _| {
            handed.push(host);
            true
        });
        assert!(handed.is_empty(), "the packet is on the second link");
        assert_eq!(core.next_deadline(), Some(ms(27)));
        core.process_due(ms(27), &|| ms(27), &mut |host, _| {
            handed.push(host);
            true
        });
        assert_eq!(handed, vec![1]);
        assert_eq!(
            core.errors[2].count(),
            1,
            "the departure error is the last hop's"
        );
    }

    #[test]
    fn a_batch_enters_in_the_order_it_left_and_never_before_the_links_time() {
        let mut core = core_of(&[("b", "5ms")]);
        let us = |n| Instant::ZERO + Duration::from_micros(n);
        let mut arrivals = Arrivals::with_capacity(4);
        // Read in the order 2, 1, 3; packet 1 left first.
        for (mark, left) in [(2u8, 2_000), (1, 1_000), (3, 3_000)] {
            let slot = data_packet(&mut core, mark);
            arrivals.push(0, slot, 1500, us(left));
        }
        let handed = std::cell::RefCell::new(Vec::new());
        let mut deliver = |_host: u32, bytes: &[u8]| {
            handed.borrow_mut().push(bytes[27]);
            true
        };
        core.ingest_all(&mut arrivals, &|| us(3_000), &mut deliver);
        // 1 ms to send each, 5 ms on the wire: they arrive at 7, 8 and 9 ms, in the order they
        // left.
        core.process_due(us(8_999), &|| us(8_999), &mut deliver);
        assert_eq!(*handed.borrow(), vec![1, 2]);
        core.process_due(us(9_000), &|| us(9_000), &mut deliver);
        assert_eq!(*handed.borrow(), vec![1, 2, 3]);
        assert_eq!(core.stats.entered_late, 0);
        // A packet that left at 8 ms, read after the links ran to 9 ms, enters at 9 ms and
        // arrives at 15 ms, not 14.
        let slot = data_packet(&mut core, 4);
        arrivals.push(0, slot, 1500, us(8_000));
        core.ingest_all(&mut arrivals, &|| us(9_000), &mut deliver);
        assert_eq!(core.stats.entered_late, 1);
        assert_eq!(core.stats.entered_late_by.max(), Duration::from_millis(1));
        core.process_due(us(14_999), &|| us(14_999), &mut deliver);
        assert_eq!(handed.borrow().len(), 3);
        core.process_due(us(15_000), &|| us(15_000), &mut deliver);
        assert_eq!(*handed.borrow(), vec![1, 2, 3, 4]);
    }
}
