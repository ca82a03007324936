//! TCP's header in the simulator: a segment in ns-2's packet-numbered form, and the transport
//! header a capture writes for it (sequence numbers as byte offsets, so that Wireshark's
//! sequence analysis finds the SYN, every data segment and the ACKs consistent; the options its
//! packet's size paid for (`tcp::options`): SACK blocks as the byte ranges of their packets, and
//! timestamps when the size leaves 12 bytes for them).

use crate::header::HeaderKind;
use crate::wire::{MAX_TRANSPORT_HEADER, TransportContext};
use crate::{Header, Packet};

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

impl HeaderKind for TcpSegment {
    const WHAT: &'static str = "TCP";
    const IP_PROTOCOL: u8 = 6;

    /// A data packet's number; an ACK's cumulative acknowledgement.
    fn trace_seq(&self) -> i64 {
        if self.is_ack { self.ack } else { self.seq }
    }

    fn emit_transport(&self, ctx: &TransportContext, out: &mut [u8]) -> usize {
        let t = &mut out[..MAX_TRANSPORT_HEADER];
        t.fill(0);
        t[0..2].copy_from_slice(&ctx.sport.to_be_bytes());
        t[2..4].copy_from_slice(&ctx.dport.to_be_bytes());
        // The SYN takes sequence number 0; data packet n then covers bytes from
        // `byte(n - 1)` and the cumulative ACK of packet a asks for `byte(a)`, with
        // `byte(k) = 1 + k·segment` in TCP's wrapping 32-bit space.
        let byte = |k: i64| (1 + k.wrapping_mul(ctx.segment as i64)) as u32;
        let seq = match (self.is_ack, self.flags.syn) {
            (true, _) | (false, true) => 0,
            (false, false) => byte(self.seq - 1),
        };
        let ack = if self.is_ack { byte(self.ack) } else { 0 };
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[8..12].copy_from_slice(&ack.to_be_bytes());
        t[13] = if self.flags.syn { 0x02 } else { 0x10 };
        t[14..16].copy_from_slice(&65_535u16.to_be_bytes());
        let len = 20 + emit_tcp_options(self, ctx, &byte, &mut t[20..]);
        t[12] = ((len / 4) as u8) << 4;
        len
    }
}

/// Writes the options a TCP segment's size paid for into `out` (at least 40 bytes): timestamps
/// when the bytes beyond the fixed header, the payload and the SACK blocks leave 12 for them,
/// then the SACK blocks as the byte ranges their packets cover. Returns their length.
fn emit_tcp_options(
    seg: &TcpSegment,
    ctx: &TransportContext,
    byte: &dyn Fn(i64) -> u32,
    out: &mut [u8],
) -> usize {
    use crate::tcp::options::{TIMESTAMPS_LEN, sack_len};
    let blocks = seg.sack.len();
    let beyond = ctx
        .ip_len
        .saturating_sub(crate::IP_TCP_HEADER + ctx.payload + sack_len(blocks));
    let mut n = 0;
    if beyond >= TIMESTAMPS_LEN {
        // NOP, NOP, kind 8, length 10, TSval, TSecr (data carries its TSval, an ACK the echo).
        let (val, ecr) = if seg.is_ack { (0, seg.ts) } else { (seg.ts, 0) };
        out[..4].copy_from_slice(&[1, 1, 8, 10]);
        out[4..8].copy_from_slice(&val.to_be_bytes());
        out[8..12].copy_from_slice(&ecr.to_be_bytes());
        n = 12;
    }
    if blocks > 0 {
        out[n..n + 4].copy_from_slice(&[1, 1, 5, 2 + 8 * blocks as u8]);
        n += 4;
        for (start, end) in seg.sack.iter(seg.ack) {
            out[n..n + 4].copy_from_slice(&byte(start - 1).to_be_bytes());
            out[n + 4..n + 8].copy_from_slice(&byte(end - 1).to_be_bytes());
            n += 8;
        }
    }
    n
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
