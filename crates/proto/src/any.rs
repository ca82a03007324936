//! [`AnyEndpoint`]: static dispatch over every endpoint kind, so drivers hold one enum.

use fairstream_core::Instant;

use crate::tcp::{TcpSender, TcpSink};
use crate::{CbrSource, Endpoint, EndpointStats, MetricSink, Packet, UdpSink};

/// Any endpoint fairstream knows, dispatched by `match` rather than through a vtable.
#[derive(Debug, Clone)]
pub enum AnyEndpoint {
    /// TCP Reno/NewReno sender.
    TcpSender(Box<TcpSender>),
    /// TCP receiver (optionally with delayed ACKs).
    TcpSink(TcpSink),
    /// UDP constant-bit-rate source.
    Cbr(CbrSource),
    /// UDP receiver.
    UdpSink(UdpSink),
}

impl AnyEndpoint {
    /// Whether this endpoint, as a receiver, sends packets back to its flow's source
    /// (ACKs, feedback), so that the flow needs a route in both directions.
    pub fn sends_feedback(&self) -> bool {
        !matches!(self, Self::UdpSink(_) | Self::Cbr(_))
    }
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEndpoint::TcpSender($e) => $body,
            AnyEndpoint::TcpSink($e) => $body,
            AnyEndpoint::Cbr($e) => $body,
            AnyEndpoint::UdpSink($e) => $body,
        }
    };
}

impl Endpoint for AnyEndpoint {
    #[inline]
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        dispatch!(self, e => e.handle_packet(now, packet, metrics))
    }
    #[inline]
    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        dispatch!(self, e => e.handle_timeout(now, metrics))
    }
    #[inline]
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        dispatch!(self, e => e.poll_transmit(now))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        dispatch!(self, e => e.poll_timeout())
    }
    fn stats(&self) -> EndpointStats {
        dispatch!(self, e => e.stats())
    }
}
