//! The engine: pops events off the [`Calendar`], moves packets through links and nodes,
//! drives the endpoints, and records what happened.
//!
//! Events (same-instant events run in the order of the run's [`TieRule`]):
//! - `Arrive`: a packet finished propagating along a link and reaches the link's far node,
//!   which delivers it (if it is the packet's destination) or enqueues it on the next hop;
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

use fairstream_core::{Duration, FlowId, Instant, LinkId, NodeId, RngStream};
use fairstream_net::{Dequeue, QueuedPacket};
use fairstream_proto::{AnyEndpoint, Direction, Endpoint, Metric, MetricSink, Packet};

use crate::calendar::Calendar;
use crate::link::{Link, LinkCounters};
use crate::network::FlowSpec;
use crate::pcap::PcapWriter;
use crate::record::{
    FlowSeries, FlowSummary, LinkSeries, LinkSummary, MetricRecords, PacketEvent, PacketTrace,
    RunOutput,
};
use crate::routing::Routes;
use crate::{Network, NetworkError};

#[derive(Debug, Clone, Copy)]
enum Event {
    Arrive { link: u32, slot: u32 },
    LinkWake { link: u32 },
    Depart { ep: u32, slot: u32 },
    Endpoint { ep: u32 },
    Sample,
}

/// Cumulative counters of one flow.
#[derive(Debug, Clone, Copy, Default)]
struct FlowCounters {
    packets_sent: u64,
    bytes_sent: u64,
    packets_delivered: u64,
    bytes_delivered: u64,
    packets_dropped: u64,
    rtt_sum: f64,
    rtt_samples: u64,
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
    tcp_segment: u64,
    /// The sender's host overhead (zero: packets leave when emitted).
    overhead: Duration,
    /// Draws the overhead of each packet.
    overhead_rng: RngStream,
    /// When the sender's last packet left its host (packets leave in the order emitted).
    last_departure: Instant,
    /// The links from source to destination (`[0]`) and back (`[1]`, empty if the receiver
    /// sends nothing), found once when the run is built.
    paths: [Box<[LinkId]>; 2],
}

impl FlowMeta {
    fn new(f: &FlowSpec, id: usize, seed: u64, start: Instant, paths: [Box<[LinkId]>; 2]) -> Self {
        Self {
            name: f.name.clone(),
            protocol: f.protocol.name(),
            src: f.src,
            dst: f.dst,
            start,
            stop: f.stop,
            tcp_segment: f.protocol.segment_payload(),
            overhead: f.overhead,
            overhead_rng: RngStream::derive(seed, "host-overhead", id as u64),
            last_departure: Instant::ZERO,
            paths,
        }
    }

    /// When a packet the sender emits at `now` leaves its host: uniform in `[0, overhead]`
    /// after `now` or after the previous packet's departure, whichever is later. After ns-2's
    /// `overhead_`, which draws one delay per send opportunity rather than per packet.
    fn departure(&mut self, now: Instant) -> Instant {
        let gap = self.overhead_rng.uniform() * self.overhead.as_nanos() as f64;
        let at = now.max(self.last_departure) + Duration::from_nanos(gap as u64);
        self.last_departure = at;
        at
    }
}

/// Routes a flow's metric records into its counters and, if enabled, the metric table.
struct FlowSink<'a> {
    flow: u32,
    counters: &'a mut FlowCounters,
    records: Option<&'a mut MetricRecords>,
}

impl MetricSink for FlowSink<'_> {
    #[inline]
    fn record(&mut self, now: Instant, metric: Metric) {
        if let Metric::RttSample(d) = metric {
            self.counters.rtt_sum += d.as_secs_f64();
            self.counters.rtt_samples += 1;
        }
        if let Some(r) = self.records.as_deref_mut() {
            r.t.push(now.as_secs_f64());
            r.flow_id.push(self.flow);
            r.metric.push(metric.name());
            r.value.push(metric.value());
        }
    }
}

/// A simulation in progress. Build it from a [`Network`], advance it with
/// [`Simulator::run_until`] (or [`Simulator::run`]), then collect the [`RunOutput`].
pub struct Simulator {
    cal: Calendar<Event>,
    end: Instant,
    seed: u64,
    interval: Duration,
    node_names: Vec<String>,
    link_names: Vec<String>,
    queue_descriptions: Vec<String>,
    links: Vec<Link>,
    endpoints: Vec<AnyEndpoint>,
    timer_at: Vec<Option<Instant>>,
    flows: Vec<FlowMeta>,
    arena: Vec<Packet>,
    /// Unique id of the packet in each arena slot (for the packet trace).
    packet_ids: Vec<u64>,
    /// How many links of its path the packet in each arena slot has crossed.
    hops: Vec<u16>,
    free: Vec<u32>,
    counters: Vec<FlowCounters>,
    counters_at_bin: Vec<(FlowCounters, u64)>,
    links_at_bin: Vec<LinkCounters>,
    bin_start: Instant,
    flow_series: FlowSeries,
    link_series: LinkSeries,
    metrics: Option<MetricRecords>,
    trace: Option<PacketTrace>,
    pcaps: Vec<Option<PcapWriter>>,
    events: u64,
    packets: u64,
}

impl Simulator {
    /// Builds a run; fails if a flow has no route (in either direction).
    pub fn new(net: Network) -> Result<Self, NetworkError> {
        let routes = Routes::compute(net.nodes.len(), &net.link_ends());
        let mut paths = Vec::with_capacity(net.flows.len());
        for f in &net.flows {
            if f.src == f.dst {
                return Err(NetworkError::SameNode {
                    flow: f.name.clone(),
                    node: net.nodes[f.src.index()].clone(),
                });
            }
            let route = match &f.route {
                Some(r) if net.joins(f, r) => r.clone(),
                _ => net
                    .route(&routes, f)
                    .map_err(|(a, b)| NetworkError::NoRoute {
                        flow: f.name.clone(),
                        from: net.nodes[a.index()].clone(),
                        to: net.nodes[b.index()].clone(),
                    })?,
            };
            paths.push([route.forward.into(), route.back.into()]);
        }
        let link_names = (0..net.links.len())
            .map(|i| net.link_name(LinkId(i as u32)))
            .collect();
        let queue_descriptions = net.links.iter().map(|l| format!("{:?}", l.queue)).collect();
        let links: Vec<Link> = net
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| Link::new(l, net.seed, i, net.engine.perturb_delays))
            .collect();
        let mut pcaps: Vec<Option<PcapWriter>> = vec![None; links.len()];
        for l in &net.record.pcap {
            if let Some(p) = pcaps.get_mut(l.index()) {
                *p = Some(PcapWriter::new());
            }
        }
        let mut endpoints = Vec::with_capacity(net.flows.len() * 2);
        let mut flows = Vec::with_capacity(net.flows.len());
        for (id, (f, paths)) in net.flows.iter().zip(paths).enumerate() {
            // Every random stream of a flow is derived here, from the seed and the flow's id.
            let start = f.start.resolve(net.seed, id);
            let rng = RngStream::derive(net.seed, f.protocol.rng_stream(), id as u64);
            let (sender, receiver) = f.protocol.endpoints(FlowId(id as u32), start, f.stop, rng);
            flows.push(FlowMeta::new(f, id, net.seed, start, paths));
            endpoints.push(sender);
            endpoints.push(receiver);
        }
        let n_flows = flows.len();
        let n_links = links.len();
        let mut sim = Self {
            cal: Calendar::with_ties(net.engine.ties, net.seed),
            end: Instant::ZERO + net.duration,
            seed: net.seed,
            interval: net.record.interval,
            node_names: net.nodes,
            link_names,
            queue_descriptions,
            links,
            timer_at: vec![None; endpoints.len()],
            endpoints,
            flows,
            arena: Vec::with_capacity(4096),
            packet_ids: Vec::with_capacity(4096),
            hops: Vec::with_capacity(4096),
            free: Vec::with_capacity(4096),
            counters: vec![FlowCounters::default(); n_flows],
            counters_at_bin: vec![(FlowCounters::default(), 0); n_flows],
            links_at_bin: vec![LinkCounters::default(); n_links],
            bin_start: Instant::ZERO,
            flow_series: FlowSeries::default(),
            link_series: LinkSeries::default(),
            metrics: net.record.metrics.then(MetricRecords::default),
            trace: net.record.packets.then(PacketTrace::default),
            pcaps,
            events: 0,
            packets: 0,
        };
        if !sim.interval.is_zero() {
            sim.cal.schedule(
                Instant::ZERO + sim.interval.min(net.duration),
                Event::Sample,
            );
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
        let until = until.min(self.end);
        while let Some(t) = self.cal.peek_time() {
            if t > until {
                break;
            }
            // A peeked event is always there to pop.
            let Some((now, event)) = self.cal.pop() else {
                break;
            };
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
                Event::Depart { ep, slot } => self.depart(ep as usize, slot, now),
                Event::Endpoint { ep } => self.endpoint_timer(ep as usize, now),
                Event::Sample => self.sample(now),
            }
        }
    }

    /// Runs to the end and returns the results.
    pub fn run(mut self) -> RunOutput {
        self.run_until(self.end);
        self.finish()
    }

    fn sink_for(&mut self, ep: usize) -> (&mut AnyEndpoint, FlowSink<'_>) {
        let flow = ep / 2;
        (
            &mut self.endpoints[ep],
            FlowSink {
                flow: flow as u32,
                counters: &mut self.counters[flow],
                records: self.metrics.as_mut(),
            },
        )
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
        let slot = match self.free.pop() {
            Some(s) => {
                self.arena[s as usize] = pkt;
                self.packet_ids[s as usize] = id;
                self.hops[s as usize] = 0;
                s
            }
            None => {
                self.arena.push(pkt);
                self.packet_ids.push(id);
                self.hops.push(0);
                (self.arena.len() - 1) as u32
            }
        };
        let meta = &mut self.flows[ep / 2];
        if ep.is_multiple_of(2) && !meta.overhead.is_zero() {
            let at = meta.departure(now);
            self.cal.schedule(
                at,
                Event::Depart {
                    ep: ep as u32,
                    slot,
                },
            );
        } else {
            self.depart(ep, slot, now);
        }
    }

    /// A packet leaves the host of endpoint `ep`.
    fn depart(&mut self, ep: usize, slot: u32, now: Instant) {
        let flow = ep / 2;
        let pkt = &self.arena[slot as usize];
        if pkt.direction == Direction::Forward {
            let c = &mut self.counters[flow];
            c.packets_sent += 1;
            c.bytes_sent += pkt.size.as_bytes();
        }
        self.forward(slot, now);
    }

    /// Sends a packet over the next link of its flow's path, or delivers it at the path's end.
    fn forward(&mut self, slot: u32, now: Instant) {
        let pkt = &self.arena[slot as usize];
        let meta = &self.flows[pkt.flow.index()];
        let path = &meta.paths[usize::from(pkt.direction == Direction::Reverse)];
        match path.get(usize::from(self.hops[slot as usize])) {
            Some(link) => self.enqueue(link.index(), slot, now),
            None => {
                // Copied out because the endpoint may emit packets that reuse the slot.
                let pkt = *pkt;
                self.free.push(slot);
                self.deliver(&pkt, now);
            }
        }
    }

    fn deliver(&mut self, pkt: &Packet, now: Instant) {
        let flow = pkt.flow.index();
        let ep = match pkt.direction {
            Direction::Forward => {
                let c = &mut self.counters[flow];
                c.packets_delivered += 1;
                c.bytes_delivered += pkt.size.as_bytes();
                2 * flow + 1
            }
            Direction::Reverse => 2 * flow,
        };
        let (endpoint, mut sink) = self.sink_for(ep);
        endpoint.handle_packet(now, pkt, &mut sink);
        self.service(ep, now);
    }

    /// Offers a packet to a link's queue, and keeps the link work-conserving: an idle
    /// transmitter starts at once; a busy one without a wake-up gets one for when it frees
    /// (the packet in transmission may have started on an empty queue).
    fn enqueue(&mut self, link: usize, slot: u32, now: Instant) {
        let pkt = &self.arena[slot as usize];
        let queued = QueuedPacket {
            slot,
            flow: pkt.flow.0,
            size: pkt.size.as_bytes() as u32,
            enqueued_at: now,
        };
        self.trace_event(PacketEvent::Enqueue, link, slot, now);
        let l = &mut self.links[link];
        match l.queue.enqueue(now, queued) {
            Err(dropped) => {
                l.counters.packets_dropped += 1;
                self.lose(PacketEvent::Drop, link, dropped.slot, now);
            }
            Ok(()) => {
                l.note_queue(now);
                if l.wake_scheduled {
                    // The transmitter will look at the queue when it is due.
                } else if now >= l.busy_until {
                    self.start_tx(link, now);
                } else {
                    l.wake_scheduled = true;
                    let at = l.busy_until;
                    self.cal.schedule(at, Event::LinkWake { link: link as u32 });
                }
            }
        }
    }

    /// Counts a lost packet against its flow, traces it and frees its slot.
    fn lose(&mut self, event: PacketEvent, link: usize, slot: u32, now: Instant) {
        self.trace_event(event, link, slot, now);
        let pkt = &self.arena[slot as usize];
        if pkt.direction == Direction::Forward {
            self.counters[pkt.flow.index()].packets_dropped += 1;
        }
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
                let tx = rate.transmit_time(fairstream_core::DataSize::bytes(u64::from(q.size)));
                l.busy_until = now + tx;
                l.counters.packets_forwarded += 1;
                l.counters.bytes_forwarded += u64::from(q.size);
                let corrupted = l.error.corrupts(&mut l.error_rng);
                if corrupted {
                    l.counters.packets_corrupted += 1;
                }
                let arrive_at = l.busy_until + l.delay;
                let backlog = l.queue.len_packets() > 0;
                let busy_until = l.busy_until;
                if backlog {
                    l.wake_scheduled = true;
                }
                self.trace_event(PacketEvent::Transmit, link, q.slot, now);
                if let Some(w) = self.pcaps[link].as_mut() {
                    let pkt = &self.arena[q.slot as usize];
                    let meta = &self.flows[pkt.flow.index()];
                    w.write(now, pkt, meta.src, meta.dst, meta.tcp_segment);
                }
                if corrupted {
                    self.lose(PacketEvent::Corrupt, link, q.slot, now);
                } else {
                    self.cal.schedule(
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
            Dequeue::NotBefore(t) => {
                l.wake_scheduled = true;
                self.cal
                    .schedule(t.max(now), Event::LinkWake { link: link as u32 });
            }
            Dequeue::Empty => {}
        }
    }

    fn arrive(&mut self, link: usize, slot: u32, now: Instant) {
        self.trace_event(PacketEvent::Receive, link, slot, now);
        self.hops[slot as usize] += 1;
        self.forward(slot, now);
    }

    /// Records a packet event if the per-packet trace is on (a branch, and nothing else, when off).
    #[inline]
    fn trace_event(&mut self, event: PacketEvent, link: usize, slot: u32, now: Instant) {
        if self.trace.is_some() {
            self.record_trace(event, link, slot, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn record_trace(&mut self, event: PacketEvent, link: usize, slot: u32, now: Instant) {
        let Some(tr) = self.trace.as_mut() else {
            return;
        };
        let p = &self.arena[slot as usize];
        let seq = p.header.trace_seq();
        tr.t.push(now.as_secs_f64());
        tr.t_ns.push(now.as_nanos());
        tr.packet_id.push(self.packet_ids[slot as usize]);
        tr.event.push(event);
        tr.link_id.push(link as u32);
        tr.flow_id.push(p.flow.0);
        tr.seq.push(seq);
        tr.size.push(p.size.as_bytes() as u32);
        tr.reverse.push(p.direction == Direction::Reverse);
    }

    fn sample(&mut self, now: Instant) {
        self.record_bin(now);
        let next = now + self.interval;
        if now < self.end {
            self.cal.schedule(next.min(self.end), Event::Sample);
        }
    }

    /// Closes the bin `[bin_start, now)` of every series.
    fn record_bin(&mut self, now: Instant) {
        if now <= self.bin_start {
            return;
        }
        let (t0, t1) = (self.bin_start.as_secs_f64(), now.as_secs_f64());
        let s = &mut self.flow_series;
        for (flow, c) in self.counters.iter().enumerate() {
            let goodput = self.endpoints[2 * flow + 1].stats().app_bytes_received;
            let (prev, prev_goodput) = self.counters_at_bin[flow];
            s.flow_id.push(flow as u32);
            s.t_start.push(t0);
            s.t_end.push(t1);
            s.packets_sent.push(c.packets_sent - prev.packets_sent);
            s.bytes_sent.push(c.bytes_sent - prev.bytes_sent);
            s.packets_delivered
                .push(c.packets_delivered - prev.packets_delivered);
            s.bytes_delivered
                .push(c.bytes_delivered - prev.bytes_delivered);
            s.goodput_bytes.push(goodput - prev_goodput);
            s.packets_dropped
                .push(c.packets_dropped - prev.packets_dropped);
            let n = c.rtt_samples - prev.rtt_samples;
            s.rtt_mean_s.push(if n == 0 {
                f64::NAN
            } else {
                (c.rtt_sum - prev.rtt_sum) / n as f64
            });
            self.counters_at_bin[flow] = (*c, goodput);
        }
        let s = &mut self.link_series;
        for (i, l) in self.links.iter().enumerate() {
            let prev = self.links_at_bin[i];
            let c = l.counters;
            s.link_id.push(i as u32);
            s.t_start.push(t0);
            s.t_end.push(t1);
            s.queue_packets.push(l.queue.len_packets() as u64);
            s.queue_bytes.push(l.queue.len_bytes());
            s.packets_forwarded
                .push(c.packets_forwarded - prev.packets_forwarded);
            s.bytes_forwarded
                .push(c.bytes_forwarded - prev.bytes_forwarded);
            s.packets_dropped.push(
                c.packets_dropped + c.packets_corrupted
                    - prev.packets_dropped
                    - prev.packets_corrupted,
            );
            let cap = l.capacity_bits(self.bin_start, now);
            let bits = (c.bytes_forwarded - prev.bytes_forwarded) as f64 * 8.0;
            s.utilisation.push(if cap > 0.0 { bits / cap } else { 0.0 });
            self.links_at_bin[i] = c;
        }
        self.bin_start = now;
    }

    /// Closes the last bin and assembles the results.
    pub fn finish(mut self) -> RunOutput {
        let end = self.end;
        if !self.interval.is_zero() {
            self.record_bin(end);
        }
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let c = &self.counters[i];
                let sender = self.endpoints[2 * i].stats();
                let receiver = self.endpoints[2 * i + 1].stats();
                let stop = f.stop.unwrap_or(end).min(end);
                let active = stop.saturating_since(f.start).as_secs_f64();
                let per_sec = |bytes: u64| {
                    if active > 0.0 {
                        bytes as f64 * 8.0 / active
                    } else {
                        0.0
                    }
                };
                FlowSummary {
                    flow_id: i as u32,
                    name: f.name.clone(),
                    protocol: f.protocol.to_string(),
                    src: self.node_names[f.src.index()].clone(),
                    dst: self.node_names[f.dst.index()].clone(),
                    start_s: f.start.as_secs_f64(),
                    stop_s: stop.as_secs_f64(),
                    packets_sent: c.packets_sent,
                    bytes_sent: c.bytes_sent,
                    packets_delivered: c.packets_delivered,
                    bytes_delivered: c.bytes_delivered,
                    goodput_bytes: receiver.app_bytes_received,
                    packets_dropped: c.packets_dropped,
                    retransmits: sender.retransmits,
                    throughput_bps: per_sec(c.bytes_delivered),
                    goodput_bps: per_sec(receiver.app_bytes_received),
                    loss_rate: if c.packets_sent == 0 {
                        0.0
                    } else {
                        c.packets_dropped as f64 / c.packets_sent as f64
                    },
                    mean_rtt_s: if c.rtt_samples == 0 {
                        f64::NAN
                    } else {
                        c.rtt_sum / c.rtt_samples as f64
                    },
                }
            })
            .collect();
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let cap = l.capacity_bits(Instant::ZERO, end);
                LinkSummary {
                    link_id: i as u32,
                    name: self.link_names[i].clone(),
                    src: self.node_names[l.from.index()].clone(),
                    dst: self.node_names[l.to.index()].clone(),
                    rate_bps: l.capacity.base().as_bps_f64(),
                    delay_s: l.delay.as_secs_f64(),
                    queue: self.queue_descriptions[i].clone(),
                    packets_forwarded: l.counters.packets_forwarded,
                    bytes_forwarded: l.counters.bytes_forwarded,
                    packets_dropped: l.counters.packets_dropped,
                    packets_corrupted: l.counters.packets_corrupted,
                    utilisation: if cap > 0.0 {
                        l.counters.bytes_forwarded as f64 * 8.0 / cap
                    } else {
                        0.0
                    },
                    mean_queue_packets: l.mean_queue(end),
                }
            })
            .collect();
        let pcaps = self
            .pcaps
            .into_iter()
            .enumerate()
            .filter_map(|(i, w)| w.map(|w| (self.link_names[i].clone(), w.into_bytes())))
            .collect();
        RunOutput {
            duration: end.saturating_since(Instant::ZERO),
            seed: self.seed,
            events: self.events,
            packets: self.packets,
            flow_names: self.flows.iter().map(|f| f.name.clone()).collect(),
            link_names: self.link_names,
            flows,
            links,
            flow_series: self.flow_series,
            link_series: self.link_series,
            metrics: self.metrics.unwrap_or_default(),
            packet_trace: self.trace,
            pcaps,
        }
    }
}
