//! libpcap capture files of a link, with synthesised IPv4/TCP/UDP headers so that Wireshark
//! and tshark can dissect what the simulator carried.
//!
//! Each packet is written at the instant its transmission starts, as a raw IPv4 packet
//! (`LINKTYPE_RAW`, nanosecond timestamps) truncated after the transport header: the
//! original length is the simulated size. Node `i` has the address `10.a.b.c` with
//! `a.b.c = i + 1`; a flow's source port is `10000 + flow` and its destination port `5000 + flow`.
//! Each header writes its own transport header (`fairstream_proto::wire`); this module adds
//! the IPv4 header and the pcap record around it.

use fairstream_core::{Instant, NodeId};
use fairstream_proto::wire::{MAX_TRANSPORT_HEADER, TransportContext};
use fairstream_proto::{Direction, Packet};

const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65_535;

/// A pcap file being written in memory.
#[derive(Debug, Clone)]
pub struct PcapWriter {
    buf: Vec<u8>,
}

impl Default for PcapWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PcapWriter {
    /// A file with its global header.
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&SNAPLEN.to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        Self { buf }
    }

    /// The IPv4 address of node `n`.
    pub fn address(n: NodeId) -> [u8; 4] {
        let v = n.0 + 1;
        [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
    }

    /// Appends `packet` of a flow from `flow_src` to `flow_dst` (addresses follow its direction),
    /// at `now`; `segment` is the flow's TCP data payload per packet (ignored for UDP).
    pub fn write(
        &mut self,
        now: Instant,
        packet: &Packet,
        flow_src: NodeId,
        flow_dst: NodeId,
        segment: u64,
    ) {
        let (src, dst, sport, dport) = match packet.direction {
            Direction::Forward => (
                flow_src,
                flow_dst,
                10_000 + packet.flow.0,
                5_000 + packet.flow.0,
            ),
            Direction::Reverse => (
                flow_dst,
                flow_src,
                5_000 + packet.flow.0,
                10_000 + packet.flow.0,
            ),
        };
        let mut hdr = [0u8; 20 + MAX_TRANSPORT_HEADER];
        let ctx = TransportContext {
            sport: sport as u16,
            dport: dport as u16,
            segment,
            ip_len: packet.size.as_bytes(),
        };
        let transport_len = packet.header.emit_transport(&ctx, &mut hdr[20..]);
        let proto = packet.header.ip_protocol();
        let total = packet.size.as_bytes().min(65_535) as u16;
        let ip = &mut hdr[0..20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip[8] = 64;
        ip[9] = proto;
        ip[12..16].copy_from_slice(&Self::address(src));
        ip[16..20].copy_from_slice(&Self::address(dst));
        let checksum = ipv4_checksum(ip);
        ip[10..12].copy_from_slice(&checksum.to_be_bytes());

        let caplen = (20 + transport_len).min(usize::from(total)) as u32;
        let ns = now.as_nanos();
        self.buf
            .extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        self.buf
            .extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        self.buf.extend_from_slice(&caplen.to_le_bytes());
        self.buf.extend_from_slice(&u32::from(total).to_le_bytes());
        self.buf.extend_from_slice(&hdr[..caplen as usize]);
    }

    /// The file's bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// The RFC 791 header checksum (one's complement of the one's complement sum).
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairstream_core::{DataSize, FlowId};
    use fairstream_proto::{Header, TcpFlags, TcpSegment};

    #[test]
    fn writes_header_and_records() {
        let mut w = PcapWriter::new();
        let p = Packet {
            flow: FlowId(1),
            direction: Direction::Forward,
            size: DataSize::bytes(1040),
            payload: 1000,
            sent_at: Instant::ZERO,
            header: Header::Tcp(TcpSegment {
                seq: 3,
                ack: -1,
                is_ack: false,
                flags: TcpFlags::default(),
            }),
        };
        w.write(
            Instant::from_nanos(1_500_000_000),
            &p,
            NodeId(0),
            NodeId(1),
            1000,
        );
        let ack = Packet {
            direction: Direction::Reverse,
            size: DataSize::bytes(40),
            payload: 0,
            header: Header::Tcp(TcpSegment {
                seq: 3,
                ack: 3,
                is_ack: true,
                flags: TcpFlags::default(),
            }),
            ..p
        };
        w.write(
            Instant::from_nanos(1_600_000_000),
            &ack,
            NodeId(0),
            NodeId(1),
            1000,
        );
        let b = w.into_bytes();
        assert_eq!(b.len(), 24 + 2 * (16 + 40));
        assert_eq!(u32::from_le_bytes(b[0..4].try_into().unwrap()), MAGIC_NANOS);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(b[28..32].try_into().unwrap()),
            500_000_000
        );
        assert_eq!(u32::from_le_bytes(b[36..40].try_into().unwrap()), 1040);
        let ip = &b[40..60];
        assert_eq!(
            ipv4_checksum(ip),
            0,
            "a header with its checksum sums to zero"
        );
        assert_eq!(&ip[12..16], &[10, 0, 0, 1]);
        assert_eq!(
            u32::from_be_bytes(b[64..68].try_into().unwrap()),
            2001,
            "seq of packet 3: after the SYN and packets 1 and 2"
        );
        // The ACK of packet 3 acknowledges up to the end of its 1000 bytes, from b to a.
        let (ip, tcp) = (&b[96..116], &b[116..136]);
        assert_eq!(
            (&ip[12..16], &ip[16..20]),
            (&[10, 0, 0, 2][..], &[10, 0, 0, 1][..])
        );
        assert_eq!(u32::from_be_bytes(tcp[8..12].try_into().unwrap()), 3001);
    }
}
