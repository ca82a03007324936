//! The recording stage: what the engine reports as it runs (packets sent, delivered, lost,
//! traced or captured; metric records; bin boundaries) becomes counters, interval series, the
//! packet trace and pcap captures, and at the end the per-flow and per-link summaries of the
//! [`RunOutput`]. The event loop calls it and never touches a series or a table itself.

use fairstream_core::{Duration, Instant, NodeId};
use fairstream_net::{Queue, QueueLimit, QueueSummary};
use fairstream_proto::{AnyEndpoint, DataPacket, Direction, Endpoint, Metric, MetricSink, Packet};

use crate::link::{Link, LinkCounters};
use crate::pcap::PcapCapture;
use crate::{LinkSpec, RecordConfig};
use fairstream_records::metric::{RTT, SummaryFolds};
use fairstream_records::{
    ActiveSpan, DeclaredSeries, FlowSeries, FlowSummary, LinkSeries, LinkSummary, MetricRecords,
    MetricSelection, PacketEvent, PacketEvents, PacketTrace, RunOutput,
};

/// Cumulative counters of one flow.
#[derive(Debug, Clone, Copy, Default)]
struct FlowCounters {
    packets_sent: u64,
    bytes_sent: u64,
    packets_delivered: u64,
    bytes_delivered: u64,
    packets_dropped: u64,
    rtt_sum: f64,
    rtt_samples: u64,
}

/// Routes a flow's metric records into its counters, the summary columns their declarations
/// name, and, if enabled, the metric table.
pub(crate) struct FlowSink<'a> {
    flow: u32,
    counters: &'a mut FlowCounters,
    summaries: &'a mut SummaryFolds,
    records: Option<&'a mut MetricRecords>,
    keeps: &'a MetricSelection,
}

impl MetricSink for FlowSink<'_> {
    #[inline]
    fn record(&mut self, now: Instant, metric: Metric) {
        if metric.is(&RTT) {
            self.counters.rtt_sum += metric.value;
            self.counters.rtt_samples += 1;
        }
        if let Some(summary) = metric.kind.summary {
            self.summaries
                .take(summary, now.as_secs_f64(), metric.value);
        }
        if let Some(r) = self.records.as_deref_mut()
            && self.keeps.keeps(metric.kind)
        {
            r.t.push(now.as_secs_f64());
            r.flow_id.push(self.flow);
            r.metric.push(metric.kind.name);
            r.value.push(metric.value);
        }
    }
}

/// What the summaries say about a flow besides its counters.
pub(crate) struct FlowInfo<'a> {
    pub(crate) name: &'a str,
    pub(crate) protocol: &'a str,
    pub(crate) packet: DataPacket,
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    pub(crate) start: Instant,
    pub(crate) stop: Option<Instant>,
}

/// What a link's summary says beside its counters: its mean loss rate, its queue and its
/// capacity schedule. Every driver of links (the simulator, the emulator) describes them
/// through this, so the parameter columns mean the same in every run.
#[derive(Clone, Debug)]
pub struct LinkParams {
    loss_rate: f64,
    queue: QueueSummary,
    schedule: Vec<(Instant, fairstream_core::Bitrate)>,
}

impl LinkParams {
    /// The parameters of `spec`, whose queue was built as `queue` (RED's automatic parameters
    /// as resolved for the link).
    pub fn of(spec: &LinkSpec, queue: &Queue) -> Self {
        Self {
            loss_rate: spec.error.mean_loss_rate(),
            queue: queue.summary(&spec.queue),
            schedule: spec.capacity.steps().to_vec(),
        }
    }

    /// `counts` (a summary with the link's names and counters filled in) with these
    /// parameters' columns.
    pub fn describe(&self, counts: LinkSummary) -> LinkSummary {
        let q = &self.queue;
        let (queue_limit_packets, queue_limit_bytes) = match q.limit {
            QueueLimit::Packets(n) => (Some(u64::from(n)), None),
            QueueLimit::Bytes(b) => (None, Some(b.as_bytes())),
        };
        LinkSummary {
            loss_rate: self.loss_rate,
            schedule: self
                .schedule
                .iter()
                .map(|&(t, r)| (t.as_nanos(), r.as_bps()))
                .collect(),
            queue_kind: q.kind,
            queue_limit_packets,
            queue_limit_bytes,
            queue_params: q.params.clone(),
            ..counts
        }
    }
}

/// Everything a run records.
pub(crate) struct Recorder {
    interval: Duration,
    counters: Vec<FlowCounters>,
    /// Each flow's summary columns, folded from its metric records.
    summaries: Vec<SummaryFolds>,
    /// Counters and goodput at the start of the open bin.
    counters_at_bin: Vec<(FlowCounters, u64)>,
    links_at_bin: Vec<LinkCounters>,
    bin_start: Instant,
    flow_series: FlowSeries,
    link_series: LinkSeries,
    /// Whether each link's rows go into `link_series` (`RecordConfig::link_series`).
    link_series_kept: Vec<bool>,
    queue_series: Vec<DeclaredSeries>,
    /// The links whose queue keeps a series of its own (an ERICA port's), in order.
    series_links: Vec<usize>,
    metrics: Option<MetricRecords>,
    /// Which metrics `metrics` keeps.
    metric_selection: MetricSelection,
    trace: Option<PacketTrace>,
    /// The events the trace keeps.
    trace_events: PacketEvents,
    pcaps: Vec<Option<PcapCapture>>,
}

impl Recorder {
    /// A recorder for `flows` flows and the run's `links`, recording what `config` asks for;
    /// its captures are written into `capture_dir` as the run goes (the error names the link
    /// whose capture cannot be created).
    pub(crate) fn new(
        config: &RecordConfig,
        flows: usize,
        links: &[Link],
        capture_dir: &std::path::Path,
    ) -> Result<Self, (usize, std::io::Error)> {
        // Empty where nothing is captured, so that asking costs no load per transmission.
        let slots = if config.pcap.is_empty() {
            0
        } else {
            links.len()
        };
        let mut pcaps: Vec<Option<PcapCapture>> = (0..slots).map(|_| None).collect();
        for l in &config.pcap {
            if let Some(p) = pcaps.get_mut(l.index()) {
                *p = Some(PcapCapture::create(capture_dir).map_err(|e| (l.index(), e))?);
            }
        }
        Ok(Self {
            interval: config.interval,
            counters: vec![FlowCounters::default(); flows],
            summaries: vec![SummaryFolds::default(); flows],
            counters_at_bin: vec![(FlowCounters::default(), 0); flows],
            links_at_bin: vec![LinkCounters::default(); links.len()],
            bin_start: Instant::ZERO,
            flow_series: FlowSeries::default(),
            link_series: LinkSeries::default(),
            link_series_kept: config.link_series_kept(links.len()),
            queue_series: Vec::new(),
            series_links: (links.iter().enumerate())
                .filter(|(_, l)| l.queue.series_row().is_some())
                .map(|(i, _)| i)
                .collect(),
            metrics: config.metrics.then(MetricRecords::default),
            metric_selection: config.metric_selection.clone(),
            trace: config.packets.then(PacketTrace::default),
            trace_events: config.packet_events,
            pcaps,
        })
    }

    /// The width of the interval series' bins (zero: no series).
    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    /// The metric sink of `flow`'s endpoints.
    #[inline]
    pub(crate) fn sink(&mut self, flow: usize) -> FlowSink<'_> {
        FlowSink {
            flow: flow as u32,
            counters: &mut self.counters[flow],
            summaries: &mut self.summaries[flow],
            records: self.metrics.as_mut(),
            keeps: &self.metric_selection,
        }
    }

    /// A packet left its sender's host.
    #[inline]
    pub(crate) fn sent(&mut self, pkt: &Packet) {
        if pkt.direction == Direction::Forward {
            let c = &mut self.counters[pkt.flow.index()];
            c.packets_sent += 1;
            c.bytes_sent += pkt.size.as_bytes();
        }
    }

    /// A packet reached its destination.
    #[inline]
    pub(crate) fn delivered(&mut self, pkt: &Packet) {
        if pkt.direction == Direction::Forward {
            let c = &mut self.counters[pkt.flow.index()];
            c.packets_delivered += 1;
            c.bytes_delivered += pkt.size.as_bytes();
        }
    }

    /// A packet was lost (to a queue or to a link's error model).
    #[inline]
    pub(crate) fn lost(&mut self, pkt: &Packet) {
        if pkt.direction == Direction::Forward {
            self.counters[pkt.flow.index()].packets_dropped += 1;
        }
    }

    /// Whether the per-packet trace is on (a branch, and nothing else, when off).
    #[inline]
    pub(crate) fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Adds packet `id`'s `event` at `link` to the trace (if on and keeping such events).
    #[cold]
    #[inline(never)]
    pub(crate) fn trace(
        &mut self,
        event: PacketEvent,
        link: usize,
        now: Instant,
        id: u64,
        p: &Packet,
    ) {
        let Some(tr) = self.trace.as_mut() else {
            return;
        };
        if !self.trace_events.contains(event) {
            return;
        }
        tr.t.push(now.as_secs_f64());
        tr.t_ns.push(now.as_nanos());
        tr.packet_id.push(id);
        tr.event.push(event);
        tr.link_id.push(link as u32);
        tr.flow_id.push(p.flow.0);
        tr.seq.push(p.header.trace_seq());
        tr.size.push(p.size.as_bytes() as u32);
        tr.reverse.push(p.direction == Direction::Reverse);
    }

    /// Whether packets transmitted on `link` go to a pcap capture.
    #[inline]
    pub(crate) fn captures(&self, link: usize) -> bool {
        self.pcaps.get(link).is_some_and(Option::is_some)
    }

    /// Writes a packet transmitted on `link` to its pcap capture, if the link has one.
    #[cold]
    pub(crate) fn capture(
        &mut self,
        link: usize,
        now: Instant,
        p: &Packet,
        ends: (NodeId, NodeId),
        segment: u64,
    ) {
        if let Some(w) = self.pcaps[link].as_mut() {
            w.write(now, p, ends.0, ends.1, segment);
        }
    }

    /// Closes the bin `[bin_start, now)` of every series.
    pub(crate) fn close_bin(&mut self, now: Instant, endpoints: &[AnyEndpoint], links: &[Link]) {
        if now <= self.bin_start {
            return;
        }
        let (t0, t1) = (self.bin_start.as_secs_f64(), now.as_secs_f64());
        let s = &mut self.flow_series;
        for (flow, c) in self.counters.iter().enumerate() {
            let goodput = endpoints[2 * flow + 1].stats().app_bytes_received;
            let (prev, prev_goodput) = self.counters_at_bin[flow];
            s.flow_id.push(flow as u32);
            s.t_start.push(t0);
            s.t_end.push(t1);
            s.packets_sent.push(c.packets_sent - prev.packets_sent);
            s.bytes_sent.push(c.bytes_sent - prev.bytes_sent);
            s.packets_delivered
                .push(c.packets_delivered - prev.packets_delivered);
            s.bytes_delivered
                .push(c.bytes_delivered - prev.bytes_delivered);
            s.goodput_bytes.push(goodput - prev_goodput);
            s.packets_dropped
                .push(c.packets_dropped - prev.packets_dropped);
            let n = c.rtt_samples - prev.rtt_samples;
            s.rtt_mean_s.push(if n == 0 {
                f64::NAN
            } else {
                (c.rtt_sum - prev.rtt_sum) / n as f64
            });
            self.counters_at_bin[flow] = (*c, goodput);
        }
        for (i, l) in links.iter().enumerate() {
            let prev = self.links_at_bin[i];
            let c = l.counters;
            if self.link_series_kept[i] {
                let s = &mut self.link_series;
                let (packets, bytes) = l.queue_len();
                s.link_id.push(i as u32);
                s.t_start.push(t0);
                s.t_end.push(t1);
                s.queue_packets.push(packets as u64);
                s.queue_bytes.push(bytes);
                s.packets_forwarded
                    .push(c.packets_forwarded - prev.packets_forwarded);
                s.bytes_forwarded
                    .push(c.bytes_forwarded - prev.bytes_forwarded);
                s.packets_dropped.push(
                    c.packets_dropped + c.packets_corrupted
                        - prev.packets_dropped
                        - prev.packets_corrupted,
                );
                let cap = l.capacity_bits(self.bin_start, now);
                let bits = (c.bytes_forwarded - prev.bytes_forwarded) as f64 * 8.0;
                s.utilisation.push(if cap > 0.0 { bits / cap } else { 0.0 });
            }
            self.links_at_bin[i] = c;
        }
        for &i in &self.series_links {
            if let Some((table, row)) = links[i].queue.series_row() {
                let series = match self
                    .queue_series
                    .iter_mut()
                    .position(|s| std::ptr::eq(s.table, table))
                {
                    Some(k) => &mut self.queue_series[k],
                    None => {
                        self.queue_series.push(DeclaredSeries::new(table));
                        self.queue_series.last_mut().expect("just pushed")
                    }
                };
                series.push(i as u32, t0, t1, &row);
            }
        }
        self.bin_start = now;
    }

    /// The summary of flow `i`, described by `f`, at the end of a run ending at `end`.
    pub(crate) fn flow_summary(
        &self,
        i: usize,
        f: &FlowInfo<'_>,
        endpoints: &[AnyEndpoint],
        node_names: &[String],
        end: Instant,
    ) -> FlowSummary {
        let c = &self.counters[i];
        let sender = endpoints[2 * i].stats();
        let receiver = endpoints[2 * i + 1].stats();
        let span = ActiveSpan::scheduled(f.start, f.stop, end);
        FlowSummary {
            flow_id: i as u32,
            name: f.name.to_string(),
            protocol: f.protocol.to_string(),
            src: node_names[f.src.index()].clone(),
            dst: node_names[f.dst.index()].clone(),
            start_s: f.start.as_secs_f64(),
            stop_s: span.stop.as_secs_f64(),
            packet: f.packet,
            packets_sent: c.packets_sent,
            bytes_sent: c.bytes_sent,
            packets_delivered: c.packets_delivered,
            bytes_delivered: c.bytes_delivered,
            goodput_bytes: receiver.app_bytes_received,
            packets_dropped: c.packets_dropped,
            retransmits: sender.retransmits,
            throughput_bps: span.bits_per_sec(c.bytes_delivered),
            goodput_bps: span.bits_per_sec(receiver.app_bytes_received),
            loss_rate: if c.packets_sent == 0 {
                0.0
            } else {
                c.packets_dropped as f64 / c.packets_sent as f64
            },
            mean_rtt_s: if c.rtt_samples == 0 {
                f64::NAN
            } else {
                c.rtt_sum / c.rtt_samples as f64
            },
            summaries: self.summaries[i].values(span.stop.as_secs_f64()),
        }
    }

    /// The summary of link `i` (named `name`, with `params`) at `end`.
    pub(crate) fn link_summary(
        i: usize,
        l: &Link,
        name: &str,
        params: &LinkParams,
        node_names: &[String],
        end: Instant,
    ) -> LinkSummary {
        let cap = l.capacity_bits(Instant::ZERO, end);
        params.describe(LinkSummary {
            link_id: i as u32,
            name: name.to_string(),
            src: node_names[l.from.index()].clone(),
            dst: node_names[l.to.index()].clone(),
            rate_bps: l.capacity.base().as_bps_f64(),
            delay_s: l.delay.as_secs_f64(),
            packets_forwarded: l.counters.packets_forwarded,
            bytes_forwarded: l.counters.bytes_forwarded,
            packets_dropped: l.counters.packets_dropped,
            packets_corrupted: l.counters.packets_corrupted,
            utilisation: if cap > 0.0 {
                l.counters.bytes_forwarded as f64 * 8.0 / cap
            } else {
                0.0
            },
            mean_queue_packets: l.mean_queue(end),
            ..LinkSummary::default()
        })
    }

    /// Hands the series, metric records, trace and captures to `out` (whose summaries the
    /// caller filled in).
    pub(crate) fn into_output(self, mut out: RunOutput) -> RunOutput {
        for (i, capture) in self.pcaps.into_iter().enumerate() {
            match capture.map(PcapCapture::finish) {
                Some(Ok(file)) => out
                    .pcaps
                    .push((out.link_names[i].clone(), std::sync::Arc::new(file))),
                Some(Err(e)) => out.capture_errors.push(e),
                None => {}
            }
        }
        out.flow_series = self.flow_series;
        out.link_series = self.link_series;
        out.queue_series = self.queue_series;
        out.metrics = self.metrics.unwrap_or_default();
        out.packet_trace = self.trace;
        out
    }
}
