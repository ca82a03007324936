//! Packets as typed values: a header and a size on the wire.
//!
//! Inside the simulator packets are never serialised; the wire encoding for real networks
//! ([`crate::wire`]) maps to and from these values. What the simulator charges for a packet of
//! a UDP-based protocol is what that encoding sends ([`udp_headers`], [`udp_feedback_size`]).

use fairstream_core::{Bitrate, DataSize, Duration, FlowId, Instant};
use fairstream_media::FrameType;

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

/// Protocol headers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Header {
    /// A TCP segment (ns-2 one-way TCP: packet-numbered).
    Tcp(TcpSegment),
    /// A UDP datagram with an application sequence number.
    Udp(UdpDatagram),
    /// A TFRC (or MULTFRC sub-connection) data packet over UDP.
    TfrcData(TfrcData),
    /// A TFRC receiver's feedback report over UDP.
    TfrcFeedback(TfrcFeedback),
    /// A VTP data packet over UDP.
    VtpData(VtpData),
    /// A VTP receiver's Achieved Rate report over UDP.
    VtpFeedback(VtpFeedback),
    /// A media-scaling (MM_APP, MPEG_APP) data packet over UDP.
    MediaData(MediaData),
    /// A media-scaling receiver's scale report over UDP.
    MediaFeedback(MediaFeedback),
    /// A SureStream-like player's report over UDP (paper 000).
    StreamReport(StreamReport),
    /// An ATM cell of an ABR virtual circuit, data or resource management (paper 003; see
    /// [`crate::abr`]). Cells exist only in the simulator: the wire format refuses them.
    Cell(crate::abr::CellHeader),
}

/// Flags of a TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TcpFlags {
    /// Connection set-up (ns-2 SYN emulation: packet 0 is a 40-byte SYN).
    pub syn: bool,
    /// The segment is a retransmission (for tracing only; receivers must not rely on it).
    pub retransmit: bool,
    /// The segment carries the last byte of an application record (TCP's PSH; see
    /// [`crate::tcp::SendBuffer`]).
    pub push: bool,
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
    /// Timestamps option (RFC 7323) when the flow uses it, in the sender's wrapping microsecond
    /// clock ([`crate::tcp::options::ts_value`]): data carries its TSval, an ACK the TSecr it
    /// echoes; 0 without timestamps.
    pub ts: u32,
    /// An ACK's SACK blocks (RFC 2018; empty without SACK and on data).
    pub sack: crate::tcp::SackBlocks,
}

/// A UDP datagram header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpDatagram {
    /// Application sequence number, from 0.
    pub seq: u64,
}

/// A TFRC data packet (RFC 5348 §3.2): sequence number, the sender's timestamp and its RTT
/// estimate. MULTFRC numbers its sub-connections with `conn`; ns-2's TFRC also carries the
/// sender's round number (`round_id`, used by its `PreciseLoss_` rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcData {
    /// Sub-connection (0 for plain TFRC; MULTFRC's connection index).
    pub conn: u8,
    /// Sequence number, from 0, one per packet.
    pub seq: u64,
    /// When the sender emitted it (its clock).
    pub timestamp: Instant,
    /// The sender's current RTT estimate (zero before it has one).
    pub rtt: Duration,
    /// The sender's round number: how many RTTs it has counted (ns-2's `round_id`).
    pub round: u32,
}

impl TfrcData {
    /// Bytes the header's fields take after the frame header: seq 4, timestamp 4, RTT 4, conn 1,
    /// round 1 (mod 256), 2 of padding.
    pub const WIRE_LEN: u64 = 16;
}

/// A loss event rate as a real encoding carries it: a 32-bit fraction of one
/// (`u32::MAX` is p = 1), so the simulator sees exactly what a wire would deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd)]
pub struct LossRate(u32);

impl LossRate {
    /// No loss.
    pub const ZERO: Self = Self(0);

    /// `p` clamped to [0, 1] and rounded to the nearest representable value (never to zero
    /// when `p > 0`, so a small loss event rate stays a loss event rate).
    pub fn from_f64(p: f64) -> Self {
        if p.is_nan() || p <= 0.0 {
            return Self(0);
        }
        let v = (p.min(1.0) * f64::from(u32::MAX)).round();
        Self((v as u32).max(1))
    }

    /// The fraction as a real number in [0, 1].
    pub fn value(self) -> f64 {
        f64::from(self.0) / f64::from(u32::MAX)
    }

    /// The raw 32-bit encoding.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// The rate a raw 32-bit encoding stands for (what a decoder reads off the wire).
    pub const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }
}

/// A TFRC feedback report (RFC 5348 §3.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TfrcFeedback {
    /// Sub-connection it reports on (0 for plain TFRC).
    pub conn: u8,
    /// Timestamp of the last data packet received (the sender's clock).
    pub t_recvdata: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// Rate at which data arrived since the last report.
    pub x_recv: Bitrate,
    /// Loss event rate p.
    pub p: LossRate,
}

impl TfrcFeedback {
    /// Bytes the report's fields take after the frame header: conn 1 + 3 of padding, t_recvdata 4,
    /// t_delay 4, X_recv 4, p 4.
    pub const WIRE_LEN: u64 = 20;
}

/// A VTP data packet: sequence number, the sender's timestamp and its RTT estimate (which
/// sets the receiver's sampling period).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VtpData {
    /// Sequence number, from 0, one per packet.
    pub seq: u64,
    /// When the sender emitted it (its clock).
    pub timestamp: Instant,
    /// The sender's current RTT estimate (zero before it has one).
    pub rtt: Duration,
}

impl VtpData {
    /// Bytes of the fields after the frame header: seq 4, timestamp 4, RTT 4.
    pub const WIRE_LEN: u64 = 12;
}

/// A VTP receiver report: the Achieved Rate and what the sampling period saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VtpFeedback {
    /// Timestamp of the last data packet received (the sender's clock).
    pub t_echo: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// The receiver's Achieved Rate (EWMA of the period's receive rates).
    pub achieved_rate: Bitrate,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
    /// Packets found missing during the period.
    pub lost: u32,
    /// Packets received during the period.
    pub received: u32,
}

impl VtpFeedback {
    /// Bytes of the fields after the frame header: t_echo 4, t_delay 4, AR 4, highest seq 4, lost 2,
    /// received 2.
    pub const WIRE_LEN: u64 = 20;
}

/// A media-scaling data packet (MM_APP, MPEG_APP; paper 001): the packet's number, the
/// sender's timestamp and RTT estimate (the receiver's timeout and increase rules need the RTT),
/// the scale it was sent at, and which piece of which frame it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaData {
    /// Sequence number, from 0, one per packet (frames split into packets use one each).
    pub seq: u64,
    /// When the sender emitted it (its clock).
    pub timestamp: Instant,
    /// The sender's smoothed RTT (zero before it has one).
    pub rtt: Duration,
    /// Frame number, from 0, one per frame sent or skipped (MM_APP: one frame per packet).
    pub frame: u64,
    /// This packet's piece of the frame, from 0.
    pub fragment: u16,
    /// Packets the frame was split into (at least 1).
    pub fragments: u16,
    /// The scale the sender was at.
    pub scale: u8,
    /// The frame's picture type (`None` for MM_APP's untyped frames).
    pub kind: Option<FrameType>,
}

impl MediaData {
    /// Bytes of the fields after the frame header: seq 4, timestamp 4, RTT 4, frame 4, fragment 2,
    /// fragments 2, scale 1, frame type 1 (0 for none).
    pub const WIRE_LEN: u64 = 22;
}

/// A media-scaling receiver's report: the scale the sender is to use, numbered so that the
/// sender keeps only the newest, and an echo for the sender's RTT samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaFeedback {
    /// The scale the receiver decided.
    pub scale: u8,
    /// Report number, from 0, one per report.
    pub number: u32,
    /// Timestamp of the newest data packet received (the sender's clock).
    pub t_echo: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
}

impl MediaFeedback {
    /// Bytes of the fields after the frame header: scale 1, 3 reserved, number 4, t_echo 4, t_delay 4,
    /// highest seq 4.
    pub const WIRE_LEN: u64 = 20;
}

/// A SureStream-like player's report (paper 000; `surestream` over UDP): what arrived since the
/// last report, an echo for the server's RTT samples, and how much media the player holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamReport {
    /// Report number, from 0, one per report.
    pub number: u32,
    /// Timestamp of the newest data packet received (the server's clock).
    pub t_echo: Instant,
    /// Time between receiving that packet and sending this report.
    pub t_delay: Duration,
    /// Highest sequence number received so far.
    pub highest_seq: u64,
    /// Data packets received since the last report.
    pub received: u32,
    /// Data packets found missing (sequence gaps) since the last report.
    pub lost: u32,
    /// Payload bytes received since the last report over the time since it.
    pub receive_rate: Bitrate,
    /// Media the player holds ahead of its playout point.
    pub buffered: Duration,
}

impl StreamReport {
    /// Bytes of the fields after the frame header: number 4, t_echo 4, t_delay 4, highest seq 4, received 2,
    /// lost 2, receive rate 4, buffered 4 (times in microseconds, as every time on the wire).
    pub const WIRE_LEN: u64 = 28;
}

impl Header {
    /// The sequence number the packet trace shows: a TCP data packet's number, an ACK's
    /// cumulative acknowledgement, a UDP, TFRC, VTP or media data packet's number, the highest
    /// sequence number a VTP or media report covers, a data cell's PDU number; −1 for a TFRC
    /// report and an RM cell (they name no packet).
    pub fn trace_seq(&self) -> i64 {
        let wide = |s: u64| i64::try_from(s).unwrap_or(i64::MAX);
        match self {
            Self::Tcp(s) if s.is_ack => s.ack,
            Self::Tcp(s) => s.seq,
            Self::Udp(u) => wide(u.seq),
            Self::TfrcData(d) => wide(d.seq),
            Self::TfrcFeedback(_) => -1,
            Self::VtpData(d) => wide(d.seq),
            Self::VtpFeedback(f) => wide(f.highest_seq),
            Self::MediaData(d) => wide(d.seq),
            Self::MediaFeedback(f) => wide(f.highest_seq),
            Self::StreamReport(r) => wide(r.highest_seq),
            Self::Cell(c) => match c.body {
                crate::abr::CellBody::Data { pdu, .. } => wide(pdu),
                crate::abr::CellBody::Rm(_) => -1,
            },
        }
    }
}

impl Packet {
    /// The TCP header, if this is a TCP packet.
    pub fn tcp(&self) -> Option<&TcpSegment> {
        match &self.header {
            Header::Tcp(t) => Some(t),
            _ => None,
        }
    }
}
