//! libpcap capture files of a link, with synthesised IPv4/TCP/UDP headers so that Wireshark
//! and tshark can dissect what the simulator carried, written as the run goes (the `pcap-file`
//! crate) rather than held in memory.
//!
//! Each packet is written at the instant its transmission starts, as a raw IPv4 packet
//! (`LINKTYPE_RAW`, nanosecond timestamps) truncated after the transport header: the
//! original length is the simulated size. Node `i` has the address `10.a.b.c` with
//! `a.b.c = i + 1`; a flow's source port is `10000 + flow` and its destination port `5000 + flow`.
//! Each header writes its own transport header (`fairstream_proto::wire`); this module adds
//! the IPv4 header and the pcap record around it.
//!
//! A capture goes to a hidden file in a directory chosen when the run is built (beside the
//! results' target, so that handing it over is a link, not a copy); the `CaptureFile` the run
//! returns removes it when dropped, so a run that is never written leaves nothing behind.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use fairstream_core::{Instant, NodeId};
use fairstream_proto::wire::{MAX_TRANSPORT_HEADER, TransportContext};
use fairstream_proto::{Direction, Packet};
use fairstream_records::CaptureFile;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};

const SNAPLEN: u32 = 65_535;

/// A capture being written.
#[derive(Debug)]
pub struct PcapCapture {
    writer: Option<PcapWriter<BufWriter<File>>>,
    file: CaptureFile,
    /// The first failure to write, after which the capture stops.
    error: Option<String>,
}

/// Numbers the captures of this process, so that their files never collide.
static NEXT: AtomicU64 = AtomicU64::new(0);

impl PcapCapture {
    /// A capture in a new hidden file of `dir` (made, with its parents, when missing: a caller
    /// may name a directory of its own that only a captured run needs), its global header
    /// written.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            ".fairstream-capture-{}-{n}.pcap",
            std::process::id()
        ));
        let file = CaptureFile::new(path);
        let out = BufWriter::new(File::create(file.path())?);
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let writer = PcapWriter::with_header(out, header).map_err(std::io::Error::other)?;
        Ok(Self {
            writer: Some(writer),
            file,
            error: None,
        })
    }

    /// The IPv4 address of node `n`.
    pub fn address(n: NodeId) -> [u8; 4] {
        let v = n.0 + 1;
        [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
    }

    /// Writes `packet` of a flow from `flow_src` to `flow_dst` (addresses follow its direction),
    /// at `now`; `segment` is the flow's TCP data payload per packet (ignored for UDP).
    pub fn write(
        &mut self,
        now: Instant,
        packet: &Packet,
        flow_src: NodeId,
        flow_dst: NodeId,
        segment: u64,
    ) {
        let Some(writer) = self.writer.as_mut() else {
            return;
        };
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
            payload: u64::from(packet.payload),
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

        let caplen = (20 + transport_len).min(usize::from(total));
        let at = std::time::Duration::from_nanos(now.as_nanos());
        let record = PcapPacket::new(at, u32::from(total), &hdr[..caplen]);
        if let Err(e) = writer.write_packet(&record) {
            self.error = Some(e.to_string());
            self.writer = None;
        }
    }

    /// Flushes and closes the capture: its file, or why it could not be written.
    pub fn finish(mut self) -> Result<CaptureFile, String> {
        if let Some(writer) = self.writer.take() {
            let flushed = writer.into_writer().into_inner().map_err(|e| e.to_string());
            if let Err(e) = flushed.and_then(|f| f.sync_data().map_err(|e| e.to_string())) {
                self.error.get_or_insert(e);
            }
        }
        match self.error.take() {
            Some(e) => Err(format!("{}: {e}", self.file.path().display())),
            None => Ok(self.file),
        }
    }

    /// Where it is being written.
    pub fn path(&self) -> &Path {
        self.file.path()
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
    use fairstream_proto::Header;
    use fairstream_proto::tcp::{TcpFlags, TcpSegment};

    const MAGIC_NANOS: u32 = 0xa1b2_3c4d;

    #[test]
    fn writes_header_and_records_and_removes_an_unkept_file() {
        let mut w = PcapCapture::create(&std::env::temp_dir()).unwrap();
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
                ts: 0,
                sack: fairstream_proto::tcp::SackBlocks::NONE,
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
                ts: 0,
                sack: fairstream_proto::tcp::SackBlocks::NONE,
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
        let file = w.finish().unwrap();
        let b = std::fs::read(file.path()).unwrap();
        assert_eq!(b.len(), 24 + 2 * (16 + 40));
        assert_eq!(u32::from_le_bytes(b[0..4].try_into().unwrap()), MAGIC_NANOS);
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 101);
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
        let path = file.path().to_path_buf();
        drop(file);
        assert!(!path.exists(), "a capture nobody kept is removed");
    }

    #[test]
    fn a_capture_makes_the_directory_it_is_given() {
        let dir = std::env::temp_dir().join(format!(
            "fairstream-capture-test-{}/a/b",
            std::process::id()
        ));
        let capture = PcapCapture::create(&dir).unwrap();
        assert!(capture.file.path().starts_with(&dir) && capture.file.path().is_file());
        drop(capture);
        std::fs::remove_dir_all(dir.parent().and_then(Path::parent).unwrap()).unwrap();
    }
}
