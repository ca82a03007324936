//! Cells, RM cell fields and AAL5 segmentation and reassembly arithmetic.
//!
//! A packet (an AAL5 PDU) of n bytes travels in ⌈(n + 8) / 48⌉ cells: its bytes, an 8-byte
//! trailer (carrying the PDU's length) and padding fill 48-byte cell payloads; the last cell is
//! marked end-of-PDU. Cells of one virtual circuit arrive in order, so the reassembler counts the
//! cells since the last end-of-PDU cell and compares with the count the trailer's length implies:
//! a PDU that lost any cell is discarded whole, and one that lost its end-of-PDU cell takes the
//! next PDU with it (as AAL5's length and CRC checks do).

use fairstream_core::{Bitrate, DataSize, FlowId};

use crate::Direction;
use crate::header::HeaderKind;

/// Bytes of a cell on the wire (5 header, 48 payload).
pub const CELL_SIZE: DataSize = DataSize::bytes(53);
/// Payload bytes of a cell.
pub const CELL_PAYLOAD: u64 = 48;
/// Bytes of the AAL5 trailer at the end of a PDU's last cell.
pub const AAL5_TRAILER: u64 = 8;

/// Cells that carry a PDU of `bytes` (at least one, even for an empty PDU).
pub fn cells_for_pdu(bytes: u64) -> u64 {
    (bytes + AAL5_TRAILER).div_ceil(CELL_PAYLOAD)
}

/// Padding bytes in the last cell of a PDU of `bytes`.
pub fn padding(bytes: u64) -> u64 {
    cells_for_pdu(bytes) * CELL_PAYLOAD - bytes - AAL5_TRAILER
}

/// Which way an RM cell travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmDirection {
    /// From the source towards the destination (FRM).
    Forward,
    /// Turned around by the destination (BRM).
    Backward,
}

/// The fields of a resource-management cell that ABR rate control reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmCell {
    /// DIR.
    pub dir: RmDirection,
    /// Congestion indication: the source decreases.
    pub ci: bool,
    /// No increase: the source may not increase.
    pub ni: bool,
    /// Explicit rate: the most the source may send at; switches only ever lower it.
    pub er: Bitrate,
    /// Current cell rate: the source's ACR when it sent the FRM.
    pub ccr: Bitrate,
    /// The source's minimum cell rate.
    pub mcr: Bitrate,
}

/// The header of a cell in the simulator ([`crate::Header::Cell`]): its virtual circuit and what
/// it carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellHeader {
    /// The virtual circuit ([`vc_id`]): each direction of a flow carried on ABR is one.
    pub vc: u32,
    /// Data or resource management.
    pub body: CellBody,
}

/// What a cell carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CellBody {
    /// A data cell of the VC's PDU number `pdu` (from 0); `end` is AAL5's end-of-PDU mark (the
    /// PTI bit), set on the PDU's last cell.
    Data {
        /// The PDU's number on its VC.
        pdu: u64,
        /// Whether this is the PDU's last cell.
        end: bool,
    },
    /// A resource-management cell.
    Rm(RmCell),
}

impl HeaderKind for CellHeader {
    const WHAT: &'static str = "ATM cell";

    /// A data cell's PDU number; an RM cell names no packet.
    fn trace_seq(&self) -> i64 {
        match self.body {
            CellBody::Data { pdu, .. } => crate::header::trace_number(pdu),
            CellBody::Rm(_) => -1,
        }
    }
}

/// A backward RM cell's virtual circuit and RM fields (to be marked by the switch ports it
/// passes on its way back); `None` for any other packet.
pub fn backward_rm(packet: &mut crate::Packet) -> Option<(u32, &mut RmCell)> {
    match &mut packet.header {
        crate::Header::Cell(CellHeader {
            vc,
            body: CellBody::Rm(rm),
        }) if rm.dir == RmDirection::Backward => Some((*vc, rm)),
        _ => None,
    }
}

/// The number of the virtual circuit that carries `flow`'s packets travelling `direction`:
/// `2 · flow` for the data, `2 · flow + 1` for what the receiver sends back.
pub fn vc_id(flow: FlowId, direction: Direction) -> u32 {
    2 * flow.0 + u32::from(direction == Direction::Reverse)
}

/// Reassembly of one virtual circuit's PDUs from its cells, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reassembler {
    cells: u64,
    delivered: u64,
    discarded: u64,
}

impl Reassembler {
    /// A data cell that does not end its PDU arrived.
    pub fn on_cell(&mut self) {
        self.cells += 1;
    }

    /// The end-of-PDU cell of a PDU whose trailer says `bytes` arrived: whether the PDU is whole
    /// (every one of its cells arrived) and may be delivered.
    pub fn on_end_of_pdu(&mut self, bytes: u64) -> bool {
        let whole = self.cells + 1 == cells_for_pdu(bytes);
        self.cells = 0;
        if whole {
            self.delivered += 1;
        } else {
            self.discarded += 1;
        }
        whole
    }

    /// An end-of-PDU cell arrived for a PDU whose length is unknown (nothing was sent under its
    /// number): the cells gathered since the last end-of-PDU are discarded as one broken PDU.
    pub fn discard_pending(&mut self) {
        self.cells = 0;
        self.discarded += 1;
    }

    /// PDUs delivered whole.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// PDUs discarded for a missing cell.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_backward_rm_cell_is_handed_to_the_ports_it_returns_through() {
        let packet = |header| crate::Packet {
            flow: FlowId(3),
            direction: Direction::Reverse,
            size: CELL_SIZE,
            payload: 0,
            sent_at: fairstream_core::Instant::ZERO,
            header,
        };
        let rm = |dir| RmCell {
            dir,
            ci: false,
            ni: false,
            er: Bitrate::mbps(10),
            ccr: Bitrate::mbps(5),
            mcr: Bitrate::ZERO,
        };
        let cell = |body| crate::Header::Cell(CellHeader { vc: 7, body });
        let mut brm = packet(cell(CellBody::Rm(rm(RmDirection::Backward))));
        let (vc, marked) = backward_rm(&mut brm).expect("a backward RM cell");
        assert_eq!(vc, 7);
        marked.er = Bitrate::mbps(1);
        let crate::Header::Cell(CellHeader {
            body: CellBody::Rm(written),
            ..
        }) = brm.header
        else {
            unreachable!()
        };
        assert_eq!(written.er, Bitrate::mbps(1), "marked in the packet itself");
        let mut others = [
            packet(cell(CellBody::Rm(rm(RmDirection::Forward)))),
            packet(cell(CellBody::Data { pdu: 1, end: true })),
            packet(crate::Header::Udp(crate::cbr::UdpDatagram { seq: 1 })),
        ];
        for p in &mut others {
            assert!(backward_rm(p).is_none(), "{:?}", p.header);
        }
    }

    #[test]
    fn a_pdu_takes_its_bytes_and_trailer_in_whole_cells() {
        assert_eq!(cells_for_pdu(0), 1);
        assert_eq!(cells_for_pdu(1), 1);
        assert_eq!(cells_for_pdu(40), 1);
        assert_eq!(cells_for_pdu(41), 2);
        assert_eq!(cells_for_pdu(1500), 32); // 1508 / 48 = 31.4
        assert_eq!(padding(1500), 32 * 48 - 1508);
        for n in 1..5000 {
            let c = cells_for_pdu(n);
            // Enough room, and one cell fewer would not do.
            assert!(c * CELL_PAYLOAD >= n + AAL5_TRAILER, "{n}");
            assert!((c - 1) * CELL_PAYLOAD < n + AAL5_TRAILER, "{n}");
            assert_eq!(c * CELL_PAYLOAD, n + AAL5_TRAILER + padding(n), "{n}");
            assert!(padding(n) < CELL_PAYLOAD);
        }
    }

    /// Sends `sizes` through a reassembler, dropping the cells whose global index is in `lost`;
    /// returns which PDUs were delivered.
    fn carry(sizes: &[u64], lost: &[u64]) -> Vec<bool> {
        let mut r = Reassembler::default();
        let mut index = 0;
        let mut out = Vec::new();
        for &n in sizes {
            let cells = cells_for_pdu(n);
            for k in 0..cells {
                let dropped = lost.contains(&index);
                index += 1;
                if dropped {
                    continue;
                }
                if k + 1 == cells {
                    out.push(r.on_end_of_pdu(n));
                } else {
                    r.on_cell();
                }
            }
        }
        out
    }

    #[test]
    fn every_pdu_arrives_whole_without_loss() {
        let sizes: Vec<u64> = (1..3000).step_by(7).collect();
        assert!(carry(&sizes, &[]).iter().all(|&d| d));
    }

    #[test]
    fn one_lost_cell_loses_exactly_its_packet() {
        // 1500 B (32 cells), 40 B (1 cell), 100 B (3 cells), 1500 B.
        let sizes = [1500, 40, 100, 1500];
        // A middle cell of the first PDU.
        assert_eq!(carry(&sizes, &[5]), vec![false, true, true, true]);
        // The one cell of the second PDU: nothing of it arrives, nothing else is lost.
        assert_eq!(carry(&sizes, &[32]), vec![true, true, true]);
        // The first cell of the third PDU.
        assert_eq!(carry(&sizes, &[33]), vec![true, true, false, true]);
        // The end-of-PDU cell of the first: its cells run into the next PDU, which is lost too.
        assert_eq!(carry(&sizes, &[31]), vec![false, true, true]);
    }
}
