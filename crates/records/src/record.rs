//! What a run produces: per-flow and per-link summaries, interval series, protocol metric
//! records, an optional per-packet trace and optional pcap captures, all in columnar form.

use fairstream_core::{DataSize, Duration};

/// A full data packet of a flow as its sender sends it: the size on the wire and the bytes of it
/// that are headers (IP, the transport, the protocol's own); the rest is the payload its sender
/// counts. The flow summary carries the three, so that no reader of the results recomputes a
/// protocol's headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataPacket {
    /// Size on the wire.
    pub size: DataSize,
    /// Bytes of it that are headers.
    pub headers: DataSize,
}

impl DataPacket {
    /// A packet of `size` on the wire with `headers` bytes of headers (at most `size`).
    pub fn new(size: DataSize, headers: u64) -> Self {
        Self {
            size,
            headers: DataSize::bytes(headers.min(size.as_bytes())),
        }
    }

    /// The payload: the size less the headers.
    pub fn payload(&self) -> DataSize {
        DataSize::bytes(self.size.as_bytes() - self.headers.as_bytes())
    }
}

/// Totals of one flow over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSummary {
    /// Flow index.
    pub flow_id: u32,
    /// Flow name.
    pub name: String,
    /// Protocol label.
    pub protocol: String,
    /// Sender's node name.
    pub src: String,
    /// Receiver's node name.
    pub dst: String,
    /// Start, seconds.
    pub start_s: f64,
    /// Stop (or end of run), seconds.
    pub stop_s: f64,
    /// A full data packet of the flow: its size on the wire and its headers (the
    /// `packet_size_bytes`, `header_bytes` and `payload_bytes` columns; zero where a run does
    /// not know its protocol's packet).
    pub packet: DataPacket,
    /// Data packets the sender emitted.
    pub packets_sent: u64,
    /// Bytes the sender emitted.
    pub bytes_sent: u64,
    /// Data packets that reached the receiver.
    pub packets_delivered: u64,
    /// Bytes (on the wire) that reached the receiver.
    pub bytes_delivered: u64,
    /// Application bytes delivered in order.
    pub goodput_bytes: u64,
    /// Data packets lost on the way (queue drops and link errors).
    pub packets_dropped: u64,
    /// Retransmissions by the sender.
    pub retransmits: u64,
    /// Delivered bits per second over the flow's active time.
    pub throughput_bps: f64,
    /// Goodput bits per second over the flow's active time.
    pub goodput_bps: f64,
    /// `packets_dropped / packets_sent`.
    pub loss_rate: f64,
    /// Mean of the sender's RTT samples, seconds (NaN if none).
    pub mean_rtt_s: f64,
    /// The columns its metrics' declarations summarise them into (a media flow's playout and
    /// quality; see [`RunOutput::summary_columns`]), those it recorded.
    pub summaries: crate::Declared,
}

/// Totals of one link over the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkSummary {
    /// Link index.
    pub link_id: u32,
    /// Link name.
    pub name: String,
    /// Transmitting node's name.
    pub src: String,
    /// Receiving node's name.
    pub dst: String,
    /// Initial rate, bit/s.
    pub rate_bps: f64,
    /// Propagation delay, seconds.
    pub delay_s: f64,
    /// Mean fraction of packets the link's error model loses (0: no loss model).
    pub loss_rate: f64,
    /// The capacity schedule: from each `(t_ns, bps)` on the link runs at `bps` (empty: the
    /// rate above all along).
    pub schedule: Vec<(u64, u64)>,
    /// The queue discipline's scenario keyword (`droptail`, `red`, `tbf`, `fq`, `erica`).
    pub queue_kind: &'static str,
    /// The queue's limit in packets, if it counts packets.
    pub queue_limit_packets: Option<u64>,
    /// The queue's limit in bytes, if it counts bytes.
    pub queue_limit_bytes: Option<u64>,
    /// The discipline's own resolved parameters (the columns it declares; see
    /// [`RunOutput::queue_columns`]).
    pub queue_params: crate::Declared,
    /// Packets transmitted.
    pub packets_forwarded: u64,
    /// Bytes transmitted.
    pub bytes_forwarded: u64,
    /// Packets the queue dropped.
    pub packets_dropped: u64,
    /// Packets lost to the error model.
    pub packets_corrupted: u64,
    /// Transmitted bits over capacity bits.
    pub utilisation: f64,
    /// Time-averaged queue length, packets.
    pub mean_queue_packets: f64,
}

/// Per-flow interval series, one row per flow per bin, columnar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowSeries {
    /// Flow index.
    pub flow_id: Vec<u32>,
    /// Bin start, seconds.
    pub t_start: Vec<f64>,
    /// Bin end, seconds.
    pub t_end: Vec<f64>,
    /// Data packets sent in the bin.
    pub packets_sent: Vec<u64>,
    /// Bytes sent in the bin.
    pub bytes_sent: Vec<u64>,
    /// Data packets delivered in the bin.
    pub packets_delivered: Vec<u64>,
    /// Bytes delivered in the bin.
    pub bytes_delivered: Vec<u64>,
    /// In-order application bytes delivered in the bin.
    pub goodput_bytes: Vec<u64>,
    /// Data packets lost in the bin.
    pub packets_dropped: Vec<u64>,
    /// Mean RTT sample in the bin, seconds (NaN if none).
    pub rtt_mean_s: Vec<f64>,
}

/// Per-link interval series, columnar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkSeries {
    /// Link index.
    pub link_id: Vec<u32>,
    /// Bin start, seconds.
    pub t_start: Vec<f64>,
    /// Bin end, seconds.
    pub t_end: Vec<f64>,
    /// Queue length at the end of the bin, packets.
    pub queue_packets: Vec<u64>,
    /// Queue length at the end of the bin, bytes.
    pub queue_bytes: Vec<u64>,
    /// Packets transmitted in the bin.
    pub packets_forwarded: Vec<u64>,
    /// Bytes transmitted in the bin.
    pub bytes_forwarded: Vec<u64>,
    /// Packets dropped (queue or errors) in the bin.
    pub packets_dropped: Vec<u64>,
    /// Transmitted bits over capacity bits in the bin.
    pub utilisation: Vec<f64>,
}

/// An interval series a queue discipline declares beside itself (an ERICA port's state at the
/// end of each bin): the table's name and its columns after `link_id`, `link`, `t_start`,
/// `t_end`.
#[derive(Debug)]
pub struct SeriesTable {
    /// The table's name (its file is `<name>.parquet`).
    pub name: &'static str,
    /// Its declared columns.
    pub columns: &'static [&'static crate::Column],
}

/// The rows of a declared series (one per link per bin), columnar.
#[derive(Debug, Clone)]
pub struct DeclaredSeries {
    /// Its table.
    pub table: &'static SeriesTable,
    /// Link index.
    pub link_id: Vec<u32>,
    /// Bin start, seconds.
    pub t_start: Vec<f64>,
    /// Bin end, seconds.
    pub t_end: Vec<f64>,
    /// Each declared column's values, in the table's order.
    pub values: Vec<Vec<crate::Value>>,
}

impl DeclaredSeries {
    /// An empty series of `table`.
    pub fn new(table: &'static SeriesTable) -> Self {
        Self {
            table,
            link_id: Vec::new(),
            t_start: Vec::new(),
            t_end: Vec::new(),
            values: vec![Vec::new(); table.columns.len()],
        }
    }

    /// Adds link `link`'s row `row` (one value per column) for the bin `[t0, t1)`.
    pub fn push(&mut self, link: u32, t0: f64, t1: f64, row: &[crate::Value]) {
        self.link_id.push(link);
        self.t_start.push(t0);
        self.t_end.push(t1);
        for (column, &v) in self.values.iter_mut().zip(row) {
            column.push(v);
        }
    }
}

/// Protocol metric records, columnar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricRecords {
    /// When, seconds.
    pub t: Vec<f64>,
    /// Flow index.
    pub flow_id: Vec<u32>,
    /// Metric name (`cwnd`, `rtt`, …).
    pub metric: Vec<&'static str>,
    /// Value in the metric's unit.
    pub value: Vec<f64>,
}

/// What happened to a packet at a link, in a [`PacketTrace`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketEvent {
    /// Entered the link's queue (`+`).
    Enqueue,
    /// Started transmission (`-`).
    Transmit,
    /// Arrived at the far end (`r`).
    Receive,
    /// Dropped by the queue (`d`).
    Drop,
    /// Lost to the link's error model (`e`).
    Corrupt,
}

impl PacketEvent {
    /// Every event, in the order of their letters in a trace's documentation.
    pub const ALL: [Self; 5] = [
        Self::Enqueue,
        Self::Transmit,
        Self::Receive,
        Self::Drop,
        Self::Corrupt,
    ];

    /// The event's name in a scenario's `record.packets` list.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Enqueue => "enqueue",
            Self::Transmit => "transmit",
            Self::Receive => "receive",
            Self::Drop => "drop",
            Self::Corrupt => "corrupt",
        }
    }

    /// Whether the event happens to a packet at every hop it makes (enqueue, transmit,
    /// receive), rather than at most once in its life (a drop or a corruption).
    pub const fn per_hop(self) -> bool {
        matches!(self, Self::Enqueue | Self::Transmit | Self::Receive)
    }

    /// The ns-2 style trace letter.
    pub const fn letter(self) -> &'static str {
        match self {
            Self::Enqueue => "+",
            Self::Transmit => "-",
            Self::Receive => "r",
            Self::Drop => "d",
            Self::Corrupt => "e",
        }
    }
}

/// Which [`PacketEvent`]s a packet trace keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketEvents(u8);

impl PacketEvents {
    /// Every event.
    pub const ALL: Self = Self(0b1_1111);
    /// No event.
    pub const NONE: Self = Self(0);

    /// This set and `event`.
    #[must_use]
    pub const fn with(self, event: PacketEvent) -> Self {
        Self(self.0 | Self::bit(event))
    }

    /// Whether the set holds `event`.
    pub const fn contains(self, event: PacketEvent) -> bool {
        self.0 & Self::bit(event) != 0
    }

    /// The events of the set, in [`PacketEvent::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = PacketEvent> {
        PacketEvent::ALL
            .into_iter()
            .filter(move |&e| self.contains(e))
    }

    const fn bit(event: PacketEvent) -> u8 {
        1 << event as u8
    }
}

impl FromIterator<PacketEvent> for PacketEvents {
    fn from_iter<I: IntoIterator<Item = PacketEvent>>(events: I) -> Self {
        events.into_iter().fold(Self::NONE, Self::with)
    }
}

/// Per-packet trace, columnar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PacketTrace {
    /// When, seconds.
    pub t: Vec<f64>,
    /// When, integer nanoseconds (exact).
    pub t_ns: Vec<u64>,
    /// The packet's unique id in the run (numbered as endpoints emit packets).
    pub packet_id: Vec<u64>,
    /// What happened.
    pub event: Vec<PacketEvent>,
    /// At which link.
    pub link_id: Vec<u32>,
    /// Flow index.
    pub flow_id: Vec<u32>,
    /// Sequence number (TCP packet number or ACK number; UDP datagram number).
    pub seq: Vec<i64>,
    /// Size on the wire, bytes.
    pub size: Vec<u32>,
    /// Whether it travels from the flow's destination back to its source.
    pub reverse: Vec<bool>,
}

/// Everything a finished run produced.
#[derive(Debug, Clone, Default)]
pub struct RunOutput {
    /// Simulated duration.
    pub duration: Duration,
    /// Master seed.
    pub seed: u64,
    /// Events processed.
    pub events: u64,
    /// Packets created by endpoints.
    pub packets: u64,
    /// Flow names by flow id.
    pub flow_names: Vec<String>,
    /// Link names by link id.
    pub link_names: Vec<String>,
    /// Every column the protocols' metrics declare for the flow summary, in order: each flow's
    /// row holds the values of those it recorded, null for the others.
    pub summary_columns: Vec<&'static crate::Column>,
    /// Every column the queue disciplines declare for the link summary, in order: each link's
    /// row holds the values of its own discipline's, null for the others'.
    pub queue_columns: Vec<&'static crate::Column>,
    /// Per-flow totals.
    pub flows: Vec<FlowSummary>,
    /// Per-link totals.
    pub links: Vec<LinkSummary>,
    /// Per-flow series.
    pub flow_series: FlowSeries,
    /// Per-link series.
    pub link_series: LinkSeries,
    /// The series the queue disciplines declare (an ERICA port's `port_series`), those the
    /// run's links recorded.
    pub queue_series: Vec<DeclaredSeries>,
    /// Protocol metric records (empty unless recorded).
    pub metrics: MetricRecords,
    /// Per-packet trace, if recorded.
    pub packet_trace: Option<PacketTrace>,
    /// pcap captures as `(link name, file)`, written as the run went; each file is removed
    /// when the last copy of the output is dropped.
    pub pcaps: Vec<(String, std::sync::Arc<crate::CaptureFile>)>,
    /// Captures that could not be written (the file and why): results are incomplete.
    pub capture_errors: Vec<String>,
}
