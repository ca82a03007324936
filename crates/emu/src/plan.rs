//! What to emulate, from a checked scenario: the hosts that need a namespace (every node a
//! flow starts or ends at; routers stay inside the emulator), each flow with its kind, ports,
//! start and stop and the links it crosses each way, and the links themselves.

use std::net::{SocketAddr, SocketAddrV4};

use fairstream_core::{Duration, Instant, NodeId};
use fairstream_proto::cbr::CbrConfig;
use fairstream_proto::surestream::{SurestreamConfig, Transport};
use fairstream_proto::{DataPacket, FlowProtocol, ProtocolConfig};
use fairstream_records::MetricSelection;
use fairstream_rt::RtProtocol;
use fairstream_scenario::{LinuxTcpConfig, Scenario};
use fairstream_sim::{FlowRoute, LinkSpec};

use crate::EmuError;
use crate::device::host_addr;

/// The first receiver port: flow `i`'s receiver listens on `RECV_PORT + i`, which is how the
/// forwarder tells the flows' packets apart.
pub const RECV_PORT: u16 = 20_000;
/// The first sender port: flow `i`'s sender binds `SEND_PORT + i`.
pub const SEND_PORT: u16 = 40_000;
/// Most flows an emulation runs (the port ranges above).
pub const MAX_FLOWS: usize = 20_000;
/// The MTU of every host's device unless a flow's packets are larger.
pub const DEFAULT_MTU: u32 = 1500;

/// What a flow runs.
#[derive(Clone, Debug)]
pub enum FlowKind {
    /// Unresponsive UDP: the scenario's CBR source endpoint, paced in real time.
    Cbr(CbrConfig),
    /// A fairstream protocol over UDP through the real-time driver (`fairstream-rt`).
    Rt(RtProtocol, Box<ProtocolConfig>),
    /// The kernel's TCP.
    LinuxTcp(LinuxTcpConfig),
    /// Paper 000's streamer over a kernel TCP socket (`surestream` with `transport = "tcp"`).
    StreamTcp(Box<SurestreamConfig>),
}

impl FlowKind {
    /// The protocol label in results.
    pub fn label(&self) -> String {
        match self {
            Self::Cbr(_) => "cbr".to_string(),
            Self::Rt(p, _) => p.name().to_string(),
            Self::LinuxTcp(c) => format!("linux-tcp-{}", c.congestion),
            Self::StreamTcp(_) => "surestream".to_string(),
        }
    }

    /// A full data packet as the flow's sender sends it (a streamer over a kernel socket: as
    /// the simulator's streamer over TCP describes it).
    pub fn data_packet(&self) -> DataPacket {
        match self {
            Self::Cbr(c) => c.data_packet(),
            Self::Rt(_, c) => c.data_packet(),
            Self::LinuxTcp(c) => c.data_packet(),
            Self::StreamTcp(c) => c.data_packet(),
        }
    }
}

/// An emulated host: a scenario node with its own namespace.
#[derive(Clone, Debug)]
pub struct HostPlan {
    /// The scenario node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// Its address.
    pub addr: std::net::Ipv4Addr,
    /// `net.ipv4.tcp_sack` for its kernel TCP flows, if it has any.
    pub sack: Option<bool>,
    /// `net.ipv4.tcp_timestamps` for its kernel TCP flows, if it has any.
    pub timestamps: Option<bool>,
}

/// A flow to run.
#[derive(Clone, Debug)]
pub struct FlowPlan {
    /// Name in results.
    pub name: String,
    /// What it runs.
    pub kind: FlowKind,
    /// Index of its sender's host.
    pub src: usize,
    /// Index of its receiver's host.
    pub dst: usize,
    /// When its application starts.
    pub start: Instant,
    /// When it stops.
    pub stop: Instant,
    /// The links crossed each way.
    pub route: FlowRoute,
}

impl FlowPlan {
    /// The receiver's port of flow number `i`.
    pub fn recv_port(i: usize) -> u16 {
        RECV_PORT + i as u16
    }

    /// The sender's port of flow number `i`.
    pub fn send_port(i: usize) -> u16 {
        SEND_PORT + i as u16
    }
}

/// Everything an emulation runs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Scenario name.
    pub name: String,
    /// Node names by node id.
    pub nodes: Vec<String>,
    /// Hosts with a namespace.
    pub hosts: Vec<HostPlan>,
    /// Flows, in the scenario's order.
    pub flows: Vec<FlowPlan>,
    /// Links, by link id.
    pub links: Vec<LinkSpec>,
    /// Link names, by link id.
    pub link_names: Vec<String>,
    /// How long the emulation runs.
    pub duration: Duration,
    /// The scenario's seed.
    pub seed: u64,
    /// Width of the interval series' bins.
    pub interval: Duration,
    /// Whether metric records are kept.
    pub metrics: bool,
    /// Which metrics the kept records are.
    pub metric_selection: MetricSelection,
    /// Whether each link's interval series is kept, by link id (`[record] link_series`).
    pub link_series_kept: Vec<bool>,
    /// The hosts' devices' MTU.
    pub mtu: u32,
}

impl Plan {
    /// Flow `i`'s sender's address (where it binds) and its receiver's (where it listens).
    pub fn flow_addrs(&self, i: usize) -> (SocketAddr, SocketAddr) {
        let f = &self.flows[i];
        let at = |host: usize, port| SocketAddr::V4(SocketAddrV4::new(self.hosts[host].addr, port));
        (
            at(f.src, FlowPlan::send_port(i)),
            at(f.dst, FlowPlan::recv_port(i)),
        )
    }

    /// The plan of `scenario`, or what it holds that the emulator does not run.
    pub fn new(scenario: &Scenario) -> Result<Self, EmuError> {
        let net = &scenario.network;
        let mut entries: Vec<(usize, FlowPlanDraft)> = Vec::new();
        let mut sim_order = 0usize;
        let kernel_orders: Vec<usize> = scenario.kernel_flows.iter().map(|k| k.order).collect();
        for (i, (f, route)) in net.flows().iter().zip(net.routes()).enumerate() {
            while kernel_orders.contains(&sim_order) {
                sim_order += 1;
            }
            let kind = match &f.protocol {
                ProtocolConfig::Cbr(c) => FlowKind::Cbr(c.clone()),
                ProtocolConfig::Surestream(c) if c.transport == Transport::Tcp => {
                    FlowKind::StreamTcp(Box::new(c.clone()))
                }
                other => {
                    let p = RtProtocol::parse(other.name()).ok_or_else(|| {
                        EmuError::Unsupported(format!(
                            "flow `{}`: the emulator runs cbr, linux-tcp and what the real-time \
                             driver runs ({}), not {} (it has no wire format{})",
                            f.name,
                            RtProtocol::names(),
                            other.name(),
                            if other.name() == "tcp" {
                                "; use protocol = \"linux-tcp\" for a real TCP"
                            } else {
                                ""
                            }
                        ))
                    })?;
                    FlowKind::Rt(p, Box::new(other.clone()))
                }
            };
            if !f.overhead.is_zero() {
                return Err(EmuError::Unsupported(format!(
                    "flow `{}`: a host overhead is the simulator's (a real host has its own)",
                    f.name
                )));
            }
            let start = f.start.resolve(net.seed, i);
            entries.push((
                sim_order,
                FlowPlanDraft {
                    name: f.name.clone(),
                    kind,
                    src: f.src,
                    dst: f.dst,
                    start,
                    stop: f.stop,
                    route: route.clone(),
                },
            ));
            sim_order += 1;
        }
        for k in &scenario.kernel_flows {
            entries.push((
                k.order,
                FlowPlanDraft {
                    name: k.name.clone(),
                    kind: FlowKind::LinuxTcp(k.tcp.clone()),
                    src: k.src,
                    dst: k.dst,
                    start: k.start.resolve(net.seed, k.order),
                    stop: k.stop,
                    route: k.route.clone(),
                },
            ));
        }
        entries.sort_by_key(|(o, _)| *o);
        if entries.len() > MAX_FLOWS {
            return Err(EmuError::Unsupported(format!(
                "{} flows; the emulator runs at most {MAX_FLOWS}",
                entries.len()
            )));
        }
        for (i, l) in net.links().iter().enumerate() {
            if matches!(l.queue, fairstream_net::QueueConfig::Erica(_)) {
                return Err(EmuError::Unsupported(format!(
                    "link `{}`: an ERICA port switches ATM cells, which exist only in the \
                     simulator",
                    link_name(net, i)
                )));
            }
        }
        let mut hosts: Vec<HostPlan> = Vec::new();
        let host_of = |node: NodeId, hosts: &mut Vec<HostPlan>| -> usize {
            if let Some(i) = hosts.iter().position(|h| h.node == node) {
                return i;
            }
            hosts.push(HostPlan {
                node,
                name: net.nodes()[node.index()].clone(),
                addr: host_addr(hosts.len()),
                sack: None,
                timestamps: None,
            });
            hosts.len() - 1
        };
        let end = Instant::ZERO + net.duration;
        let mut flows = Vec::with_capacity(entries.len());
        let mut mtu = DEFAULT_MTU;
        for (_, d) in entries {
            let src = host_of(d.src, &mut hosts);
            let dst = host_of(d.dst, &mut hosts);
            if let FlowKind::LinuxTcp(c) = &d.kind {
                for h in [src, dst] {
                    let host = &mut hosts[h];
                    for (have, want, key) in [
                        (&mut host.sack, c.sack, "sack"),
                        (&mut host.timestamps, c.timestamps, "timestamps"),
                    ] {
                        match *have {
                            Some(v) if v != want => {
                                return Err(EmuError::Unsupported(format!(
                                    "flow `{}`: `{key} = {want}`, but another linux-tcp flow of \
                                     host `{}` has `{key} = {v}`; a host's kernel has one \
                                     setting (net.ipv4.tcp_{key})",
                                    d.name, host.name
                                )));
                            }
                            _ => *have = Some(want),
                        }
                    }
                }
                mtu = mtu.max(c.packet_size.as_bytes() as u32);
            }
            if let FlowKind::Cbr(c) = &d.kind {
                mtu = mtu.max(c.packet_size.as_bytes() as u32);
            }
            flows.push(FlowPlan {
                name: d.name,
                kind: d.kind,
                src,
                dst,
                start: d.start,
                stop: d.stop.unwrap_or(end).min(end),
                route: d.route,
            });
        }
        Ok(Self {
            name: scenario.name.clone(),
            nodes: net.nodes().to_vec(),
            hosts,
            flows,
            links: net.links().to_vec(),
            link_names: (0..net.links().len()).map(|i| link_name(net, i)).collect(),
            duration: net.duration,
            seed: net.seed,
            interval: net.record.interval,
            metrics: net.record.metrics,
            metric_selection: net.record.metric_selection.clone(),
            link_series_kept: net.record.link_series_kept(net.links().len()),
            mtu,
        })
    }
}

struct FlowPlanDraft {
    name: String,
    kind: FlowKind,
    src: NodeId,
    dst: NodeId,
    start: Instant,
    stop: Option<Instant>,
    route: FlowRoute,
}

fn link_name(net: &fairstream_sim::Network, i: usize) -> String {
    net.link_name(fairstream_core::LinkId(i as u32))
}
