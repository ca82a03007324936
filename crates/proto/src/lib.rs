//! Sans-IO protocol endpoints.
//!
//! Every endpoint here is a state machine that never reads a clock, touches a socket, sleeps
//! or spawns: the driver (the simulator, later the real-time runtime or the emulator) feeds it
//! and drains it through the [`Endpoint`] trait:
//!
//! - `handle_packet(now, packet, metrics)` and `handle_timeout(now, metrics)` feed it;
//! - `poll_transmit(now)` drains the packets it wants to send, until `None`;
//! - `poll_timeout()` says when `handle_timeout` is next due.
//!
//! After every `handle_*` call the driver drains `poll_transmit` and then re-reads
//! `poll_timeout`. A spurious `handle_timeout` (earlier than due, or twice) does nothing.
//! Metric records (cwnd, RTT, RTO, rate, …) go to the [`MetricSink`] passed to each handler.
//!
//! ```
//! use fairstream_core::FlowId;
//! use fairstream_proto::cbr::{CbrConfig, CbrSource};
//! use fairstream_proto::{Endpoint, FlowCtx, NullSink};
//! let mut src = CbrSource::new(&FlowCtx::at_zero(FlowId(0), 1), CbrConfig::default());
//! let now = src.poll_timeout().unwrap(); // the flow's start time
//! src.handle_timeout(now, &mut NullSink);
//! let first = src.poll_transmit(now).expect("a CBR source sends at its start");
//! assert_eq!(first.size.as_bytes(), 1000);
//! ```

pub mod abr;
pub mod cbr;
#[cfg(test)]
mod closed_loop;
mod endpoint;
pub mod header;
pub mod lda;
pub mod media_scaling;
pub mod metric;
pub mod multfrc;
mod packet;
mod player;
mod protocols;
pub mod rap;
mod real_time;
pub mod surestream;
pub mod tcp;
pub mod tfrc;
pub mod vtp;
pub mod wire;
pub use endpoint::{Endpoint, EndpointStats};
pub use metric::{Metric, MetricKind, MetricSink, NullSink, VecSink};
pub use packet::{Direction, IP_TCP_HEADER, IP_UDP_HEADER, Packet, udp_feedback_size, udp_headers};
pub use protocols::{
    AnyEndpoint, DataPacket, FlowCtx, FlowDemand, FlowProtocol, Header, ProtocolConfig,
    TcpFlowConfig,
};
pub use real_time::{RealTime, RtProtocol};
