//! A deterministic discrete-event packet simulator that drives fairstream's sans-IO endpoints
//! through links built from `fairstream-net` elements.
//!
//! - [`calendar`]: the event calendar, ordered by time, then by a [`TieRule`] (seeded random
//!   order by default, or first scheduled first);
//! - [`estimate`]: the memory and events a run needs, estimated before it starts;
//! - [`network`]: the description of what to simulate (nodes, links, flows, recorders);
//! - [`routing`]: static shortest-path (fewest hops) next-hop tables;
//! - [`link`]: a link's run-time state: queue, transmitter, error model;
//! - `recorder`: the recording stage, which turns what the engine reports into the run's output
//!   (the records of `fairstream-records`: summaries, interval series, metric records, traces);
//! - [`pcap`]: libpcap files of a link with synthesised IPv4/TCP/UDP headers;
//! - [`simulator`]: the engine that ties them together.
//!
//! A run is a pure function of its [`Network`] (which carries the seed): events at the same
//! instant run in an order drawn from the seed (or first scheduled first, as chosen), every
//! random choice comes from a stream derived from (seed, component), and nothing reads the
//! wall clock.
//!
//! Links are work-conserving: a link never holds a packet in its queue while its transmitter
//! is idle, except where a token bucket has no tokens or a capacity schedule is at zero.
//!
//! ```
//! use fairstream_core::{Bitrate, DataSize, Duration, Instant};
//! use fairstream_net::{ErrorModel, QueueConfig, QueueLimit};
//! use fairstream_proto::ProtocolConfig;
//! use fairstream_proto::cbr::CbrConfig;
//! use fairstream_sim::{FlowSpec, LinkSpec, Network, Simulator};
//!
//! let mut net = Network::new(Duration::from_secs(10), 1);
//! let a = net.add_node("a");
//! let b = net.add_node("b");
//! net.add_link(LinkSpec::new(a, b, Bitrate::mbps(1), Duration::from_millis(10)));
//! let cbr = CbrConfig { rate: Bitrate::mbps(2).into(), packet_size: DataSize::bytes(1000), ..Default::default() };
//! net.add_flow(FlowSpec::new("udp", a, b, ProtocolConfig::Cbr(cbr))).unwrap();
//! let out = Simulator::new(net).unwrap().run();
//! // A 1 Mbit/s link delivers about half of a 2 Mbit/s offered load.
//! let delivered = out.flows[0].bytes_delivered as f64 * 8.0 / 10.0;
//! assert!((delivered - 1e6).abs() < 2e4, "{delivered}");
//! ```

pub mod calendar;
pub mod estimate;
pub mod link;
pub mod network;
pub mod pcap;
mod recorder;
pub mod routing;
pub mod simulator;

pub use calendar::TieRule;
pub use estimate::{Estimate, Part};
pub use network::{
    EngineConfig, FlowRoute, FlowSpec, FlowStart, LinkSpec, Network, NetworkError,
    PERTURBATION_PACKET, RecordConfig,
};
pub use recorder::LinkParams;
pub use simulator::Simulator;
