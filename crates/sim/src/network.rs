//! What to simulate: nodes, links, flows and recorders, with the run's duration and seed.

use fairstream_core::{
    Bitrate, DataSize, Duration, FlowId, Instant, LinkId, NodeId, RateSchedule, RngStream,
};
use fairstream_net::{ErrorModel, LimitCounting, Queue, QueueConfig, QueueLimit};
use fairstream_proto::ProtocolConfig;
use fairstream_records::{MetricSelection, PacketEvents};

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::calendar::TieRule;
use crate::routing::Routes;

/// A one-way link.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// Name shown in results (default `"from->to"` with node names).
    pub name: Option<String>,
    /// Transmitting node.
    pub from: NodeId,
    /// Receiving node.
    pub to: NodeId,
    /// Rate over time.
    pub capacity: RateSchedule,
    /// Propagation delay.
    pub delay: Duration,
    /// Queue discipline at the transmitter.
    pub queue: QueueConfig,
    /// Packet error model (applied to each packet as it is transmitted).
    pub error: ErrorModel,
}

impl LinkSpec {
    /// A link of constant `rate` and `delay` with a 100-packet drop-tail queue and no errors.
    pub fn new(from: NodeId, to: NodeId, rate: Bitrate, delay: Duration) -> Self {
        Self {
            name: None,
            from,
            to,
            capacity: RateSchedule::constant(rate),
            delay,
            queue: QueueConfig::DropTail {
                limit: QueueLimit::Packets(100),
                counting: LimitCounting::Waiting,
            },
            error: ErrorModel::None,
        }
    }

    /// The queue of this link, numbered `index` in a run with master `seed`, with its random
    /// stream. The simulator and the emulator both build their links' queues here, so that
    /// a scenario draws the same streams in either.
    pub fn build_queue(&self, seed: u64, index: usize) -> Queue {
        Queue::new(
            &self.queue,
            self.capacity.base(),
            self.delay,
            RngStream::derive(seed, "queue", index as u64),
        )
    }

    /// The random stream of this link's error model (see [`Self::build_queue`]).
    pub fn error_rng(seed: u64, index: usize) -> RngStream {
        RngStream::derive(seed, "link-error", index as u64)
    }
}

/// A flow: its protocol's configuration, a sender at `src` and a receiver at `dst`. The
/// simulator builds the endpoints from the configuration; the network finds its route when it
/// is added ([`Network::add_flow`]).
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// Name shown in results.
    pub name: String,
    /// Sender's node.
    pub src: NodeId,
    /// Receiver's node.
    pub dst: NodeId,
    /// The protocol and its parameters.
    pub protocol: ProtocolConfig,
    /// When the application starts.
    pub start: FlowStart,
    /// When the application stops (`None`: at the end of the run).
    pub stop: Option<Instant>,
    /// Host overhead of the sender (ns-2 `overhead_`): each packet it emits leaves after a
    /// random delay uniform in `[0, overhead]` past the previous one's departure (zero: none).
    pub overhead: Duration,
}

/// The links a flow's packets cross: data from source to destination, feedback back. Flows
/// between the same two nodes share their paths (a hundred thousand flows across a long chain
/// hold one path, not a hundred thousand copies).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowRoute {
    /// From the source to the destination.
    pub forward: Arc<[LinkId]>,
    /// From the destination back to the source (empty if the receiver sends nothing).
    pub back: Arc<[LinkId]>,
}

/// When a flow's application starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowStart {
    /// At this instant.
    At(Instant),
    /// At an instant drawn uniformly from `[low, high]` from the flow's own random stream.
    Uniform(Instant, Instant),
}

impl FlowStart {
    /// The start instant of flow number `flow` in a run with master `seed`.
    pub fn resolve(self, seed: u64, flow: usize) -> Instant {
        match self {
            Self::At(t) => t,
            Self::Uniform(lo, hi) => {
                let mut rng = RngStream::derive(seed, "flow-start", flow as u64);
                let span = hi.saturating_since(lo).as_nanos() as f64;
                lo + Duration::from_nanos((rng.uniform() * span) as u64)
            }
        }
    }

    /// The latest instant it can be.
    pub fn latest(self) -> Instant {
        match self {
            Self::At(t) | Self::Uniform(_, t) => t,
        }
    }
}

impl FlowSpec {
    /// A flow of `protocol` from `src` to `dst` starting at time zero that never stops.
    pub fn new(
        name: impl Into<String>,
        src: NodeId,
        dst: NodeId,
        protocol: ProtocolConfig,
    ) -> Self {
        Self {
            name: name.into(),
            src,
            dst,
            protocol,
            start: FlowStart::At(Instant::ZERO),
            stop: None,
            overhead: Duration::ZERO,
        }
    }
}

/// What a run records beyond per-flow and per-link summaries.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordConfig {
    /// Width of the interval series' bins.
    pub interval: Duration,
    /// Keep protocol metric records (cwnd, RTT, RTO, …).
    pub metrics: bool,
    /// Which metrics the kept records are (every one by default).
    pub metric_selection: MetricSelection,
    /// Keep a per-packet trace (enqueue, transmit, drop, receive at every link).
    pub packets: bool,
    /// The events the per-packet trace keeps (all by default).
    pub packet_events: PacketEvents,
    /// Links to capture into pcap files.
    pub pcap: Vec<LinkId>,
    /// The links whose interval series (`link_series`) is kept, by id (`None`: every link).
    pub link_series: Option<Vec<LinkId>>,
}

impl Default for RecordConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_millis(100),
            metrics: false,
            metric_selection: MetricSelection::All,
            packets: false,
            packet_events: PacketEvents::ALL,
            pcap: Vec::new(),
            link_series: None,
        }
    }
}

impl RecordConfig {
    /// How many of `links` links have their interval series kept ([`RecordConfig::link_series`]).
    pub fn series_links(&self, links: usize) -> usize {
        self.link_series.as_ref().map_or(links, Vec::len)
    }

    /// For each of `links` links, by id, whether its interval series is kept
    /// ([`RecordConfig::link_series`]).
    pub fn link_series_kept(&self, links: usize) -> Vec<bool> {
        match &self.link_series {
            None => vec![true; links],
            Some(kept) => {
                let mut out = vec![false; links];
                for l in kept {
                    if let Some(k) = out.get_mut(l.index()) {
                        *k = true;
                    }
                }
                out
            }
        }
    }
}

/// Engine settings that are no property of a node, link or flow.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct EngineConfig {
    /// How same-instant events (among them packets reaching a queue together) are ordered.
    pub ties: TieRule,
    /// Phase perturbation: each link's propagation delay is lengthened by a fixed amount drawn
    /// uniformly from `[0, f × T)`, where `T` is the transmission time of a 1500-byte packet at
    /// the link's base rate and `f` is this fraction (zero: delays as given).
    pub perturb_delays: f64,
}

/// The packet size that scales [`EngineConfig::perturb_delays`]: an Ethernet MTU.
pub const PERTURBATION_PACKET: DataSize = DataSize::bytes(1500);

/// Everything a run needs. Nodes, links and flows are added in that order through
/// [`Network::add_node`], [`Network::add_link`] and [`Network::add_flow`]; the network finds
/// each flow's route once, when the flow is added, and owns it ([`Network::routes`]): the
/// simulator and the estimate walk it as found.
#[derive(Clone, Debug)]
pub struct Network {
    /// Node names, indexed by [`NodeId`].
    nodes: Vec<String>,
    /// Links, indexed by [`LinkId`].
    links: Vec<LinkSpec>,
    /// Flows, indexed by flow id.
    flows: Vec<FlowSpec>,
    /// Each flow's route, indexed by flow id.
    routes: Vec<FlowRoute>,
    /// The route finder over the links added so far (built at the first flow, dropped when a
    /// node or link is added).
    routing: Option<Routes>,
    /// The paths found with it, by (from, to), which the flows' routes share (in order: the
    /// network's `Debug` form, which tests compare, is the same every time).
    paths: BTreeMap<(NodeId, NodeId), Arc<[LinkId]>>,
    /// Simulated time to run.
    pub duration: Duration,
    /// Master seed of every random stream.
    pub seed: u64,
    /// Recorders.
    pub record: RecordConfig,
    /// Tie rule and phase perturbation.
    pub engine: EngineConfig,
}

/// A network that cannot be simulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// A flow's packets cannot reach its destination (or its ACKs cannot come back).
    #[error("flow `{flow}` has no route from `{from}` to `{to}`")]
    NoRoute {
        /// The flow's name.
        flow: String,
        /// Node the route starts at.
        from: String,
        /// Node it cannot reach.
        to: String,
    },
    /// A capture file cannot be created.
    #[error("cannot capture link `{link}`: {message}")]
    Capture {
        /// The link's name.
        link: String,
        /// Why.
        message: String,
    },
    /// A flow starts and ends at the same node.
    #[error("flow `{flow}` starts and ends at node `{node}`")]
    SameNode {
        /// The flow's name.
        flow: String,
        /// The node.
        node: String,
    },
}

impl Network {
    /// An empty network to run for `duration` with master seed `seed`.
    pub fn new(duration: Duration, seed: u64) -> Self {
        Self {
            nodes: Vec::new(),
            links: Vec::new(),
            flows: Vec::new(),
            routes: Vec::new(),
            routing: None,
            paths: BTreeMap::new(),
            duration,
            seed,
            record: RecordConfig::default(),
            engine: EngineConfig::default(),
        }
    }

    /// Adds a node and returns its id.
    pub fn add_node(&mut self, name: impl Into<String>) -> NodeId {
        self.nodes.push(name.into());
        self.routing = None;
        self.paths.clear();
        NodeId((self.nodes.len() - 1) as u32)
    }

    /// Adds a one-way link and returns its id.
    pub fn add_link(&mut self, link: LinkSpec) -> LinkId {
        self.links.push(link);
        self.routing = None;
        self.paths.clear();
        LinkId((self.links.len() - 1) as u32)
    }

    /// Adds a flow and finds its route ([`Network::find_route`]); returns its flow id, or why
    /// it cannot run.
    pub fn add_flow(&mut self, flow: FlowSpec) -> Result<FlowId, NetworkError> {
        let route = self.find_route(
            &flow.name,
            flow.src,
            flow.dst,
            flow.protocol.sends_feedback(),
        )?;
        self.flows.push(flow);
        self.routes.push(route);
        Ok(FlowId((self.flows.len() - 1) as u32))
    }

    /// The route of a flow named `name` from `src` to `dst`: fewest hops each way over the
    /// links added so far, with a way back only where its receiver answers (`feedback`). An
    /// error says why there is none: the flow starts and ends at one node, or a way has no
    /// path. Flows the network does not run (the emulator's kernel TCP) are routed here too.
    pub fn find_route(
        &mut self,
        name: &str,
        src: NodeId,
        dst: NodeId,
        feedback: bool,
    ) -> Result<FlowRoute, NetworkError> {
        if src == dst {
            return Err(NetworkError::SameNode {
                flow: name.to_string(),
                node: self.nodes[src.index()].clone(),
            });
        }
        let routing = self
            .routing
            .get_or_insert_with(|| Routes::compute(self.nodes.len(), &link_ends(&self.links)));
        let (paths, nodes) = (&mut self.paths, &self.nodes);
        let mut path = |a: NodeId, b: NodeId| -> Result<Arc<[LinkId]>, NetworkError> {
            if let Some(found) = paths.get(&(a, b)) {
                return Ok(Arc::clone(found));
            }
            let found: Arc<[LinkId]> = routing
                .path(a, b)
                .ok_or_else(|| NetworkError::NoRoute {
                    flow: name.to_string(),
                    from: nodes[a.index()].clone(),
                    to: nodes[b.index()].clone(),
                })?
                .into();
            paths.insert((a, b), Arc::clone(&found));
            Ok(found)
        };
        Ok(FlowRoute {
            forward: path(src, dst)?,
            back: if feedback {
                path(dst, src)?
            } else {
                Arc::from([])
            },
        })
    }

    /// Node names, indexed by [`NodeId`].
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// Links, indexed by [`LinkId`].
    pub fn links(&self) -> &[LinkSpec] {
        &self.links
    }

    /// Flows, indexed by flow id.
    pub fn flows(&self) -> &[FlowSpec] {
        &self.flows
    }

    /// Each flow's route, indexed by flow id (found when the flow was added).
    pub fn routes(&self) -> &[FlowRoute] {
        &self.routes
    }

    /// The display name of a link.
    pub fn link_name(&self, id: LinkId) -> String {
        let l = &self.links[id.index()];
        l.name.clone().unwrap_or_else(|| {
            format!(
                "{}->{}",
                self.nodes[l.from.index()],
                self.nodes[l.to.index()]
            )
        })
    }

    /// Endpoints of every link as `(from, to)` pairs.
    pub fn link_ends(&self) -> Vec<(NodeId, NodeId)> {
        link_ends(&self.links)
    }
}

fn link_ends(links: &[LinkSpec]) -> Vec<(NodeId, NodeId)> {
    links.iter().map(|l| (l.from, l.to)).collect()
}
