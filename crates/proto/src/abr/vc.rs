//! A flow carried on ATM ABR virtual circuits (`transport = "abr"`): each end of the flow wraps
//! the flow's own endpoint (a TCP sender, a CBR source, their receivers, …), which stays as it
//! is, in an [`AbrVc`].
//!
//! An [`AbrVc`] is the end system of two virtual circuits: the one it sends on and the one the
//! far end sends on. Going out, each packet the wrapped endpoint emits is an AAL5 PDU: it waits in
//! the VC's source buffer (a PDU that does not fit is discarded at the source) and leaves as
//! ⌈(size + 8) / 48⌉ 53-byte cells, one per cell slot of the [`AbrSource`] at its allowed cell rate,
//! the source's forward RM cells taking their own slots. Coming in, data cells go to a
//! [`Reassembler`] (a PDU that lost any cell is discarded whole), forward RM cells are turned
//! around at once as backward RM cells (out of rate), and backward RM cells set the source's rate.
//!
//! Cells in the simulator carry no bytes: the packet a PDU stands for (its header, size and
//! payload) rides in a [`PduStore`] that the two ends of the VC share, put there when the PDU's
//! last cell leaves and taken out when that cell arrives. Whether the PDU is delivered is decided
//! by the cells alone, as AAL5's length and CRC checks do (see [`super::aal5`] for the same on
//! bytes).

use crate::abr::metrics::{ACR, EXPLICIT_RATE, SOURCE_DISCARDS};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use fairstream_core::{DataSize, FlowId, Instant};

use super::cell::{
    CELL_SIZE, CellBody, CellHeader, Reassembler, RmDirection, cells_for_pdu, vc_id,
};
use super::source::{AbrParams, AbrSource, CellKind, turn_around};
use crate::protocols::{
    AnyEndpoint, DataPacket, FlowCtx, FlowDemand, FlowProtocol, ProtocolConfig,
};
use crate::{Direction, Endpoint, EndpointStats, Header, MetricKind, MetricSink, Packet};

/// A flow whose packets ride ABR virtual circuits, one per direction.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrFlowConfig {
    /// The flow's own protocol, whose endpoints the VCs carry.
    pub inner: Box<ProtocolConfig>,
    /// The ABR parameters of both VCs.
    pub params: AbrParams,
    /// Bytes of PDUs a VC's source buffer holds (default 64 KB, *chosen*).
    pub source_buffer: DataSize,
}

impl AbrFlowConfig {
    /// The default source buffer.
    pub const DEFAULT_SOURCE_BUFFER: DataSize = DataSize::bytes(64 * 1024);

    /// `inner` carried on VCs with `params` and the default source buffer.
    pub fn new(inner: ProtocolConfig, params: AbrParams) -> Self {
        Self {
            inner: Box::new(inner),
            params,
            source_buffer: Self::DEFAULT_SOURCE_BUFFER,
        }
    }
}

impl FlowProtocol for AbrFlowConfig {
    const NAME: &'static str = "abr";
    const RNG_STREAM: &'static str = "abr";
    const METRICS: &'static [&'static MetricKind] = super::metrics::METRICS;

    /// The carried protocol's name: a TCP flow on ABR is a TCP flow.
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    /// The carried protocol's stream: carrying it on ABR draws nothing.
    fn rng_stream(&self) -> &'static str {
        self.inner.rng_stream()
    }

    fn endpoints(&self, ctx: &FlowCtx) -> (AnyEndpoint, AnyEndpoint) {
        let (sender, receiver) = self.inner.endpoints(ctx);
        let flow = ctx.id;
        let forward = PduStore::default();
        let back = PduStore::default();
        let end = |inner, out, outbox, inbox| {
            Box::new(AbrVc::new(
                inner,
                flow,
                out,
                self.params,
                self.source_buffer,
                outbox,
                inbox,
            ))
        };
        (
            AnyEndpoint::AbrSource(end(
                sender,
                Direction::Forward,
                forward.clone(),
                back.clone(),
            )),
            AnyEndpoint::AbrDestination(end(receiver, Direction::Reverse, back, forward)),
        )
    }

    /// Always: backward RM cells need the way back, even for a UDP flow.
    fn sends_feedback(&self) -> bool {
        true
    }

    fn segment_payload(&self) -> u64 {
        self.inner.segment_payload()
    }

    /// The carried protocol's packet: each is one PDU of cells.
    fn data_packet(&self) -> DataPacket {
        self.inner.data_packet()
    }

    fn demand(&self) -> FlowDemand {
        let inner = self.inner.demand();
        let cells_per_packet = cells_for_pdu(inner.packet_size.as_bytes()) as f64;
        FlowDemand {
            packet_size: CELL_SIZE,
            // Cells at most at PCR, whatever the carried source offers.
            fixed_rate: inner.fixed_rate.map(|r| r.min(self.params.pcr)),
            initial_rate: Some(self.params.icr),
            window: inner
                .window
                .map(|w| w * cells_for_pdu(inner.packet_size.as_bytes())),
            state_bytes: inner.state_bytes + 2 * size_of::<AbrVc>(),
            bytes_per_packet_in_flight: inner.bytes_per_packet_in_flight
                + 2 * size_of::<(u64, Packet)>(),
            metrics_per_packet: inner.metrics_per_packet / cells_per_packet
                + 2.0 / f64::from(self.params.nrm),
            idle_interval: inner.idle_interval.min(self.params.trm),
            loss_limited: inner.loss_limited,
        }
    }
}

/// The packets of one VC's PDUs in flight, from the end that sends them to the end that
/// reassembles them, in PDU order (cells of a VC never overtake one another).
#[derive(Clone, Debug, Default)]
pub struct PduStore(Arc<Mutex<VecDeque<(u64, Packet)>>>);

impl PduStore {
    fn put(&self, pdu: u64, packet: Packet) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back((pdu, packet));
    }

    /// Takes PDU `pdu` out, dropping the older ones (their last cells were lost).
    fn take(&self, pdu: u64) -> Option<Packet> {
        let mut q = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(&(n, packet)) = q.front() {
            if n > pdu {
                return None;
            }
            q.pop_front();
            if n == pdu {
                return Some(packet);
            }
        }
        None
    }

    /// PDUs in flight.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no PDU is in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A PDU waiting in the source buffer, and how many of its cells have left.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    number: u64,
    packet: Packet,
    cells: u64,
    sent: u64,
}

/// One end of a flow carried on ABR: the wrapped endpoint, the ABR source of the VC it sends on,
/// and the reassembly and RM turn-around of the VC it receives on.
#[derive(Clone, Debug)]
pub struct AbrVc {
    inner: AnyEndpoint,
    flow: FlowId,
    out: Direction,
    vc: u32,
    source: AbrSource,
    buffer: VecDeque<Waiting>,
    buffered: u64,
    buffer_limit: u64,
    next_pdu: u64,
    next_cell_at: Instant,
    outbox: PduStore,
    inbox: PduStore,
    reassembler: Reassembler,
    turned: VecDeque<(u32, super::cell::RmCell)>,
    discards: u64,
    discards_recorded: u64,
    acr_recorded: Option<fairstream_core::Bitrate>,
    /// Whether the wrapped endpoint has been drained once. From then on every call that can
    /// change it is followed by a drain (`pull`), which also notes its deadline: it changes only
    /// when this end calls it, so neither is asked again for every cell.
    drained: bool,
    inner_timeout: Option<Instant>,
}

impl AbrVc {
    /// Wraps `inner`, the end of `flow` that sends `out`, with a source of `params` and a buffer
    /// of `buffer`; PDUs it sends go through `outbox`, those it receives come through `inbox`.
    pub fn new(
        inner: AnyEndpoint,
        flow: FlowId,
        out: Direction,
        params: AbrParams,
        buffer: DataSize,
        outbox: PduStore,
        inbox: PduStore,
    ) -> Self {
        Self {
            inner_timeout: inner.poll_timeout(),
            inner,
            flow,
            out,
            vc: vc_id(flow, out),
            source: AbrSource::new(params),
            buffer: VecDeque::new(),
            buffered: 0,
            buffer_limit: buffer.as_bytes(),
            next_pdu: 0,
            next_cell_at: Instant::ZERO,
            outbox,
            inbox,
            reassembler: Reassembler::default(),
            turned: VecDeque::new(),
            discards: 0,
            discards_recorded: 0,
            acr_recorded: None,
            drained: false,
        }
    }

    /// The wrapped endpoint.
    pub fn inner(&self) -> &AnyEndpoint {
        &self.inner
    }

    /// The ABR source of the VC this end sends on.
    pub fn source(&self) -> &AbrSource {
        &self.source
    }

    /// PDUs discarded at the source for want of buffer space.
    pub fn source_discards(&self) -> u64 {
        self.discards
    }

    /// PDUs received whole and PDUs discarded for a lost cell.
    pub fn reassembled(&self) -> (u64, u64) {
        (self.reassembler.delivered(), self.reassembler.discarded())
    }

    /// Moves what the wrapped endpoint wants to send into the source buffer, and notes its
    /// deadline.
    fn pull(&mut self, now: Instant) {
        self.drained = true;
        while let Some(packet) = self.inner.poll_transmit(now) {
            let size = packet.size.as_bytes();
            if self.buffered + size > self.buffer_limit {
                self.discards += 1;
                continue;
            }
            if self.buffer.is_empty() {
                // An idle source earns no credit for the time it had nothing to send.
                self.next_cell_at = self.next_cell_at.max(now);
            }
            self.buffer.push_back(Waiting {
                number: self.next_pdu,
                packet,
                cells: cells_for_pdu(size),
                sent: 0,
            });
            self.next_pdu += 1;
            self.buffered += size;
        }
        self.inner_timeout = self.inner.poll_timeout();
    }

    fn record(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        if self.discards != self.discards_recorded {
            self.discards_recorded = self.discards;
            metrics.record(now, SOURCE_DISCARDS.count(self.discards));
        }
        let acr = self.source.acr();
        if self.acr_recorded != Some(acr) {
            self.acr_recorded = Some(acr);
            metrics.record(now, ACR.bps(acr));
        }
    }

    fn cell(&self, now: Instant, vc: u32, direction: Direction, body: CellBody) -> Packet {
        Packet {
            flow: self.flow,
            direction,
            size: CELL_SIZE,
            payload: 0,
            sent_at: now,
            header: Header::Cell(CellHeader { vc, body }),
        }
    }

    /// The next cell of the source's stream at `now`: an FRM or the head PDU's next cell.
    fn next_cell(&mut self, now: Instant) -> Packet {
        let interval = self.source.cell_interval();
        // Keep the schedule unless it fell more than a cell behind (then restart from now).
        self.next_cell_at = if now.saturating_since(self.next_cell_at) > interval {
            now + interval
        } else {
            self.next_cell_at + interval
        };
        match self.source.next_cell(now) {
            CellKind::Rm(rm) => self.cell(now, self.vc, self.out, CellBody::Rm(rm)),
            CellKind::Data => {
                let head = self
                    .buffer
                    .front_mut()
                    .expect("cells are sent only with a PDU");
                head.sent += 1;
                let end = head.sent == head.cells;
                let (number, packet) = (head.number, head.packet);
                if end {
                    self.buffer.pop_front();
                    self.buffered -= packet.size.as_bytes();
                    self.outbox.put(number, packet);
                }
                self.cell(now, self.vc, self.out, CellBody::Data { pdu: number, end })
            }
        }
    }

    /// Takes an arriving cell; returns whether it called the wrapped endpoint (with the PDU it
    /// ended).
    fn on_cell(&mut self, now: Instant, cell: &CellHeader, metrics: &mut dyn MetricSink) -> bool {
        match cell.body {
            CellBody::Rm(rm) if rm.dir == RmDirection::Forward => {
                // The far end's FRM: back it goes, on the far end's VC, the way it came from.
                self.turned.push_back((cell.vc, turn_around(rm, false)));
                false
            }
            CellBody::Rm(rm) => {
                self.source.on_brm(&rm);
                metrics.record(now, EXPLICIT_RATE.bps(rm.er));
                false
            }
            CellBody::Data { end: false, .. } => {
                self.reassembler.on_cell();
                false
            }
            CellBody::Data { pdu, end: true } => {
                let Some(packet) = self.inbox.take(pdu) else {
                    // Never sent as such: its cells make a broken PDU.
                    self.reassembler.discard_pending();
                    return false;
                };
                let whole = self.reassembler.on_end_of_pdu(packet.size.as_bytes());
                if whole {
                    self.inner.handle_packet(now, &packet, metrics);
                }
                whole
            }
        }
    }
}

impl Endpoint for AbrVc {
    fn handle_packet(&mut self, now: Instant, packet: &Packet, metrics: &mut dyn MetricSink) {
        // Only a cell that ends a PDU delivered whole calls the wrapped endpoint, and only then
        // is it drained again.
        if let Header::Cell(cell) = &packet.header
            && self.on_cell(now, cell, metrics)
        {
            self.pull(now);
        }
        self.record(now, metrics);
    }

    fn handle_timeout(&mut self, now: Instant, metrics: &mut dyn MetricSink) {
        // Most timeouts are the source's cell slots, which leave the wrapped endpoint as it was:
        // it is called, and drained, only when its own deadline is due (as a driver would call
        // it on its own).
        if self.inner_timeout.is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now, metrics);
            self.pull(now);
        }
        self.record(now, metrics);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        // The wrapped endpoint was drained at the end of the last call that could change it;
        // only a driver's first call asks it here.
        if !self.drained {
            self.pull(now);
        }
        if let Some((vc, brm)) = self.turned.pop_front() {
            return Some(self.cell(now, vc, self.out, CellBody::Rm(brm)));
        }
        if self.buffer.is_empty() || now < self.next_cell_at {
            return None;
        }
        Some(self.next_cell(now))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let cell = (!self.buffer.is_empty()).then_some(self.next_cell_at);
        match (self.inner_timeout, cell) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn stats(&self) -> EndpointStats {
        self.inner.stats()
    }
}

#[cfg(test)]
mod tests {
    use fairstream_core::{Bitrate, Duration};

    use super::*;
    use crate::NullSink;
    use crate::cbr::CbrConfig;

    /// A CBR flow of `packet` bytes at `rate` carried on ABR with `params`.
    fn flow(rate: Bitrate, packet: u64, params: AbrParams) -> (AnyEndpoint, AnyEndpoint) {
        let cbr = CbrConfig {
            rate: rate.into(),
            packet_size: DataSize::bytes(packet),
            ..CbrConfig::default()
        };
        AbrFlowConfig::new(ProtocolConfig::Cbr(cbr), params).endpoints(&FlowCtx::new(
            FlowId(3),
            Instant::ZERO,
            None,
            fairstream_core::RngStream::derive(1, "test", 0),
        ))
    }

    fn vc(e: &AnyEndpoint) -> &AbrVc {
        match e {
            AnyEndpoint::AbrSource(v) | AnyEndpoint::AbrDestination(v) => v,
            _ => unreachable!(),
        }
    }

    /// Runs the sender alone until `end`: every cell it emits, with its time.
    fn cells_until(sender: &mut AnyEndpoint, end: Instant) -> Vec<(Instant, Packet)> {
        let mut out = Vec::new();
        let mut now = Instant::ZERO;
        while now <= end {
            sender.handle_timeout(now, &mut NullSink);
            while let Some(p) = sender.poll_transmit(now) {
                out.push((now, p));
            }
            match sender.poll_timeout() {
                Some(t) if t > now => now = t,
                Some(_) => now += Duration::from_nanos(1),
                None => break,
            }
        }
        out
    }

    fn body(p: &Packet) -> CellBody {
        match p.header {
            Header::Cell(c) => c.body,
            _ => panic!("not a cell: {p:?}"),
        }
    }

    #[test]
    fn packets_leave_as_whole_pdus_of_cells_at_acr_with_an_frm_first_and_every_nrm() {
        let params = AbrParams {
            pcr: Bitrate::mbps(10),
            icr: Bitrate::mbps(1),
            ..AbrParams::default()
        };
        // 1000-byte packets at 100 kbit/s: each is 21 cells (1008 / 48).
        let (mut s, _) = flow(Bitrate::kbps(100), 1000, params);
        let cells = cells_until(&mut s, Instant::ZERO + Duration::from_millis(400));
        assert!(matches!(body(&cells[0].1), CellBody::Rm(rm) if rm.dir == RmDirection::Forward));
        // Cells leave one cell time apart at ACR = ICR while the buffer holds a PDU.
        let gap = Bitrate::mbps(1).transmit_time(CELL_SIZE);
        assert_eq!(cells[1].0 - cells[0].0, gap);
        let mut data_since_frm = 0;
        let mut per_pdu = std::collections::BTreeMap::<u64, (u64, bool)>::new();
        for (_, c) in &cells {
            assert_eq!(c.size, CELL_SIZE);
            assert_eq!(c.direction, Direction::Forward);
            match body(c) {
                CellBody::Rm(_) => {
                    assert!(data_since_frm <= 31, "{data_since_frm} cells between FRMs");
                    data_since_frm = 0;
                }
                CellBody::Data { pdu, end } => {
                    data_since_frm += 1;
                    let e = per_pdu.entry(pdu).or_default();
                    assert!(!e.1, "a cell after PDU {pdu}'s last");
                    *e = (e.0 + 1, end);
                }
            }
        }
        // Every PDU that ended had exactly its 21 cells, in order.
        let ended: Vec<_> = per_pdu.values().filter(|(_, end)| *end).collect();
        assert!(ended.len() >= 4, "{per_pdu:?}");
        assert!(ended.iter().all(|(n, _)| *n == cells_for_pdu(1000)));
    }

    #[test]
    fn one_lost_cell_loses_exactly_its_packet_and_the_destination_turns_rm_cells_around() {
        let params = AbrParams {
            icr: Bitrate::mbps(10),
            ..AbrParams::default()
        };
        let (mut s, mut r) = flow(Bitrate::mbps(1), 500, params);
        let cells = cells_until(&mut s, Instant::ZERO + Duration::from_millis(100));
        // Lose the third data cell of PDU 2 (500 B: 11 cells).
        let mut seen = 0;
        let lost = cells
            .iter()
            .position(|(_, c)| {
                matches!(body(c), CellBody::Data { pdu: 2, .. }) && {
                    seen += 1;
                    seen == 3
                }
            })
            .unwrap();
        let mut brms = 0;
        for (i, (t, c)) in cells.iter().enumerate() {
            if i == lost {
                continue;
            }
            r.handle_packet(*t, c, &mut NullSink);
            while let Some(back) = r.poll_transmit(*t) {
                let CellBody::Rm(rm) = body(&back) else {
                    panic!("the receiver sends only turned-around RM cells: {back:?}");
                };
                assert_eq!(rm.dir, RmDirection::Backward);
                assert_eq!(back.direction, Direction::Reverse);
                brms += 1;
            }
        }
        let frms = cells
            .iter()
            .filter(|(_, c)| matches!(body(c), CellBody::Rm(_)))
            .count();
        assert_eq!(brms, frms);
        let ended = cells
            .iter()
            .filter(|(_, c)| matches!(body(c), CellBody::Data { end: true, .. }))
            .count() as u64;
        let (delivered, discarded) = vc(&r).reassembled();
        assert_eq!((delivered, discarded), (ended - 1, 1));
        assert_eq!(vc(&r).inner().stats().packets_received, ended - 1);
    }

    #[test]
    fn a_full_source_buffer_discards_whole_packets_and_brms_set_acr() {
        let params = AbrParams {
            pcr: Bitrate::mbps(10),
            icr: Bitrate::kbps(56),
            mcr: Bitrate::kbps(56),
            ..AbrParams::default()
        };
        // 2 Mbit/s of packets into a VC at 56 kbit/s: the 64 KB buffer fills, then discards.
        let (mut s, _) = flow(Bitrate::mbps(2), 1500, params);
        cells_until(&mut s, Instant::ZERO + Duration::from_secs(1));
        let v = vc(&s);
        assert!(v.buffered <= v.buffer_limit);
        assert!(v.buffer_limit - v.buffered < 1500, "the buffer is full");
        // 1 s of 2 Mbit/s is 166 packets; 64 KB hold 43, a few have left.
        assert!(
            (110..=125).contains(&v.source_discards()),
            "{}",
            v.source_discards()
        );
        // A BRM with ER = 1 Mbit/s: ACR + RIF·PCR = 56 + 625 kbit/s, under the ER.
        let brm = Packet {
            flow: FlowId(3),
            direction: Direction::Reverse,
            size: CELL_SIZE,
            payload: 0,
            sent_at: Instant::ZERO,
            header: Header::Cell(CellHeader {
                vc: vc_id(FlowId(3), Direction::Forward),
                body: CellBody::Rm(super::super::RmCell {
                    dir: RmDirection::Backward,
                    ci: false,
                    ni: false,
                    er: Bitrate::mbps(1),
                    ccr: Bitrate::kbps(56),
                    mcr: Bitrate::kbps(56),
                }),
            }),
        };
        let mut sink = crate::VecSink::default();
        let t = Instant::ZERO + Duration::from_secs(1);
        s.handle_packet(t, &brm, &mut sink);
        assert_eq!(vc(&s).source().acr(), Bitrate::kbps(681));
        assert!(sink.0.contains(&(t, ACR.bps(Bitrate::kbps(681)))));
        assert!(sink.0.contains(&(t, EXPLICIT_RATE.bps(Bitrate::mbps(1)))));
    }
}
