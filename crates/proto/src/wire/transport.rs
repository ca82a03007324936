//! Transport headers for captures: each header type emits its own transport header
//! ([`crate::header::HeaderKind::emit_transport`]: TCP's in `crate::tcp`, UDP for the rest, here),
//! so that a capture never matches on protocol headers.
//!
//! The simulator's packets are typed values; for a pcap capture a packet becomes an IPv4 packet
//! whose transport header its [`crate::Header`] writes itself.

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
    /// The application payload it carries, bytes.
    pub payload: u64,
}

/// The longest transport header any header type writes.
pub const MAX_TRANSPORT_HEADER: usize = 60;

/// Writes a UDP header into the start of `out` (at least [`MAX_TRANSPORT_HEADER`] bytes) and
/// returns its length: every header but TCP's rides UDP (the default of
/// [`crate::header::HeaderKind::emit_transport`]).
pub(crate) fn emit_udp(ctx: &TransportContext, out: &mut [u8]) -> usize {
    let t = &mut out[..MAX_TRANSPORT_HEADER];
    t.fill(0);
    t[0..2].copy_from_slice(&ctx.sport.to_be_bytes());
    t[2..4].copy_from_slice(&ctx.dport.to_be_bytes());
    let len = ctx.ip_len.saturating_sub(20).min(65_535) as u16;
    t[4..6].copy_from_slice(&len.to_be_bytes());
    8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Header;
    use crate::cbr::UdpDatagram;
    use crate::tcp::{TcpFlags, TcpSegment};

    const CTX: TransportContext = TransportContext {
        sport: 10_001,
        dport: 5_001,
        segment: 1000,
        ip_len: 1040,
        payload: 1000,
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
            ts: 0,
            sack: crate::tcp::SackBlocks::NONE,
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
    fn tcp_options_are_what_the_size_paid_for() {
        // An ACK of packet 9 with SACK blocks [12, 15) and [20, 21) and timestamps: 40 + 12 + 20.
        let mut sack = crate::tcp::SackBlocks::NONE;
        assert!(sack.push(9, 12, 15) && sack.push(9, 20, 21));
        let h = Header::Tcp(TcpSegment {
            seq: 14,
            ack: 9,
            is_ack: true,
            flags: TcpFlags::default(),
            ts: 777,
            sack,
        });
        let ctx = TransportContext {
            ip_len: 72,
            payload: 0,
            ..CTX
        };
        let mut out = [0xffu8; MAX_TRANSPORT_HEADER];
        let n = h.emit_transport(&ctx, &mut out);
        assert_eq!(n, 20 + 12 + 20);
        assert_eq!(out[12] >> 4, 13, "13 words of header");
        assert_eq!(out[20..24], [1, 1, 8, 10]);
        assert_eq!(
            u32::from_be_bytes(out[28..32].try_into().unwrap()),
            777,
            "TSecr"
        );
        assert_eq!(out[32..36], [1, 1, 5, 18]);
        let word = |i: usize| u32::from_be_bytes(out[i..i + 4].try_into().unwrap());
        // Packets 12..15 cover bytes 1 + 11·1000 up to 1 + 14·1000.
        assert_eq!((word(36), word(40)), (11_001, 14_001));
        assert_eq!((word(44), word(48)), (19_001, 20_001));
        // The same ACK without timestamps (40 + 20 bytes): SACK only.
        let ctx = TransportContext { ip_len: 60, ..ctx };
        assert_eq!(h.emit_transport(&ctx, &mut out), 40);
        assert_eq!(out[20..24], [1, 1, 5, 18]);
        // A data segment with timestamps: 52 bytes of header before 1448 of payload.
        let d = Header::Tcp(TcpSegment {
            ts: 5,
            ..match tcp(3, -1, false, false) {
                Header::Tcp(s) => s,
                _ => unreachable!(),
            }
        });
        let ctx = TransportContext {
            ip_len: 1500,
            payload: 1448,
            ..CTX
        };
        assert_eq!(d.emit_transport(&ctx, &mut out), 32);
        assert_eq!(
            u32::from_be_bytes(out[24..28].try_into().unwrap()),
            5,
            "TSval"
        );
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
