//! The engine: pops events off the [`Calendar`], moves packets through links and nodes,
//! drives the endpoints, and records what happened.
//!
//! Events (same-instant events run in the order of the run's [`TieRule`](crate::TieRule)):
//! - `Arrive`: a packet finished propagating along a link and reaches the link's far node,
//!   which delivers it (if it is the packet's destination) or enqueues it on the next hop
//!   (first showing a backward RM cell to the queue of the link back the other way, if that
//!   queue watches returning packets, as an ERICA port does). A link delivers in the order it
//!   transmits, so its arrivals wait in a calendar lane of their own (one heap entry per link,
//!   not per packet in flight; the order of events is the one heap's);
//! - `LinkWake`: a link's transmitter may start its next packet (it finished one and more
//!   wait, or a token bucket said "not before");
//! - `Depart`: a packet that a sender emitted leaves its host after the host overhead;
//! - `Endpoint`: an endpoint's `poll_timeout` is due (validated lazily against `timer_at`:
//!   an endpoint has at most one live entry, re-armed only when its deadline moves earlier);
//! - `Sample`: the end of an interval-series bin.
//!
//! A transmitter that is idle when a packet arrives at an empty queue starts at once, with
//! no event: only a backlog costs `LinkWake` events. Links are work-conserving: whenever a
//! packet is queued behind a busy transmitter, a `LinkWake` is due when the transmitter frees
//! (see [`Simulator::enqueue`]), so a queue never waits beside an idle transmitter unless a
//! token bucket lacks tokens or a capacity schedule is at zero. Packets live in an arena and the
//! calendar holds their slot numbers, so nothing is allocated per packet in steady state.

use fairstream_core::{Bitrate, Duration, FlowId, Instant, LinkId, NodeId, RngStream};
use fairstream_net::{Dequeue, QueuedPacket};
use fairstream_proto::{AnyEndpoint, DataPacket, Direction, Endpoint, FlowCtx, Packet};

use crate::calendar::Calendar;
use crate::link::Link;
use crate::network::FlowSpec;
use crate::recorder::{FlowInfo, FlowSink, LinkParams, Recorder};
use crate::{Network, NetworkError};
use fairstream_records::{PacketEvent, RunOutput};

#[derive(Debug, Clone, Copy)]
enum Event {
    Arrive { link: u32, slot: u32 },
    LinkWake { link: u32 },
    Depart { slot: u32 },
    Endpoint { ep: u32 },
    Sample,
}

#[derive(Debug, Clone)]
struct FlowMeta {
    name: String,
    protocol: &'static str,
    src: NodeId,
    dst: NodeId,
    start: Instant,
    stop: Option<Instant>,
    /// Data payload per full packet, for pcap sequence numbers (0 where not used).
    segment_payload: u64,
    /// A full data packet of the flow (for its summary).
    packet: DataPacket,
    /// Draws the overhead of each packet (see [`Launch::overhead`]).
    overhead_rng: RngStream,
    /// When the sender's last packet left its host (packets leave in the order emitted).
    last_departure: Instant,
}

/// What the engine reads of a flow for every packet it emits: where the packet starts on its
/// path, and whether it waits out a host overhead first. A table of its own, 24 bytes a flow,
/// which stays in the cache where the flows' records (160 bytes each) would not.
#[derive(Debug, Clone, Copy)]
struct Launch {
    /// Where a packet starts on the path from source to destination (`[0]`) and back (`[1]`,
    /// empty if the receiver sends nothing), found once when the run is built.
    paths: [Cursor; 2],
    /// The sender's host overhead (zero: packets leave when emitted).
    overhead: Duration,
}

/// A packet's place on its path: the index in [`Simulator::route_links`] of the next link it
/// crosses, and the index just past its path's last link there.
///
/// Kept per arena slot, so that moving a packet on reads this and the flat list of links, not
/// the packet, its flow's record and the flow's path behind it: a chain of dependent loads that
/// misses the cache at each step once thousands of flows do not fit in it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cursor {
    next: u32,
    end: u32,
}

impl FlowMeta {
    fn new(f: &FlowSpec, id: usize, seed: u64, start: Instant) -> Self {
        Self {
            name: f.name.clone(),
            protocol: f.protocol.name(),
            src: f.src,
            dst: f.dst,
            start,
            stop: f.stop,
            segment_payload: f.protocol.segment_payload(),
            packet: f.protocol.data_packet(),
            overhead_rng: RngStream::derive(seed, "host-overhead", id as u64),
            last_departure: Instant::ZERO,
        }
    }

    /// When a packet the sender emits at `now` leaves its host: uniform in `[0, overhead]`
    /// after `now` or after the previous packet's departure, whichever is later. After ns-2's
    /// `overhead_`, which draws one delay per send opportunity rather than per packet.
    fn departure(&mut self, now: Instant, overhead: Duration) -> Instant {
        let gap = self.overhead_rng.uniform() * overhead.as_nanos() as f64;
        // Departures queue up behind one another, so an overhead near the length of the run
        // could carry them past 2^64 ns: such a departure is past the end of the run (never
        // reached) either way, so saturating changes nothing a run shows.
        let at = now
            .max(self.last_departure)
            .saturating_add(Duration::from_nanos(gap as u64));
        self.last_departure = at;
        at
    }
}

/// A simulation in progress. Build it from a [`Network`], advance it with
/// [`Simulator::run_until`] (or [`Simulator::run`]), then collect the [`RunOutput`].
pub struct Simulator {
    cal: Calendar<Event>,
    end: Instant,
    seed: u64,
    node_names: Vec<String>,
    link_names: Vec<String>,
    /// What each link's summary says about its queue and schedule.
    link_params: Vec<LinkParams>,
    links: Vec<Link>,
    /// Whether any link's queue watches returning packets (else `returning` is not looked at).
    watching: bool,
    /// For each link, the link the other way between its two nodes if that link's queue
    /// watches what returns to its node (an ERICA port marking backward RM cells).
    returning: Vec<Option<u32>>,
    endpoints: Vec<AnyEndpoint>,
    timer_at: Vec<Option<Instant>>,
    flows: Vec<FlowMeta>,
    /// Each flow's [`Launch`].
    launches: Vec<Launch>,
    arena: Vec<Packet>,
    /// Unique id of the packet in each arena slot; kept only while the packet trace is on.
    packet_ids: Vec<u64>,
    /// Where the packet in each arena slot is on its path.
    cursors: Vec<Cursor>,
    /// Every flow's paths, one after the other (see [`Cursor`]).
    route_links: Vec<LinkId>,
    free: Vec<u32>,
    rec: Recorder,
    events: u64,
    packets: u64,
}

impl Simulator {
    /// Builds a run (its flows' routes are the network's). Captures are written to the system's
    /// temporary directory (see [`Simulator::with_capture_dir`]); fails if one cannot be created.
    pub fn new(net: Network) -> Result<Self, NetworkError> {
        Self::with_capture_dir(net, &std::env::temp_dir())
    }

    /// Builds a run whose pcap captures are written into `capture_dir` as it goes (hidden files,
    /// removed when the output holding them is dropped; the directory is made when a link is
    /// captured and it is missing); fails if a capture cannot be created there.
    pub fn with_capture_dir(
        net: Network,
        capture_dir: &std::path::Path,
    ) -> Result<Self, NetworkError> {
        let mut route_links = Vec::new();
        // Flows between the same two nodes share one path (`FlowRoute`), placed once.
        let mut placed = std::collections::HashMap::new();
        let mut place = |path: &std::sync::Arc<[LinkId]>| {
            *placed
                .entry((path.as_ptr(), path.len()))
                .or_insert_with(|| {
                    let next = route_links.len() as u32;
                    route_links.extend_from_slice(path);
                    Cursor {
                        next,
                        end: route_links.len() as u32,
                    }
                })
        };
        let paths: Vec<[Cursor; 2]> = net
            .routes()
            .iter()
            .map(|r| [place(&r.forward), place(&r.back)])
            .collect();
        let link_names = (0..net.links().len())
            .map(|i| net.link_name(LinkId(i as u32)))
            .collect();
        let links: Vec<Link> = net
            .links()
            .iter()
            .enumerate()
            .map(|(i, l)| Link::new(l, net.seed, i, net.engine.perturb_delays))
            .collect();
        let link_params = net
            .links()
            .iter()
            .zip(&links)
            .map(|(spec, l)| LinkParams::of(spec, &l.queue))
            .collect();
        let watchers: std::collections::HashMap<(NodeId, NodeId), u32> = links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.queue.watches_returning())
            .map(|(i, l)| ((l.from, l.to), i as u32))
            .collect();
        let returning = links
            .iter()
            .map(|l| watchers.get(&(l.to, l.from)).copied())
            .collect();
        let mut endpoints = Vec::with_capacity(net.flows().len() * 2);
        let mut flows = Vec::with_capacity(net.flows().len());
        let mut launches = Vec::with_capacity(net.flows().len());
        for (id, (f, paths)) in net.flows().iter().zip(paths).enumerate() {
            // Every random stream of a flow is derived here, from the seed and the flow's id.
            let start = f.start.resolve(net.seed, id);
            let rng = RngStream::derive(net.seed, f.protocol.rng_stream(), id as u64);
            let ctx = FlowCtx::new(FlowId(id as u32), start, f.stop, rng);
            let (sender, receiver) = f.protocol.endpoints(&ctx);
            flows.push(FlowMeta::new(f, id, net.seed, start));
            launches.push(Launch {
                paths,
                overhead: f.overhead,
            });
            endpoints.push(sender);
            endpoints.push(receiver);
        }
        let rec =
            Recorder::new(&net.record, flows.len(), &links, capture_dir).map_err(|(link, e)| {
                NetworkError::Capture {
                    link: net.link_name(LinkId(link as u32)),
                    message: format!("{}: {e}", capture_dir.display()),
                }
            })?;
        let mut cal = Calendar::with_ties(net.engine.ties, net.seed);
        cal.add_lanes(links.len());
        let mut sim = Self {
            cal,
            end: Instant::ZERO + net.duration,
            seed: net.seed,
            node_names: net.nodes().to_vec(),
            link_names,
            link_params,
            links,
            watching: !watchers.is_empty(),
            returning,
            timer_at: vec![None; endpoints.len()],
            endpoints,
            flows,
            launches,
            arena: Vec::with_capacity(4096),
            packet_ids: Vec::new(),
            cursors: Vec::with_capacity(4096),
            route_links,
            free: Vec::with_capacity(4096),
            rec,
            events: 0,
            packets: 0,
        };
        let interval = sim.rec.interval();
        if !interval.is_zero() {
            sim.cal
                .schedule(Instant::ZERO + interval.min(net.duration), Event::Sample);
        }
        for ep in 0..sim.endpoints.len() {
            sim.service(ep, Instant::ZERO);
        }
        Ok(sim)
    }

    /// Simulated time reached so far.
    pub fn now(&self) -> Instant {
        self.cal.now()
    }

    /// When the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Whether every event up to the end has been processed.
    pub fn is_finished(&self) -> bool {
        self.cal.peek_time().is_none_or(|t| t > self.end)
    }

    /// Processes every event up to `until` (capped at the end of the run).
    pub fn run_until(&mut self, until: Instant) {
        self.run_until_at_most(until, u64::MAX);
    }

    /// Processes events up to `until` (capped at the end of the run), but at most `max_events`
    /// of them; returns whether every event up to `until` has been processed. A driver that must
    /// stay responsive (to Ctrl-C, say) advances in such bounded slices, whatever the density of
    /// events in simulated time.
    pub fn run_until_at_most(&mut self, until: Instant, max_events: u64) -> bool {
        let until = until.min(self.end);
        let mut budget = max_events;
        loop {
            if budget == 0 {
                return self.cal.peek_time().is_none_or(|t| t > until);
            }
            let Some((now, event)) = self.cal.pop_due(until) else {
                break;
            };
            budget -= 1;
            self.events += 1;
            match event {
                Event::Arrive { link, slot } => self.arrive(link as usize, slot, now),
                Event::LinkWake { link } => {
                    let l = &mut self.links[link as usize];
                    l.wake_scheduled = false;
                    if now >= l.busy_until {
                        self.start_tx(link as usize, now);
                    }
                }
                Event::Depart { slot } => self.depart(slot, now),
                Event::Endpoint { ep } => self.endpoint_timer(ep as usize, now),
                Event::Sample => self.sample(now),
            }
        }
        true
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> RunOutput {
        self.run_until(self.end);
        self.finish()
    }

    fn sink_for(&mut self, ep: usize) -> (&mut AnyEndpoint, FlowSink<'_>) {
        (&mut self.endpoints[ep], self.rec.sink(ep / 2))
    }

    fn endpoint_timer(&mut self, ep: usize, now: Instant) {
        if self.timer_at[ep] != Some(now) {
            return; // superseded by an earlier deadline
        }
        self.timer_at[ep] = None;
        if self.endpoints[ep].poll_timeout().is_some_and(|t| t <= now) {
            let (endpoint, mut sink) = self.sink_for(ep);
            endpoint.handle_timeout(now, &mut sink);
        }
        self.service(ep, now);
    }

    /// Drains an endpoint's transmissions and re-arms its timer.
    fn service(&mut self, ep: usize, now: Instant) {
        while let Some(pkt) = self.endpoints[ep].poll_transmit(now) {
            self.emit(ep, pkt, now);
        }
        if let Some(t) = self.endpoints[ep].poll_timeout() {
            let t = t.max(now);
            if self.timer_at[ep].is_none_or(|s| t < s) {
                self.timer_at[ep] = Some(t);
                self.cal.schedule(t, Event::Endpoint { ep: ep as u32 });
            }
        }
    }

    /// Stores a packet an endpoint emitted and sends it on its way (after the sender's host
    /// overhead, if it has one).
    fn emit(&mut self, ep: usize, pkt: Packet, now: Instant) {
        let id = self.packets;
        self.packets += 1;
        let launch = self.launches[pkt.flow.index()];
        let cursor = launch.paths[usize::from(pkt.direction == Direction::Reverse)];
        let slot = match self.free.pop() {
            Some(s) => {
                self.arena[s as usize] = pkt;
                self.cursors[s as usize] = cursor;
                s
            }
            None => {
                self.arena.push(pkt);
                self.cursors.push(cursor);
                (self.arena.len() - 1) as u32
            }
        };
        if self.rec.tracing() {
            self.note_packet_id(slot, id);
        }
        if ep.is_multiple_of(2) && !launch.overhead.is_zero() {
            let at = self.flows[ep / 2].departure(now, launch.overhead);
            self.cal.schedule(at, Event::Depart { slot });
        } else {
            self.depart(slot, now);
        }
    }

    /// A packet leaves its sender's host.
    fn depart(&mut self, slot: u32, now: Instant) {
        self.rec.sent(&self.arena[slot as usize]);
        self.forward(slot, now);
    }

    /// Sends a packet over the next link of its flow's path, or delivers it at the path's end.
    fn forward(&mut self, slot: u32, now: Instant) {
        let Cursor { next, end } = self.cursors[slot as usize];
        if next < end {
            let link = self.route_links[next as usize];
            self.enqueue(link.index(), slot, now);
        } else {
            // Copied out because the endpoint may emit packets that reuse the slot.
            let pkt = self.arena[slot as usize];
            self.free.push(slot);
            self.deliver(&pkt, now);
        }
    }

    fn deliver(&mut self, pkt: &Packet, now: Instant) {
        self.rec.delivered(pkt);
        let ep = 2 * pkt.flow.index() + usize::from(pkt.direction == Direction::Forward);
        let (endpoint, mut sink) = self.sink_for(ep);
        endpoint.handle_packet(now, pkt, &mut sink);
        self.service(ep, now);
    }

    /// Offers a packet to a link's queue, and keeps the link work-conserving: an idle
    /// transmitter starts at once; a busy one without a wake-up gets one for when it frees
    /// (the packet in transmission may have started on an empty queue). A packet that an idle
    /// transmitter would send at once from an empty drop-tail queue goes to it directly
    /// ([`fairstream_net::Queue::passes_straight_through`]).
    fn enqueue(&mut self, link: usize, slot: u32, now: Instant) {
        let queued = QueuedPacket {
            slot,
            size: self.arena[slot as usize].size.as_bytes() as u32,
            enqueued_at: now,
        };
        self.trace_event(PacketEvent::Enqueue, link, slot, now);
        let l = &mut self.links[link];
        // Free, and no wake-up due: it would start on the next packet at once.
        let idle = !l.wake_scheduled && now >= l.busy_until;
        if idle && l.passes_straight_through(queued.size) {
            // Enqueueing and starting the transmitter would send it at once and leave the queue
            // as it was (its occupancy's blip lasts no time, so weighs nothing): skip the ring.
            let rate = l.rate_at(now);
            if !rate.is_zero() {
                self.transmit(link, queued, rate, now);
                return;
            }
        }
        match l.queue.enqueue(now, queued, &mut self.arena[slot as usize]) {
            Err(dropped) => {
                l.counters.packets_dropped += 1;
                self.lose(PacketEvent::Drop, link, dropped.slot, now);
            }
            Ok(()) => {
                l.note_queue(now);
                if idle {
                    self.start_tx(link, now);
                } else if !l.wake_scheduled {
                    l.wake_scheduled = true;
                    let at = l.busy_until;
                    self.cal.schedule(at, Event::LinkWake { link: link as u32 });
                } // else the transmitter will look at the queue when its wake-up is due
            }
        }
    }

    /// Counts a lost packet against its flow, traces it and frees its slot.
    fn lose(&mut self, event: PacketEvent, link: usize, slot: u32, now: Instant) {
        self.trace_event(event, link, slot, now);
        self.rec.lost(&self.arena[slot as usize]);
        self.free.push(slot);
    }

    fn start_tx(&mut self, link: usize, now: Instant) {
        let l = &mut self.links[link];
        let rate = l.rate_at(now);
        if rate.is_zero() {
            if let Some(t) = l.next_nonzero_rate(now) {
                l.wake_scheduled = true;
                self.cal.schedule(t, Event::LinkWake { link: link as u32 });
            }
            return;
        }
        match l.queue.dequeue(now) {
            Dequeue::Packet(q) => {
                l.note_queue(now);
                self.transmit(link, q, rate, now);
            }
            Dequeue::NotBefore(t) => {
                l.wake_scheduled = true;
                self.cal
                    .schedule(t.max(now), Event::LinkWake { link: link as u32 });
            }
            Dequeue::Empty => {}
        }
    }

    /// Puts `q`, which has left the link's queue (or passed straight through it: see
    /// [`Simulator::enqueue`]), on the wire at `rate`: it arrives at the far end after its
    /// transmission time and the propagation delay, unless the link's error model corrupts it;
    /// a backlog wakes the transmitter when it frees.
    ///
    /// A function of its own rather than part of [`Simulator::start_tx`] with the passing packet
    /// as an argument: measured so, B1 and B2's shape at 8 and 1024 flows ran about 10 % faster
    /// by wall clock and B7 2 % slower.
    fn transmit(&mut self, link: usize, q: QueuedPacket, rate: Bitrate, now: Instant) {
        let l = &mut self.links[link];
        let tx = rate.transmit_time(fairstream_core::DataSize::bytes(u64::from(q.size)));
        l.busy_until = now + tx;
        l.counters.packets_forwarded += 1;
        l.counters.bytes_forwarded += u64::from(q.size);
        let corrupted = !l.lossless && l.error.corrupts(&mut l.error_rng);
        if corrupted {
            l.counters.packets_corrupted += 1;
        }
        let arrive_at = l.busy_until + l.delay;
        let backlog = l.backlogged();
        let busy_until = l.busy_until;
        if backlog {
            l.wake_scheduled = true;
        }
        self.trace_event(PacketEvent::Transmit, link, q.slot, now);
        if self.rec.captures(link) {
            let pkt = &self.arena[q.slot as usize];
            let meta = &self.flows[pkt.flow.index()];
            let ends = (meta.src, meta.dst);
            self.rec.capture(link, now, pkt, ends, meta.segment_payload);
        }
        if corrupted {
            self.lose(PacketEvent::Corrupt, link, q.slot, now);
        } else {
            // A link delivers in the order it transmits: its arrivals form a lane.
            self.cal.schedule_in_lane(
                link,
                arrive_at,
                Event::Arrive {
                    link: link as u32,
                    slot: q.slot,
                },
            );
        }
        if backlog {
            self.cal
                .schedule(busy_until, Event::LinkWake { link: link as u32 });
        }
    }

    fn arrive(&mut self, link: usize, slot: u32, now: Instant) {
        self.trace_event(PacketEvent::Receive, link, slot, now);
        if self.watching
            && let Some(port) = self.returning[link]
            && let Some((vc, rm)) =
                fairstream_proto::abr::backward_rm(&mut self.arena[slot as usize])
        {
            self.links[port as usize].queue.on_returning(vc, rm);
        }
        self.cursors[slot as usize].next += 1;
        self.forward(slot, now);
    }

    /// Remembers the id of the packet now in `slot`, for the trace.
    #[cold]
    fn note_packet_id(&mut self, slot: u32, id: u64) {
        let slot = slot as usize;
        if slot == self.packet_ids.len() {
            self.packet_ids.push(id);
        } else {
            self.packet_ids[slot] = id;
        }
    }

    /// Records a packet event if the per-packet trace is on (a branch, and nothing else, when off).
    #[inline]
    fn trace_event(&mut self, event: PacketEvent, link: usize, slot: u32, now: Instant) {
        if self.rec.tracing() {
            let (pkt, id) = (&self.arena[slot as usize], self.packet_ids[slot as usize]);
            self.rec.trace(event, link, now, id, pkt);
        }
    }

    /// Closes the bin that ends at `now` and schedules the next close, except for the run's last
    /// bin: [`Simulator::finish_at`] closes that one, after every event at the run's end (a packet
    /// sent or delivered at that very instant, after this event in the tie order, would
    /// otherwise count in the summary and in no bin).
    fn sample(&mut self, now: Instant) {
        if now >= self.end {
            return;
        }
        self.rec.close_bin(now, &self.endpoints, &self.links);
        let next = now + self.rec.interval();
        self.cal.schedule(next.min(self.end), Event::Sample);
    }

    /// Closes the last bin and assembles the results.
    pub fn finish(self) -> RunOutput {
        let end = self.end;
        self.finish_at(end)
    }

    /// Stops the run early at `at` (at most the end): closes the bin in progress there and
    /// assembles the results as of `at`, as if the run had been that long (rates are per second
    /// of the time simulated). For a run interrupted after [`Simulator::run_until_at_most`],
    /// `at` is [`Simulator::now`]: every event before it has been processed.
    pub fn finish_at(mut self, at: Instant) -> RunOutput {
        let end = at.min(self.end);
        if !self.rec.interval().is_zero() {
            self.rec.close_bin(end, &self.endpoints, &self.links);
        }
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let info = FlowInfo {
                    name: &f.name,
                    protocol: f.protocol,
                    packet: f.packet,
                    src: f.src,
                    dst: f.dst,
                    start: f.start,
                    stop: f.stop,
                };
                self.rec
                    .flow_summary(i, &info, &self.endpoints, &self.node_names, end)
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (name, params) = (&self.link_names[i], &self.link_params[i]);
                Recorder::link_summary(i, l, name, params, &self.node_names, end)
            })
            .collect();
        let out = RunOutput {
            duration: end.saturating_since(Instant::ZERO),
            seed: self.seed,
            events: self.events,
            packets: self.packets,
            flow_names: self.flows.iter().map(|f| f.name.clone()).collect(),
            link_names: self.link_names,
            summary_columns: fairstream_proto::ProtocolConfig::summary_columns(),
            queue_columns: fairstream_net::QueueConfig::columns(),
            flows,
            links,
            ..RunOutput::default()
        };
        self.rec.into_output(out)
    }
}
