//! Queue disciplines: [`Queue`] dispatches over drop-tail, RED, token bucket filter,
//! per-flow fair queueing and ATM ports running ERICA.
//!
//! A link owns one queue. The link offers each arriving packet with [`Queue::enqueue`]
//! (which may drop it) and, whenever its transmitter is free, asks [`Queue::dequeue`] for
//! the next packet, which answers with a packet, "not before" an instant (a token bucket
//! waiting for tokens), or empty. Queues hold [`QueuedPacket`]s: an opaque slot index into
//! the driver's packet arena plus its size and arrival time; at enqueue a discipline also sees
//! the packet itself, header included, and may rewrite it; a discipline that marks packets
//! travelling the other way (an ERICA port) also sees, through [`Queue::on_returning`], every
//! backward RM cell that reaches its node from its link's far end.

mod droptail;
mod erica;
mod fq;
mod red;
mod tbf;

use fairstream_core::{Bitrate, DataSize, Duration, Instant, RngStream};
use fairstream_proto::Packet;
use fairstream_proto::abr::RmCell;
use fairstream_records::{Column, Declared, SeriesTable, Value};

pub use droptail::{DropTail, LimitCounting};
pub use erica::{EricaPort, EricaPortConfig, PacketDiscard};
pub use fq::{Fq, FqConfig};
pub use red::{Red, RedConfig};
pub use tbf::{Tbf, TbfConfig};

/// A packet waiting in a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedPacket {
    /// The driver's handle for the packet (an arena index).
    pub slot: u32,
    /// Size on the wire, bytes.
    pub size: u32,
    /// When it was enqueued.
    pub enqueued_at: Instant,
}

/// The answer of [`Queue::dequeue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dequeue {
    /// Send this packet now.
    Packet(QueuedPacket),
    /// Packets wait, but none may leave before this instant (token bucket).
    NotBefore(Instant),
    /// Nothing is waiting.
    Empty,
}

/// A queue limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(u32),
    /// At most this many bytes.
    Bytes(DataSize),
}

/// A queue discipline and its parameters, before it is built for a link.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueConfig {
    /// First in, first out; arrivals beyond the limit are dropped.
    DropTail {
        /// The limit.
        limit: QueueLimit,
        /// Which packets count against it.
        counting: LimitCounting,
    },
    /// Random Early Detection.
    Red(RedConfig),
    /// Token bucket filter.
    Tbf(TbfConfig),
    /// Per-flow fair queueing (deficit round robin).
    Fq(FqConfig),
    /// An ATM port running ERICA (a FIFO of cells).
    Erica(EricaPortConfig),
}

impl std::fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Packets(n) => write!(f, "{n} packets"),
            Self::Bytes(b) => write!(f, "{b}"),
        }
    }
}

/// What the link summary says about a queue: its discipline, its limit, and the resolved
/// parameters the discipline declares (each discipline's columns, beside it).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSummary {
    /// The discipline's scenario keyword (`droptail`, `red`, `tbf`, `fq`, `erica`).
    pub kind: &'static str,
    /// Its limit.
    pub limit: QueueLimit,
    /// Its own parameters.
    pub params: Declared,
}

impl QueueConfig {
    /// Every column the disciplines declare for the link summary, each once.
    pub fn columns() -> Vec<&'static Column> {
        fairstream_records::column::union([
            &droptail::COLUMNS[..],
            &red::COLUMNS[..],
            &tbf::COLUMNS[..],
            &fq::COLUMNS[..],
            &erica::COLUMNS[..],
        ])
    }

    /// Every interval series the disciplines declare.
    pub fn series_tables() -> Vec<&'static SeriesTable> {
        vec![&erica::PORT_SERIES]
    }

    /// The discipline's scenario keyword.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::DropTail { .. } => "droptail",
            Self::Red(_) => "red",
            Self::Tbf(_) => "tbf",
            Self::Fq(_) => "fq",
            Self::Erica(_) => "erica",
        }
    }

    /// The queue's limit (a fair queue's and a token bucket's own unit: packets, bytes).
    pub fn limit(&self) -> QueueLimit {
        match self {
            Self::DropTail { limit, .. } => *limit,
            Self::Red(c) => c.limit,
            Self::Tbf(c) => QueueLimit::Bytes(c.limit),
            Self::Fq(c) => QueueLimit::Packets(c.limit),
            Self::Erica(c) => c.limit,
        }
    }

    /// Most packets of at least `smallest` bytes the queue can hold (`None`: no bound of its
    /// own, as a token bucket whose limit counts bytes is bounded by that limit).
    pub fn max_packets(&self, smallest: DataSize) -> u64 {
        let per = smallest.as_bytes().max(1);
        let of = |limit: QueueLimit| match limit {
            QueueLimit::Packets(n) => u64::from(n),
            QueueLimit::Bytes(b) => b.as_bytes().div_ceil(per),
        };
        match self {
            Self::DropTail { limit, .. } => of(*limit),
            Self::Red(c) => of(c.limit),
            Self::Tbf(c) => of(QueueLimit::Bytes(c.limit)),
            Self::Fq(c) => u64::from(c.limit),
            Self::Erica(c) => of(c.limit),
        }
    }

    /// Bytes the built queue allocates before any packet arrives.
    pub fn preallocated_bytes(&self) -> usize {
        let fifo = |limit: QueueLimit| droptail::Fifo::for_limit(limit).capacity_bytes();
        match self {
            Self::DropTail { limit, .. } => fifo(*limit),
            Self::Red(c) => size_of::<Red>() + fifo(c.limit),
            Self::Tbf(c) => fifo(QueueLimit::Bytes(c.limit)),
            Self::Fq(_) => 0,
            Self::Erica(c) => size_of::<EricaPort>() + fifo(c.limit),
        }
    }

    /// Bytes the built queue allocates per flow that crosses it (a fair queue's per-flow
    /// queues, indexed by flow id); zero for the other disciplines.
    pub fn bytes_per_flow(&self) -> usize {
        match self {
            Self::Fq(_) => Fq::BYTES_PER_FLOW,
            _ => 0,
        }
    }
}

/// A built queue discipline.
///
/// Its tag comes first and a drop-tail FIFO's fields right after it, so that a drop-tail
/// queue's enqueue and dequeue touch one cache line when the queue starts on one.
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum Queue {
    /// Drop-tail FIFO.
    DropTail(DropTail),
    /// RED.
    Red(Box<Red>),
    /// Token bucket filter.
    Tbf(Tbf),
    /// Fair queue.
    Fq(Fq),
    /// ERICA port.
    Erica(Box<EricaPort>),
}

impl Queue {
    /// Builds `config` for a link of rate `link_rate` and propagation delay `link_delay`
    /// (RED derives its automatic parameters from them); `rng` drives RED's random drops.
    pub fn new(
        config: &QueueConfig,
        link_rate: Bitrate,
        link_delay: Duration,
        rng: RngStream,
    ) -> Self {
        match config {
            QueueConfig::DropTail { limit, counting } => {
                Self::DropTail(DropTail::with_counting(*limit, *counting))
            }
            QueueConfig::Red(c) => {
                Self::Red(Box::new(Red::new(c.clone(), link_rate, link_delay, rng)))
            }
            QueueConfig::Tbf(c) => Self::Tbf(Tbf::new(c.clone())),
            QueueConfig::Fq(c) => Self::Fq(Fq::new(*c)),
            QueueConfig::Erica(c) => Self::Erica(Box::new(EricaPort::new(c, link_rate))),
        }
    }

    /// Offers `pkt`, whose packet (header included) is `packet`; gives it back as `Err` if the
    /// discipline drops it (perhaps a packet other than the arrival). A discipline reads what it
    /// needs of the packet and may rewrite it (mark it, or set a field of its header).
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Instant,
        pkt: QueuedPacket,
        packet: &mut Packet,
    ) -> Result<(), QueuedPacket> {
        match self {
            Self::DropTail(q) => q.enqueue(now, pkt),
            Self::Red(q) => q.enqueue(now, pkt),
            Self::Tbf(q) => q.enqueue(now, pkt),
            Self::Fq(q) => q.enqueue(now, pkt, packet.flow.0),
            Self::Erica(q) => q.enqueue(now, pkt, packet),
        }
    }

    /// Whether offering a packet of `size` bytes and then asking for the next would give that
    /// packet back and leave the queue as it was: true of an empty drop-tail queue that the
    /// packet fits. A driver whose transmitter is free may then send the packet at once without
    /// enqueueing it, which is the same run without touching the queue's ring buffer. Other
    /// disciplines decide at enqueue (RED's average, a token bucket's tokens): always false.
    #[inline]
    pub fn passes_straight_through(&self, size: u32) -> bool {
        match self {
            Self::DropTail(q) => q.passes_straight_through(size),
            _ => false,
        }
    }

    /// Whether the discipline wants to see the packets that reach its node from its link's far
    /// end (see [`Queue::on_returning`]).
    pub fn watches_returning(&self) -> bool {
        matches!(self, Self::Erica(_))
    }

    /// A backward RM cell of `vc` ([`fairstream_proto::abr::backward_rm`]) reached this queue's
    /// node over the link that runs the other way (from this queue's far end): an ERICA port
    /// marks it with its explicit rate. The driver looks at the packet first, so that the
    /// other packets (nearly all) do not touch the queue.
    #[inline]
    pub fn on_returning(&mut self, vc: u32, rm: &mut RmCell) {
        if let Self::Erica(q) = self {
            q.on_returning(vc, rm);
        }
    }

    /// What the link summary says about this queue, built from `config` (RED's automatic
    /// parameters as resolved for the link).
    pub fn summary(&self, config: &QueueConfig) -> QueueSummary {
        let params = match (config, self) {
            (QueueConfig::DropTail { counting, .. }, _) => counting.params(),
            (QueueConfig::Red(_), Self::Red(q)) => q.params(),
            (QueueConfig::Tbf(c), _) => c.params(),
            (QueueConfig::Fq(c), _) => c.params(),
            (QueueConfig::Erica(c), _) => c.params(),
            (QueueConfig::Red(_), _) => Vec::new(),
        };
        QueueSummary {
            kind: config.kind(),
            limit: config.limit(),
            params,
        }
    }

    /// The row of the interval series this discipline declares, as of now, if it declares one
    /// (an ERICA port's `port_series`); the recorder adds it at each bin's end.
    pub fn series_row(&self) -> Option<(&'static SeriesTable, Vec<Value>)> {
        match self {
            Self::Erica(q) => Some((&erica::PORT_SERIES, q.series_row().to_vec())),
            _ => None,
        }
    }

    /// The next packet to send at `now`, if any may leave.
    #[inline]
    pub fn dequeue(&mut self, now: Instant) -> Dequeue {
        match self {
            Self::DropTail(q) => q.dequeue(now),
            Self::Red(q) => q.dequeue(now),
            Self::Tbf(q) => q.dequeue(now),
            Self::Fq(q) => q.dequeue(now),
            Self::Erica(q) => q.dequeue(now),
        }
    }

    /// Packets waiting.
    #[inline]
    pub fn len_packets(&self) -> usize {
        match self {
            Self::DropTail(q) => q.len_packets(),
            Self::Red(q) => q.len_packets(),
            Self::Tbf(q) => q.len_packets(),
            Self::Fq(q) => q.len_packets(),
            Self::Erica(q) => q.len_packets(),
        }
    }

    /// Bytes waiting.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        match self {
            Self::DropTail(q) => q.len_bytes(),
            Self::Red(q) => q.len_bytes(),
            Self::Tbf(q) => q.len_bytes(),
            Self::Fq(q) => q.len_bytes(),
            Self::Erica(q) => q.len_bytes(),
        }
    }
}
