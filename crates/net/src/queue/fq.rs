//! Per-flow fair queueing by deficit round robin (Shreedhar and Varghese 1995), with the limits
//! of Linux `fq` and the quantum of ns-2's `DRR`: a FIFO per flow, visited in turn; each turn a
//! flow earns `quantum` bytes of credit and sends while its head packet fits in its credit.
//!
//! An arrival is dropped when its flow already holds `flow_limit` packets or the queue holds
//! `limit` packets in all (Linux `fq` drops the arrival in both cases; ns-2's `DRR` would
//! instead drop from the longest flow). A flow that empties leaves the round and loses its
//! credit. Flows are told apart by the packet's flow id, the only header field a scheduler of
//! this kind reads.

use std::collections::VecDeque;

use fairstream_core::{DataSize, Instant};
use fairstream_records::{Column, ColumnKind, Declared, Value};

use super::{Dequeue, QueuedPacket};

/// Parameters of a fair queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqConfig {
    /// Credit a flow earns per turn (one MTU by default, so equal-size packets alternate).
    pub quantum: DataSize,
    /// Packets the queue holds in all (Linux `fq` `limit`, 10 000).
    pub limit: u32,
    /// Packets one flow may hold (Linux `fq` `flow_limit`, 100).
    pub flow_limit: u32,
}

/// A fair queue's parameters in the link summary.
pub(super) static COLUMNS: [&Column; 2] = [&QUANTUM, &FLOW_LIMIT];
static QUANTUM: Column = Column::new(
    "fq_quantum_bytes",
    ColumnKind::Count,
    "bytes",
    "fair queue: the credit a flow earns per turn",
);
static FLOW_LIMIT: Column = Column::new(
    "fq_flow_limit",
    ColumnKind::Count,
    "packets",
    "fair queue: the packets one flow may hold",
);

impl FqConfig {
    /// The parameters, as the link summary shows them.
    pub(super) fn params(&self) -> Declared {
        vec![
            (&QUANTUM, Value::Count(self.quantum.as_bytes())),
            (&FLOW_LIMIT, Value::Count(u64::from(self.flow_limit))),
        ]
    }
}

impl Default for FqConfig {
    fn default() -> Self {
        Self {
            quantum: DataSize::bytes(1500),
            limit: 10_000,
            flow_limit: 100,
        }
    }
}

/// One flow's packets and its round-robin state.
#[derive(Clone, Debug, Default)]
struct FlowQueue {
    pkts: VecDeque<QueuedPacket>,
    /// Bytes it may still send this turn.
    deficit: u64,
    /// Whether it is in the round (has packets).
    active: bool,
}

/// A deficit-round-robin fair queue.
#[derive(Clone, Debug)]
pub struct Fq {
    config: FqConfig,
    /// Indexed by flow id (flow ids are dense), grown on demand.
    flows: Vec<FlowQueue>,
    /// Flows with packets, in round order; the front one has the turn.
    round: VecDeque<u32>,
    /// Whether the front flow has been given its quantum for the current turn.
    turn_credited: bool,
    packets: usize,
    bytes: u64,
}

impl Fq {
    /// Bytes of the per-flow state of one flow (its queue's own room is counted with the
    /// packets it holds).
    pub const BYTES_PER_FLOW: usize = size_of::<FlowQueue>() + size_of::<u32>();

    /// An empty fair queue.
    pub fn new(config: FqConfig) -> Self {
        Self {
            config,
            flows: Vec::new(),
            round: VecDeque::new(),
            turn_credited: false,
            packets: 0,
            bytes: 0,
        }
    }

    /// Offers `pkt` of flow `flow`; gives it back as `Err` if its flow or the whole queue is full.
    pub fn enqueue(
        &mut self,
        _now: Instant,
        pkt: QueuedPacket,
        flow: u32,
    ) -> Result<(), QueuedPacket> {
        let f = flow as usize;
        if f >= self.flows.len() {
            self.flows.resize_with(f + 1, FlowQueue::default);
        }
        let q = &mut self.flows[f];
        if self.packets >= self.config.limit as usize
            || q.pkts.len() >= self.config.flow_limit as usize
        {
            return Err(pkt);
        }
        q.pkts.push_back(pkt);
        if !q.active {
            q.active = true;
            q.deficit = 0;
            self.round.push_back(flow);
        }
        self.packets += 1;
        self.bytes += u64::from(pkt.size);
        Ok(())
    }

    /// The next packet in deficit-round-robin order, or [`Dequeue::Empty`].
    pub fn dequeue(&mut self, _now: Instant) -> Dequeue {
        let quantum = self.config.quantum.as_bytes().max(1);
        while let Some(&f) = self.round.front() {
            let q = &mut self.flows[f as usize];
            if !self.turn_credited {
                q.deficit += quantum;
                self.turn_credited = true;
            }
            let Some(&head) = q.pkts.front() else {
                // Cannot happen (a flow in the round has packets); leave it.
                q.active = false;
                self.round.pop_front();
                self.turn_credited = false;
                continue;
            };
            if u64::from(head.size) <= q.deficit {
                q.pkts.pop_front();
                q.deficit -= u64::from(head.size);
                if q.pkts.is_empty() {
                    q.active = false;
                    q.deficit = 0;
                    self.round.pop_front();
                    self.turn_credited = false;
                }
                self.packets -= 1;
                self.bytes -= u64::from(head.size);
                return Dequeue::Packet(head);
            }
            // Its turn is over: keep the credit, go to the back of the round.
            self.round.rotate_left(1);
            self.turn_credited = false;
        }
        Dequeue::Empty
    }

    /// Packets waiting.
    pub fn len_packets(&self) -> usize {
        self.packets
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packet `i` of `flow`: its slot encodes both (`flow · 1000 + i`).
    fn pkt(i: u32, flow: u32, size: u32) -> QueuedPacket {
        QueuedPacket {
            slot: flow * 1000 + i,
            size,
            enqueued_at: Instant::ZERO,
        }
    }

    fn offer(q: &mut Fq, p: QueuedPacket) -> Result<(), QueuedPacket> {
        q.enqueue(Instant::ZERO, p, p.slot / 1000)
    }

    fn flow(p: &QueuedPacket) -> u32 {
        p.slot / 1000
    }

    fn drain(q: &mut Fq) -> Vec<QueuedPacket> {
        std::iter::from_fn(|| match q.dequeue(Instant::ZERO) {
            Dequeue::Packet(p) => Some(p),
            _ => None,
        })
        .collect()
    }

    #[test]
    fn equal_flows_alternate_packet_by_packet() {
        let mut q = Fq::new(FqConfig::default());
        for i in 0..4 {
            offer(&mut q, pkt(i, 0, 1500)).unwrap();
        }
        for i in 4..8 {
            offer(&mut q, pkt(i, 1, 1500)).unwrap();
        }
        let flows: Vec<u32> = drain(&mut q).iter().map(flow).collect();
        assert_eq!(flows, [0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn bytes_not_packets_are_shared() {
        // Flow 0 sends 500-byte packets, flow 1 1500-byte ones: per turn flow 0 sends three.
        let mut q = Fq::new(FqConfig::default());
        for i in 0..30 {
            offer(&mut q, pkt(i, 0, 500)).unwrap();
        }
        for i in 30..40 {
            offer(&mut q, pkt(i, 1, 1500)).unwrap();
        }
        let out = drain(&mut q);
        let first: Vec<u32> = out.iter().take(8).map(flow).collect();
        assert_eq!(first, [0, 0, 0, 1, 0, 0, 0, 1]);
        let bytes = |f| {
            out.iter()
                .take(20)
                .filter(|p| flow(p) == f)
                .map(|p| p.size)
                .sum::<u32>()
        };
        assert_eq!(bytes(0), bytes(1));
    }

    #[test]
    fn per_flow_and_total_limits_drop_the_arrival() {
        let mut q = Fq::new(FqConfig {
            limit: 5,
            flow_limit: 3,
            ..FqConfig::default()
        });
        for i in 0..3 {
            offer(&mut q, pkt(i, 7, 100)).unwrap();
        }
        assert_eq!(offer(&mut q, pkt(3, 7, 100)), Err(pkt(3, 7, 100)));
        offer(&mut q, pkt(4, 2, 100)).unwrap();
        offer(&mut q, pkt(5, 2, 100)).unwrap();
        assert_eq!(offer(&mut q, pkt(6, 1, 100)), Err(pkt(6, 1, 100)));
        assert_eq!(q.len_packets(), 5);
    }

    #[test]
    fn a_flow_that_empties_loses_its_credit() {
        let mut q = Fq::new(FqConfig::default());
        offer(&mut q, pkt(0, 0, 100)).unwrap();
        assert!(matches!(q.dequeue(Instant::ZERO), Dequeue::Packet(p) if p.slot == 0));
        // Had it kept 1400 bytes of credit, it would now send two 1500-byte packets in a row.
        offer(&mut q, pkt(1, 0, 1500)).unwrap();
        offer(&mut q, pkt(2, 0, 1500)).unwrap();
        offer(&mut q, pkt(3, 1, 1500)).unwrap();
        let flows: Vec<u32> = drain(&mut q).iter().map(flow).collect();
        assert_eq!(flows, [0, 1, 0]);
    }
}
