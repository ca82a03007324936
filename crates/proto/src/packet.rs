//! Packets as typed values: a header and a size on the wire.
//!
//! Inside the simulator packets are never serialised; the wire encoding for real networks
//! ([`crate::wire`]) maps to and from these values. What the simulator charges for a packet of
//! a UDP-based protocol is what that encoding sends ([`udp_headers`], [`udp_feedback_size`]).

use fairstream_core::{DataSize, FlowId, Instant};

use crate::Header;

/// Bytes of IPv4 + TCP header counted in every TCP packet (ns-2's `tcpip_base_hdr_size_`).
pub const IP_TCP_HEADER: u64 = 40;
/// Bytes of IPv4 + UDP header counted in every UDP packet.
pub const IP_UDP_HEADER: u64 = 28;

/// Bytes of headers before the payload of a data packet of a UDP-based protocol (TFRC, VTP,
/// the media applications) whose own header takes `fields` bytes (its `WIRE_LEN`): IPv4 and
/// UDP, the datagram's frame header ([`crate::wire::FRAME_HEADER_LEN`]) and the fields. With
/// the payload, the packet's size is what [`crate::wire::encode`] writes plus IPv4 and UDP.
pub const fn udp_headers(fields: u64) -> u64 {
    IP_UDP_HEADER + crate::wire::FRAME_HEADER_LEN as u64 + fields
}

/// Size on the wire of a feedback report of a UDP-based protocol whose own header takes
/// `fields` bytes (its `WIRE_LEN`): its headers ([`udp_headers`]) and the nonce echo every
/// report ends with ([`crate::wire::ECHO_LEN`]), which proves to a real sender what the report
/// claims.
pub const fn udp_feedback_size(fields: u64) -> DataSize {
    DataSize::bytes(udp_headers(fields) + crate::wire::ECHO_LEN as u64)
}

/// Which way a packet travels along its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the flow's source to its destination (data).
    Forward,
    /// From the destination back to the source (ACKs, feedback).
    Reverse,
}

/// A packet: who it belongs to, how big it is on the wire, and its protocol header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Which way it travels.
    pub direction: Direction,
    /// Size on the wire (IP header included): what links serialise and queues count.
    pub size: DataSize,
    /// Application payload carried (zero for pure ACKs and SYNs).
    pub payload: u32,
    /// When the endpoint emitted it.
    pub sent_at: Instant,
    /// Protocol header.
    pub header: Header,
}
