//! Transport headers for captures: each header type emits its own transport (TCP or UDP)
//! header, so that a capture never matches on protocol headers.
//!
//! The simulator's packets are typed values; for a pcap capture a packet becomes an IPv4 packet
//! whose transport header each [`Header`] writes itself. TCP sequence and acknowledgement numbers
//! become byte offsets built from packet numbers and the flow's payload per packet, so that
//! Wireshark's sequence analysis finds the SYN, every data segment and the ACKs consistent.

use crate::Header;

/// What a header needs from the packet around it to write itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransportContext {
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// The flow's payload per full data packet, bytes (TCP sequence space).
    pub segment: u64,
    /// The packet's size on the wire, IP header included.
    pub ip_len: u64,
}

/// The longest transport header any header type writes.
pub const MAX_TRANSPORT_HEADER: usize = 20;

impl Header {
    /// The IPv4 protocol number of the transport (6 TCP; 17 UDP, which TFRC and VTP run over).
    pub fn ip_protocol(&self) -> u8 {
        match self {
            Self::Tcp(_) => 6,
            _ => 17,
        }
    }

    /// Writes the transport header into the start of `out` (at least
    /// [`MAX_TRANSPORT_HEADER`] bytes) and returns its length.
    pub fn emit_transport(&self, ctx: &TransportContext, out: &mut [u8]) -> usize {
        let t = &mut out[..MAX_TRANSPORT_HEADER];
        t.fill(0);
        t[0..2].copy_from_slice(&ctx.sport.to_be_bytes());
        t[2..4].copy_from_slice(&ctx.dport.to_be_bytes());
        match self {
            Self::Tcp(seg) => {
                // The SYN takes sequence number 0; data packet n then covers bytes from
                // `byte(n - 1)` and the cumulative ACK of packet a asks for `byte(a)`, with
                // `byte(k) = 1 + k·segment` in TCP's wrapping 32-bit space.
                let byte = |k: i64| (1 + k.wrapping_mul(ctx.segment as i64)) as u32;
                let seq = match (seg.is_ack, seg.flags.syn) {
                    (true, _) | (false, true) => 0,
                    (false, false) => byte(seg.seq - 1),
                };
                let ack = if seg.is_ack { byte(seg.ack) } else { 0 };
                t[4..8].copy_from_slice(&seq.to_be_bytes());
                t[8..12].copy_from_slice(&ack.to_be_bytes());
                t[12] = 5 << 4;
                t[13] = if seg.flags.syn { 0x02 } else { 0x10 };
                t[14..16].copy_from_slice(&65_535u16.to_be_bytes());
                20
            }
            _ => {
                let len = ctx.ip_len.saturating_sub(20).min(65_535) as u16;
                t[4..6].copy_from_slice(&len.to_be_bytes());
                8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TcpFlags, TcpSegment, UdpDatagram};

    const CTX: TransportContext = TransportContext {
        sport: 10_001,
        dport: 5_001,
        segment: 1000,
        ip_len: 1040,
    };

    fn tcp(seq: i64, ack: i64, is_ack: bool, syn: bool) -> Header {
        Header::Tcp(TcpSegment {
            seq,
            ack,
            is_ack,
            flags: TcpFlags {
                syn,
                retransmit: false,
                push: false,
            },
        })
    }

    fn emit(h: Header) -> (usize, [u8; MAX_TRANSPORT_HEADER]) {
        let mut out = [0xffu8; MAX_TRANSPORT_HEADER];
        (h.emit_transport(&CTX, &mut out), out)
    }

    #[test]
    fn tcp_numbers_bytes_from_packet_numbers() {
        let (n, t) = emit(tcp(3, -1, false, false));
        assert_eq!((n, tcp(0, 0, false, false).ip_protocol()), (20, 6));
        assert_eq!(t[0..4], [0x27, 0x11, 0x13, 0x89]); // ports 10001, 5001
        assert_eq!(u32::from_be_bytes(t[4..8].try_into().unwrap()), 2001); // 1 + 2 * 1000
        assert_eq!((t[12], t[13]), (0x50, 0x10)); // 5 words, ACK flag
        let (_, syn) = emit(tcp(0, -1, false, true));
        assert_eq!(
            (u32::from_be_bytes(syn[4..8].try_into().unwrap()), syn[13]),
            (0, 0x02)
        );
        let (_, ack) = emit(tcp(5, 5, true, false));
        assert_eq!(u32::from_be_bytes(ack[8..12].try_into().unwrap()), 5001);
    }

    #[test]
    fn udp_length_covers_header_and_payload() {
        let h = Header::Udp(UdpDatagram { seq: 7 });
        let (n, t) = emit(h);
        assert_eq!((n, h.ip_protocol()), (8, 17));
        assert_eq!(u16::from_be_bytes([t[4], t[5]]), 1020);
        assert!(t[8..].iter().all(|&b| b == 0));
    }
}
