//! Packets as typed values: a header and a size on the wire.
//!
//! Inside the simulator packets are never serialised; the wire encoding for real networks
//! lives elsewhere and maps to and from these values.

use fairstream_core::{DataSize, FlowId, Instant};

/// Bytes of IPv4 + TCP header counted in every TCP packet (ns-2's `tcpip_base_hdr_size_`).
pub const IP_TCP_HEADER: u64 = 40;
/// Bytes of IPv4 + UDP header counted in every UDP packet.
pub const IP_UDP_HEADER: u64 = 28;

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

/// Protocol headers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Header {
    /// A TCP segment (ns-2 one-way TCP: packet-numbered).
    Tcp(TcpSegment),
    /// A UDP datagram with an application sequence number.
    Udp(UdpDatagram),
}

/// Flags of a TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpFlags {
    /// Connection set-up (ns-2 SYN emulation: packet 0 is a 40-byte SYN).
    pub syn: bool,
    /// The segment is a retransmission (for tracing only; receivers must not rely on it).
    pub retransmit: bool,
}

/// A TCP segment in packet-numbered (ns-2) form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSegment {
    /// Data: the packet number carried. ACK: unused (the ACKed packet's number).
    pub seq: i64,
    /// ACK: the cumulative acknowledgement (highest in-order packet received, −1 for none).
    pub ack: i64,
    /// Whether this is a pure acknowledgement travelling back to the sender.
    pub is_ack: bool,
    /// Flags.
    pub flags: TcpFlags,
}

/// A UDP datagram header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpDatagram {
    /// Application sequence number, from 0.
    pub seq: u64,
}

impl Header {
    /// The sequence number the packet trace shows: a TCP data packet's number, an ACK's
    /// cumulative acknowledgement, a UDP datagram's number.
    pub fn trace_seq(&self) -> i64 {
        match self {
            Self::Tcp(s) if s.is_ack => s.ack,
            Self::Tcp(s) => s.seq,
            Self::Udp(u) => i64::try_from(u.seq).unwrap_or(i64::MAX),
        }
    }
}

impl Packet {
    /// The TCP header, if this is a TCP packet.
    pub fn tcp(&self) -> Option<&TcpSegment> {
        match &self.header {
            Header::Tcp(t) => Some(t),
            Header::Udp(_) => None,
        }
    }
}
