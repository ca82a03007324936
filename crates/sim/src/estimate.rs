//! An estimate of a run's memory and events, made from its [`Network`] before it starts, so that
//! a run that would exhaust the machine is refused before it allocates rather than aborted by
//! the kernel half-way.
//!
//! The model (every count an upper estimate, in `f64` so that no product of user values wraps):
//!
//! - **Packets.** An unresponsive source (CBR) offers its rate to its first link; each later
//!   link of its path sees at most the rate of the slowest link before it. A source that adapts
//!   (TCP, TFRC, VTP, MULTFRC) delivers at most its path's slowest link rate; it is counted at
//!   twice that on its forward links (retransmissions, losses upstream of the bottleneck) and
//!   once for its feedback on the way back. Flows that share a bottleneck share its capacity:
//!   the packet-hops of all flows whose slowest link is the same are at most what that link
//!   carries, times the longest such path. An initial rate (TFRC's `first_rate`, VTP's
//!   `initial_rate`) is counted as unresponsive for [`FlowDemand::INITIAL_PERIOD`].
//! - **Events** are two per packet-hop (arrival, transmitter wake-up), two per packet emitted
//!   (endpoint timer, departure), one per interval-series bin and a few per flow.
//! - **Memory** is the sum of the [`Part`]s: nodes and routing, per-link state and queue room,
//!   per-flow state (endpoints, windows), packets held in queues and on the wire (every queue
//!   full and every link busy, or every flow's window in flight each way, whichever is less), the interval
//!   series (bins × (flows + links whose series is kept) rows), the per-packet trace (three rows per packet-hop) and
//!   the metric records. Tables are counted twice over, for the room a growing vector keeps and
//!   the Arrow copy made when the run hands its results over.
//!
//! The flows' routes are the ones the scenario reader found (or are found here once).

use std::collections::HashMap;

use fairstream_core::{DataSize, LinkId};
use fairstream_net::QueuedPacket;
use fairstream_proto::{AnyEndpoint, FlowDemand, Packet};

use crate::Network;
use crate::link::Link;
use crate::network::{FlowRoute, FlowSpec, FlowStart, LinkSpec};
use crate::routing::TREE_BUDGET;
use crate::simulator::Cursor;

/// What a run's memory goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// Node names, their index and the routing searches.
    Nodes,
    /// Per-link state: descriptions, queues' room, counters.
    Links,
    /// Per-flow state: descriptions, endpoints, their windows.
    Flows,
    /// Packets waiting in queues and travelling on links.
    Packets,
    /// The interval series: one row per flow and per kept link per bin.
    Series,
    /// The per-packet trace.
    Trace,
    /// Protocol metric records.
    Metrics,
}

impl Part {
    /// Every part, in the order of [`Estimate::bytes`].
    pub const ALL: [Self; 7] = [
        Self::Nodes,
        Self::Links,
        Self::Flows,
        Self::Packets,
        Self::Series,
        Self::Trace,
        Self::Metrics,
    ];

    /// What the part is, for a person.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::Nodes => "the nodes and their routes",
            Self::Links => "the links' state and queue room",
            Self::Flows => "the flows' state (endpoints and windows)",
            Self::Packets => "the packets held in queues and on links",
            Self::Series => "the interval series",
            Self::Trace => "the per-packet trace (record.packets)",
            Self::Metrics => "the metric records (record.metrics)",
        }
    }
}

/// Bytes of one row of the interval series (a flow's or a link's), with the room a growing
/// vector keeps and the Arrow copy of the results.
pub const SERIES_ROW_BYTES: f64 = 250.0;
/// Bytes of one row of the per-packet trace, likewise.
pub const TRACE_ROW_BYTES: f64 = 140.0;
/// Bytes of one metric record, likewise.
pub const METRIC_ROW_BYTES: f64 = 110.0;

/// A packet in flight: its arena slot, place on its path and id, its queue entry and its
/// calendar entry, with room for growth.
const HELD_PACKET_BYTES: f64 =
    2.0 * (size_of::<Packet>() + size_of::<Cursor>() + 8 + size_of::<QueuedPacket>() + 32) as f64;

/// What the engine allocates up front for packets and events (its arena of 4096 packets, its
/// calendar), doubled for margin.
const ENGINE_BYTES: f64 =
    2.0 * (4096.0 * (size_of::<Packet>() + size_of::<Cursor>() + 4) as f64 + 1024.0 * 32.0);

/// The smallest packet that can cross a link (an IPv4 + UDP header alone).
const SMALLEST_PACKET: DataSize = DataSize::bytes(28);

/// What a run is estimated to need, before it starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Events the engine processes.
    pub events: f64,
    /// Packets crossing a link (each link a packet crosses counts once).
    pub packet_hops: f64,
    /// Rows of the interval series.
    pub series_rows: f64,
    /// Rows of the per-packet trace (zero unless recorded).
    pub trace_rows: f64,
    /// Metric records (zero unless recorded).
    pub metric_rows: f64,
    /// Bytes of each [`Part`], in the order of [`Part::ALL`].
    pub bytes: [f64; 7],
}

impl Estimate {
    /// Bytes of memory in all.
    pub fn total_bytes(&self) -> f64 {
        self.bytes.iter().sum()
    }

    /// Bytes of `part`.
    pub fn part(&self, part: Part) -> f64 {
        self.bytes[part as usize]
    }

    /// The parts from the largest down.
    pub fn largest(&self) -> Vec<(Part, f64)> {
        let mut parts: Vec<(Part, f64)> = Part::ALL.iter().map(|&p| (p, self.part(p))).collect();
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        parts
    }

    /// The estimate for `net`.
    pub fn of(net: &Network) -> Self {
        let mut e = Self::default();
        let secs = net.duration.as_secs_f64();
        let caps: Vec<f64> = net.links().iter().map(peak_bps).collect();
        let routes = net.routes();

        // Packets each link is offered (for the room its queue fills), and the shared
        // bottlenecks of adaptive flows.
        let mut offered = vec![0.0f64; net.links().len()];
        let mut groups: HashMap<LinkId, Group> = HashMap::new();
        let mut emitted = 0.0;
        let mut flow_bytes = 0.0;
        let mut by_flows = 0.0;
        let mut metrics_per_packet: f64 = 0.0;
        for (f, route) in net.flows().iter().zip(routes) {
            let demand = f.protocol.demand();
            let size = demand.packet_size.as_bytes().max(1) as f64 * 8.0;
            let active = active_secs(f, secs);
            metrics_per_packet = metrics_per_packet.max(demand.metrics_per_packet);
            let fwd: Vec<f64> = route.forward.iter().map(|l| caps[l.index()]).collect();
            // Unresponsive traffic: the fixed rate all along, or the initial rate at first.
            let unresponsive = demand
                .fixed_rate
                .map(|r| (r.as_bps_f64(), active))
                .or_else(|| {
                    let initial = FlowDemand::INITIAL_PERIOD.as_secs_f64().min(active);
                    demand.initial_rate.map(|r| (r.as_bps_f64(), initial))
                });
            if let Some((rate, during)) = unresponsive {
                let mut r = rate;
                for (k, link) in route.forward.iter().enumerate() {
                    let packets = r * during / size;
                    offered[link.index()] += packets;
                    e.packet_hops += packets;
                    if k == 0 {
                        emitted += packets;
                    }
                    r = r.min(fwd[k]);
                }
            }
            if demand.fixed_rate.is_none() {
                // What it sends with no feedback at all (timeouts, rate floors), beside the
                // share of its bottleneck.
                let idle = 16.0 + active / demand.idle_interval.as_secs_f64().max(1e-9);
                let back = if f.protocol.sends_feedback() {
                    idle
                } else {
                    0.0
                };
                emitted += idle + back;
                e.packet_hops += idle * route.forward.len() as f64 + back * route.back.len() as f64;
                if let Some(first) = route.forward.first() {
                    offered[first.index()] += idle;
                }
                let (bottleneck, cap) = route.forward.iter().zip(&fwd).fold(
                    (None, f64::INFINITY),
                    |(b, c), (&l, &x)| {
                        if x < c { (Some(l), x) } else { (b, c) }
                    },
                );
                let cap = if demand.loss_limited {
                    cap.min(loss_bound_bps(net, route, size))
                } else {
                    cap
                };
                let delivered = if cap.is_finite() {
                    cap * active / size
                } else {
                    0.0
                };
                let feedback = if f.protocol.sends_feedback() {
                    delivered
                } else {
                    0.0
                };
                for l in route.forward.iter() {
                    offered[l.index()] += 2.0 * delivered;
                }
                for l in route.back.iter() {
                    offered[l.index()] += feedback;
                }
                if let Some(b) = bottleneck {
                    let g = groups.entry(b).or_default();
                    g.hops += 2.0 * delivered * route.forward.len() as f64
                        + feedback * route.back.len() as f64;
                    g.packets += 2.0 * delivered + feedback;
                    g.path = g
                        .path
                        .max(2.0 * route.forward.len() as f64 + route.back.len() as f64);
                    g.most = g.most.max(cap * active / size);
                }
            }
            // The flow's state: its description twice over (the network and the engine's),
            // its endpoints, counters and route, and its window in flight.
            let window = demand.window.map_or(0.0, |w| {
                (w as f64).min(path_holds(net.links(), &caps, &route.forward, size))
            });
            // Packets of the flow held at once: a window's worth each way, or for a flow
            // without a window what its paths hold.
            let holds = |path: &[LinkId], size: f64| path_holds(net.links(), &caps, path, size);
            by_flows += match demand.window {
                Some(w) => 2.0 * (w as f64).min(holds(&route.forward, size)),
                None => holds(&route.forward, size) + holds(&route.back, size),
            };
            flow_bytes += (size_of::<FlowSpec>()
                + FLOW_META_BYTES
                + 2 * size_of::<AnyEndpoint>()
                + demand.state_bytes
                + 3 * f.name.len()
                + 8 * (route.forward.len() + route.back.len())) as f64
                + 2.0 * window * demand.bytes_per_packet_in_flight as f64;
        }
        for g in groups.values() {
            let bound = g.most * g.path;
            e.packet_hops += g.hops.min(bound);
            emitted += g.packets.min(3.0 * g.most);
        }

        let record = &net.record;
        let bins = if record.interval.is_zero() {
            0.0
        } else {
            net.duration.as_nanos().div_ceil(record.interval.as_nanos()) as f64
        };
        let series_links = record.series_links(net.links().len());
        e.series_rows = bins * (net.flows().len() + series_links) as f64;
        e.trace_rows = if record.packets {
            // A row per hop for each per-hop event kept; a packet is lost at most once.
            let per_hop = record.packet_events.iter().filter(|e| e.per_hop()).count();
            let losses = record.packet_events.iter().any(|e| !e.per_hop());
            if per_hop > 0 {
                per_hop as f64 * e.packet_hops
            } else if losses {
                e.packet_hops
            } else {
                0.0
            }
        } else {
            0.0
        };
        e.metric_rows = if record.metrics {
            metrics_per_packet * emitted
        } else {
            0.0
        };
        e.events = 2.0 * e.packet_hops + 2.0 * emitted + bins + 8.0 * net.flows().len() as f64;

        let nodes = net.nodes().len() as f64;
        let names: usize = net.nodes().iter().map(String::len).sum();
        let kept_searches = (nodes * 2.0 * net.flows().len() as f64).min(TREE_BUDGET as f64);
        e.bytes[Part::Nodes as usize] = nodes * NODE_BYTES
            + 2.0 * names as f64
            + net.links().len() as f64 * 16.0
            + 4.0 * kept_searches
            + 9.0 * nodes;
        e.bytes[Part::Links as usize] = net
            .links()
            .iter()
            .map(|l| link_bytes(l, net.flows().len()))
            .sum();
        e.bytes[Part::Flows as usize] = flow_bytes;
        let by_links: f64 = net
            .links()
            .iter()
            .zip(&caps)
            .zip(&offered)
            .map(|((l, &cap), &offered)| {
                // Packets on the wire: the link's rate, or the rate it is offered, times
                // its delay.
                let delay = l.delay.as_secs_f64();
                let queued = (l.queue.max_packets(SMALLEST_PACKET) as f64).min(offered);
                let wire = (cap * delay / (8.0 * SMALLEST_PACKET.as_bytes() as f64))
                    .min(offered / secs.max(1e-9) * delay)
                    .min(offered);
                queued + wire + 1.0
            })
            .sum();
        e.bytes[Part::Packets as usize] = by_links.min(by_flows) * HELD_PACKET_BYTES + ENGINE_BYTES;
        e.bytes[Part::Series as usize] = e.series_rows * SERIES_ROW_BYTES;
        e.bytes[Part::Trace as usize] = e.trace_rows * TRACE_ROW_BYTES;
        e.bytes[Part::Metrics as usize] = e.metric_rows * METRIC_ROW_BYTES;
        e
    }
}

/// Adaptive flows that share a bottleneck link.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    /// Their packet-hops, each counted alone.
    hops: f64,
    /// Their packets emitted (data and feedback), each counted alone.
    packets: f64,
    /// Hops of their longest path (forward counted twice, as in `hops`).
    path: f64,
    /// Most packets the bottleneck carries during the longest of their active times.
    most: f64,
}

/// Bytes of a node: its name's `String` in the network and the engine, its entry in the
/// scenario's index and in the routing tables.
const NODE_BYTES: f64 = (2 * size_of::<String>() + 64 + 2 * size_of::<Vec<u32>>() + 8) as f64;

/// Bytes of the engine's per-flow record beside its endpoints (name, paths, counters).
const FLOW_META_BYTES: usize = 512;

/// The link's highest rate over its schedule, bit/s.
fn peak_bps(l: &LinkSpec) -> f64 {
    l.capacity
        .steps()
        .iter()
        .map(|&(_, r)| r.as_bps_f64())
        .fold(l.capacity.base().as_bps_f64(), f64::max)
}

/// Seconds a flow may send: from its earliest start to its stop or the end of the run.
fn active_secs(f: &FlowSpec, end: f64) -> f64 {
    let start = match f.start {
        FlowStart::At(t) | FlowStart::Uniform(t, _) => t.as_secs_f64(),
    };
    let stop = f.stop.map_or(end, |s| s.as_secs_f64().min(end));
    (stop - start).max(0.0)
}

/// Data packets (of `size` bits) a flow's forward path can hold at once: every queue full of
/// the smallest packets and every link's rate × delay of the flow's packets on the wire, plus
/// one per hop.
fn path_holds(links: &[LinkSpec], caps: &[f64], path: &[LinkId], size: f64) -> f64 {
    path.iter()
        .map(|l| {
            let spec = &links[l.index()];
            spec.queue.max_packets(SMALLEST_PACKET) as f64
                + caps[l.index()] * spec.delay.as_secs_f64() / size
                + 1.0
        })
        .sum()
}

/// Bytes of a link's state: its description (in the network and the engine), names, queue
/// room, counters, schedule, its lane in the calendar (a ring of at least 4 entries of 32 bytes
/// once it has carried a packet), and a fair queue's per-flow state.
fn link_bytes(l: &LinkSpec, flows: usize) -> f64 {
    (size_of::<LinkSpec>()
        + size_of::<Link>()
        + 256
        + size_of::<std::collections::VecDeque<u8>>()
        + 4 * 32
        + l.queue.preallocated_bytes()
        + 48 * l.capacity.steps().len()
        + l.queue.bytes_per_flow() * flows) as f64
}

/// Twice the TCP equation's rate (bit/s) for packets of `size` bits at the path's random loss
/// and propagation round trip: a bound on a loss-limited flow's rate (infinite without loss).
fn loss_bound_bps(net: &Network, route: &FlowRoute, size: f64) -> f64 {
    let survive: f64 = route
        .forward
        .iter()
        .map(|l| 1.0 - net.links()[l.index()].error.mean_loss_rate())
        .product();
    let p = 1.0 - survive;
    let rtt: f64 = route
        .forward
        .iter()
        .chain(route.back.iter())
        .map(|l| net.links()[l.index()].delay.as_secs_f64())
        .sum();
    if p <= 0.0 || rtt <= 0.0 {
        return f64::INFINITY;
    }
    2.0 * size / (rtt * (2.0 * p / 3.0).sqrt())
}
