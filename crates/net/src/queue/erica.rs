//! An ATM switch output port running ERICA (paper 003; PROTOCOLS.md §7.1): a drop-tail FIFO of
//! cells, the port's [`Erica`] computation, and optionally early or partial packet discard.
//!
//! Every ABR cell offered to the port counts towards its input rate (ERICA's averaging interval
//! ends on time or cells); a forward RM cell records its VC's CCR. The port writes its explicit
//! rate into the *backward* RM cells of the VCs it carries forward: those cells come back over the
//! opposite link, so the driver hands every backward RM cell that arrives at this port's node from
//! its far end to [`EricaPort::on_returning`], which lowers its ER to the port's (never raises it).
//!
//! Packet discard: with *partial* packet discard (PPD), once a cell of a PDU is dropped, the
//! port drops that PDU's remaining cells except its end-of-PDU cell (which keeps the next PDU
//! apart); with *early* packet discard (EPD), a PDU whose first cell finds `threshold` cells or
//! more waiting is dropped whole, and PPD applies to the rest. RM cells are never discarded by
//! policy, only when the FIFO is full. Packets that are not cells pass as in a drop-tail FIFO.

use fairstream_core::{Bitrate, Instant};
use fairstream_proto::abr::{CellBody, Erica, EricaParams, RmCell, RmDirection};
use fairstream_proto::{Header, Packet};
use fairstream_records::{Column, ColumnKind, Declared, SeriesTable, Value};

use super::{Dequeue, DropTail, QueueLimit, QueuedPacket};

/// How a port discards the cells of PDUs it cannot carry whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketDiscard {
    /// Cells are dropped one by one when the FIFO is full.
    #[default]
    None,
    /// Partial packet discard: after one cell of a PDU is dropped, the rest but its last.
    Partial,
    /// Early packet discard: a PDU whose first cell finds `threshold` cells waiting is dropped
    /// whole; partial packet discard otherwise.
    Early {
        /// Cells waiting at which new PDUs are refused.
        threshold: u32,
    },
}

impl PacketDiscard {
    /// The scenario keyword: `none`, `partial` or `early`.
    pub const fn keyword(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Partial => "partial",
            Self::Early { .. } => "early",
        }
    }
}

/// An ERICA port's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaPortConfig {
    /// The FIFO's limit (cells: a limit in packets counts cells).
    pub limit: QueueLimit,
    /// ERICA's parameters.
    pub erica: EricaParams,
    /// Packet discard.
    pub discard: PacketDiscard,
}

/// Where a VC's current PDU stands at this port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum PduState {
    /// The next cell starts a PDU.
    #[default]
    Start,
    /// Cells of the PDU are being carried.
    Carrying,
    /// The PDU lost a cell here: the rest of it but its last cell are dropped.
    Dropping,
    /// The PDU is dropped whole, its last cell included (EPD).
    DroppingWhole,
}

/// A built ERICA port.
#[derive(Clone, Debug)]
pub struct EricaPort {
    fifo: DropTail,
    erica: Erica,
    discard: PacketDiscard,
    /// Per VC, by VC number; grown when a VC first appears, only when a discard policy is on.
    pdus: Vec<PduState>,
}

/// An ERICA port's parameters in the link summary.
pub(super) static COLUMNS: [&Column; 4] = [&TARGET, &INTERVAL, &INTERVAL_CELLS, &DISCARD];
static TARGET: Column = Column::new(
    "erica_target_utilisation",
    ColumnKind::Real,
    "",
    "ERICA port: the target utilisation U of the link's rate",
);
static INTERVAL: Column = Column::new(
    "erica_interval_s",
    ColumnKind::Real,
    "seconds",
    "ERICA port: the longest averaging interval",
);
static INTERVAL_CELLS: Column = Column::new(
    "erica_interval_cells",
    ColumnKind::Count,
    "cells",
    "ERICA port: the cells that end an averaging interval early",
);
static DISCARD: Column = Column::new(
    "erica_discard",
    ColumnKind::Text,
    "",
    "ERICA port: its packet discard (`none`, `partial`, `early`)",
);

/// An ERICA port's state at the end of each interval-series bin (`port_series.parquet`).
pub(super) static PORT_SERIES: SeriesTable = SeriesTable {
    name: "port_series",
    columns: &[&TARGET_BPS, &Z, &FAIR_SHARE, &ACTIVE_VCS, &QUEUE_CELLS],
};
static TARGET_BPS: Column = Column::new(
    "target_bps",
    ColumnKind::Real,
    "bit/s",
    "the target rate U × the link rate",
);
static Z: Column = Column::new(
    "z",
    ColumnKind::Real,
    "",
    "the overload factor of the port's last averaging interval (null before the first)",
);
static FAIR_SHARE: Column = Column::new(
    "fair_share_bps",
    ColumnKind::Real,
    "bit/s",
    "the fair share of the last averaging interval",
);
static ACTIVE_VCS: Column = Column::new(
    "active_vcs",
    ColumnKind::Count,
    "VCs",
    "the VCs that sent a cell in the last averaging interval",
);
static QUEUE_CELLS: Column = Column::new(
    "queue_cells",
    ColumnKind::Count,
    "cells",
    "the cells waiting at the bin's end",
);

impl EricaPortConfig {
    /// The parameters, as the link summary shows them.
    pub(super) fn params(&self) -> Declared {
        vec![
            (&TARGET, Value::Real(self.erica.target_utilisation)),
            (&INTERVAL, Value::Real(self.erica.interval.as_secs_f64())),
            (
                &INTERVAL_CELLS,
                Value::Count(u64::from(self.erica.interval_cells)),
            ),
            (&DISCARD, Value::Text(self.discard.keyword())),
        ]
    }
}

impl EricaPort {
    /// A port of `config` on a link of `capacity` (the ABR capacity).
    pub fn new(config: &EricaPortConfig, capacity: Bitrate) -> Self {
        Self {
            fifo: DropTail::new(config.limit),
            erica: Erica::new(config.erica, capacity, Instant::ZERO),
            discard: config.discard,
            pdus: Vec::new(),
        }
    }

    /// The port's ERICA state (z, fair share, target).
    pub fn erica(&self) -> &Erica {
        &self.erica
    }

    /// The port's row of its interval series ([`PORT_SERIES`]) now.
    pub(super) fn series_row(&self) -> [Value; 5] {
        let e = &self.erica;
        [
            Value::Real(e.target().as_bps_f64()),
            Value::Real(e.z().unwrap_or(f64::NAN)),
            Value::Real(e.fair_share().as_bps_f64()),
            Value::Count(u64::from(e.active_vcs())),
            Value::Count(self.len_packets() as u64),
        ]
    }

    /// Offers a packet.
    pub fn enqueue(
        &mut self,
        now: Instant,
        pkt: QueuedPacket,
        packet: &Packet,
    ) -> Result<(), QueuedPacket> {
        let Header::Cell(cell) = &packet.header else {
            return self.fifo.enqueue(now, pkt);
        };
        self.erica.on_cell(now, cell.vc);
        match cell.body {
            CellBody::Rm(rm) => {
                if rm.dir == RmDirection::Forward {
                    self.erica.on_forward_rm(cell.vc, &rm);
                }
                self.fifo.enqueue(now, pkt)
            }
            CellBody::Data { .. } if self.discard == PacketDiscard::None => {
                self.fifo.enqueue(now, pkt)
            }
            CellBody::Data { end, .. } => self.enqueue_with_discard(now, pkt, cell.vc, end),
        }
    }

    fn enqueue_with_discard(
        &mut self,
        now: Instant,
        pkt: QueuedPacket,
        vc: u32,
        end: bool,
    ) -> Result<(), QueuedPacket> {
        let i = vc as usize;
        if i >= self.pdus.len() {
            self.pdus.resize(i + 1, PduState::Start);
        }
        let waiting = self.fifo.len_packets();
        let mut state = self.pdus[i];
        if state == PduState::Start {
            state = match self.discard {
                PacketDiscard::Early { threshold } if waiting >= threshold as usize => {
                    PduState::DroppingWhole
                }
                _ => PduState::Carrying,
            };
        }
        let result = match state {
            PduState::DroppingWhole => Err(pkt),
            PduState::Dropping if !end => Err(pkt),
            _ => {
                let r = self.fifo.enqueue(now, pkt);
                if r.is_err() && !end {
                    state = PduState::Dropping;
                }
                r
            }
        };
        self.pdus[i] = if end { PduState::Start } else { state };
        result
    }

    /// A backward RM cell of `vc` arrived at this port's node from the port's far end
    /// ([`fairstream_proto::abr::backward_rm`]): it gets the port's explicit rate (if lower than
    /// its own).
    pub fn on_returning(&mut self, vc: u32, rm: &mut RmCell) {
        self.erica.mark(vc, rm);
    }

    /// The next cell to send.
    pub fn dequeue(&mut self, now: Instant) -> Dequeue {
        self.fifo.dequeue(now)
    }

    /// Cells waiting.
    pub fn len_packets(&self) -> usize {
        self.fifo.len_packets()
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
}

#[cfg(test)]
mod tests {
    use fairstream_core::{DataSize, Duration, FlowId};
    use fairstream_proto::Direction;
    use fairstream_proto::abr::{CELL_SIZE, CellHeader, RmCell, backward_rm};

    use super::*;

    fn cell(vc: u32, body: CellBody) -> Packet {
        Packet {
            flow: FlowId(vc / 2),
            direction: Direction::Forward,
            size: CELL_SIZE,
            payload: 0,
            sent_at: Instant::ZERO,
            header: Header::Cell(CellHeader { vc, body }),
        }
    }

    fn data(vc: u32, pdu: u64, end: bool) -> Packet {
        cell(vc, CellBody::Data { pdu, end })
    }

    fn rm(dir: RmDirection, ccr: Bitrate, er: Bitrate) -> RmCell {
        RmCell {
            dir,
            ci: false,
            ni: false,
            er,
            ccr,
            mcr: Bitrate::ZERO,
        }
    }

    fn port(limit: u32, discard: PacketDiscard) -> EricaPort {
        EricaPort::new(
            &EricaPortConfig {
                limit: QueueLimit::Packets(limit),
                erica: EricaParams::default(),
                discard,
            },
            Bitrate::mbps(10),
        )
    }

    /// What the driver does with a packet reaching the port's node from its far end.
    fn returning(p: &mut EricaPort, packet: &mut Packet) {
        if let Some((vc, rm)) = backward_rm(packet) {
            p.on_returning(vc, rm);
        }
    }

    /// Offers `cells` at `now`; returns which were taken.
    fn offer(p: &mut EricaPort, now: Instant, cells: &[Packet]) -> Vec<bool> {
        cells
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let q = QueuedPacket {
                    slot: k as u32,
                    size: 53,
                    enqueued_at: now,
                };
                p.enqueue(now, q, c).is_ok()
            })
            .collect()
    }

    fn pdu(vc: u32, number: u64, cells: usize) -> Vec<Packet> {
        (0..cells)
            .map(|k| data(vc, number, k + 1 == cells))
            .collect()
    }

    #[test]
    fn backward_rm_cells_get_the_ports_rate_and_are_never_raised() {
        let mut p = port(1000, PacketDiscard::None);
        // VC 0's FRM, then a cell every 40 µs (10.6 Mbit/s of cells against a 9 Mbit/s target).
        let frm = rm(RmDirection::Forward, Bitrate::mbps(10), Bitrate::mbps(10));
        offer(&mut p, Instant::ZERO, &[cell(0, CellBody::Rm(frm))]);
        for k in 1..=50 {
            let now = Instant::ZERO + Duration::from_micros(40 * k);
            offer(&mut p, now, &[data(0, 0, false)]);
        }
        let z = p.erica().z().expect("the 1 ms interval ended");
        assert!(z > 1.0, "{z}");
        let mut brm = cell(
            0,
            CellBody::Rm(rm(
                RmDirection::Backward,
                Bitrate::mbps(10),
                Bitrate::mbps(10),
            )),
        );
        returning(&mut p, &mut brm);
        let Header::Cell(CellHeader {
            body: CellBody::Rm(marked),
            ..
        }) = brm.header
        else {
            unreachable!()
        };
        assert!(marked.er <= Bitrate::mbps(9), "{:?}", marked.er);
        // An ER set lower downstream stays.
        let mut low = cell(
            0,
            CellBody::Rm(rm(
                RmDirection::Backward,
                Bitrate::mbps(10),
                Bitrate::kbps(100),
            )),
        );
        returning(&mut p, &mut low);
        let Header::Cell(CellHeader {
            body: CellBody::Rm(kept),
            ..
        }) = low.header
        else {
            unreachable!()
        };
        assert_eq!(kept.er, Bitrate::kbps(100));
        // A forward RM cell coming back this way is not this port's to mark.
        let mut frm = cell(
            0,
            CellBody::Rm(rm(
                RmDirection::Forward,
                Bitrate::mbps(10),
                Bitrate::mbps(10),
            )),
        );
        returning(&mut p, &mut frm);
        assert_eq!(
            frm.header,
            cell(
                0,
                CellBody::Rm(rm(
                    RmDirection::Forward,
                    Bitrate::mbps(10),
                    Bitrate::mbps(10)
                ))
            )
            .header
        );
    }

    #[test]
    fn without_a_policy_a_full_fifo_drops_cells_one_by_one() {
        let mut p = port(4, PacketDiscard::None);
        let took = offer(&mut p, Instant::ZERO, &pdu(0, 0, 6));
        assert_eq!(took, vec![true, true, true, true, false, false]);
    }

    #[test]
    fn partial_discard_drops_the_rest_of_a_broken_pdu_but_its_last_cell() {
        let mut p = port(4, PacketDiscard::Partial);
        // 3 cells of VC 2 fill most of the FIFO; VC 0's 4-cell PDU loses its second cell.
        offer(&mut p, Instant::ZERO, &pdu(2, 0, 3));
        let took = offer(&mut p, Instant::ZERO, &pdu(0, 0, 4));
        assert_eq!(took, vec![true, false, false, false]);
        // Room again: the rest of the broken PDU goes but its last cell is kept.
        let mut p = port(4, PacketDiscard::Partial);
        offer(&mut p, Instant::ZERO, &pdu(2, 0, 3));
        let first = offer(&mut p, Instant::ZERO, &pdu(0, 0, 4)[..2]);
        assert_eq!(first, vec![true, false]);
        p.dequeue(Instant::ZERO);
        p.dequeue(Instant::ZERO);
        let rest = offer(&mut p, Instant::ZERO, &pdu(0, 0, 4)[2..]);
        assert_eq!(rest, vec![false, true]);
        // The next PDU starts clean.
        p.dequeue(Instant::ZERO);
        let next = offer(&mut p, Instant::ZERO, &pdu(0, 1, 2));
        assert_eq!(next, vec![true, true]);
    }

    #[test]
    fn early_discard_refuses_whole_pdus_above_the_threshold() {
        let mut p = port(10, PacketDiscard::Early { threshold: 3 });
        offer(&mut p, Instant::ZERO, &pdu(2, 0, 3));
        // 3 cells wait: VC 0's next PDU is dropped whole, its last cell too.
        assert_eq!(offer(&mut p, Instant::ZERO, &pdu(0, 0, 4)), vec![false; 4]);
        // A PDU already under way when the queue grows is carried on.
        let mut p = port(10, PacketDiscard::Early { threshold: 3 });
        let mut took = offer(&mut p, Instant::ZERO, &pdu(0, 0, 4)[..1]);
        offer(&mut p, Instant::ZERO, &pdu(2, 0, 3));
        took.extend(offer(&mut p, Instant::ZERO, &pdu(0, 0, 4)[1..]));
        assert_eq!(took, vec![true; 4]);
        // RM cells are never refused by policy.
        let frm = cell(
            0,
            CellBody::Rm(rm(
                RmDirection::Forward,
                Bitrate::mbps(1),
                Bitrate::mbps(10),
            )),
        );
        assert_eq!(offer(&mut p, Instant::ZERO, &[frm]), vec![true]);
    }

    #[test]
    fn packets_that_are_not_cells_pass_as_in_a_fifo() {
        let mut p = port(2, PacketDiscard::Early { threshold: 0 });
        let udp = Packet {
            header: Header::Udp(fairstream_proto::cbr::UdpDatagram { seq: 0 }),
            size: DataSize::bytes(1000),
            ..data(0, 0, true)
        };
        assert_eq!(
            offer(&mut p, Instant::ZERO, &[udp, udp, udp]),
            vec![true, true, false]
        );
        assert_eq!(p.erica().z(), None);
    }
}
