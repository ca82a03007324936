//! What a real run records, in the simulator's own result types: one flow's interval series,
//! its metric records and its summary, assembled into a [`RunOutput`] that
//! `fairstream-results` writes as for a simulated run (same Parquet schema, same
//! `summary.json`).

use fairstream_core::{DataSize, Duration, Instant};
use fairstream_proto::{DataPacket, Metric, MetricSink};
use fairstream_records::metric::{RTT, SummaryFolds};
use fairstream_records::{ActiveSpan, FlowSeries, FlowSummary, MetricRecords, RunOutput};

/// The live line a run reports about once a second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Live {
    /// Seconds since the flow started.
    pub t_s: f64,
    /// Rate sent (sender) or received (receiver) over the last second, bits per second.
    pub rate_bps: f64,
    /// The newest RTT sample, if any.
    pub rtt: Option<Duration>,
    /// The newest loss figure (reported by the receiver, or counted at it).
    pub loss: f64,
}

/// Counts of one bin or of the whole run.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    packets_sent: u64,
    bytes_sent: u64,
    packets_delivered: u64,
    bytes_delivered: u64,
    goodput_bytes: u64,
    packets_dropped: u64,
    rtt_sum: f64,
    rtt_samples: u64,
}

/// Records one flow as seen from one end of a real run.
#[derive(Debug)]
pub struct Recorder {
    interval: Duration,
    bin_start: Instant,
    bin: Counts,
    total: Counts,
    series: FlowSeries,
    metrics: MetricRecords,
    /// The summary columns the flow's metric records fold into (the streamer's playout).
    summaries: SummaryFolds,
    last_rtt: Option<Duration>,
    /// When the first and the last data packet was sent or received.
    first_packet: Option<Instant>,
    last_packet: Option<Instant>,
}

/// What the summary says about the flow beside its counts.
#[derive(Clone, Debug)]
pub struct FlowLabels {
    /// Protocol name.
    pub protocol: String,
    /// The sender's address.
    pub src: String,
    /// The receiver's address.
    pub dst: String,
    /// A full data packet of the protocol as run (`None`: no protocol ran).
    pub packet: Option<DataPacket>,
}

impl Recorder {
    /// A recorder of bins `interval` wide from `start`.
    pub fn new(start: Instant, interval: Duration) -> Self {
        Self {
            interval,
            bin_start: start,
            bin: Counts::default(),
            total: Counts::default(),
            series: FlowSeries::default(),
            metrics: MetricRecords::default(),
            summaries: SummaryFolds::default(),
            last_rtt: None,
            first_packet: None,
            last_packet: None,
        }
    }

    /// Closes the bins that end by `now`.
    fn advance(&mut self, now: Instant) {
        while now >= self.bin_start + self.interval {
            self.close_bin();
        }
    }

    fn close_bin(&mut self) {
        let (b, s) = (self.bin, &mut self.series);
        let end = self.bin_start + self.interval;
        s.flow_id.push(0);
        s.t_start.push(self.bin_start.as_secs_f64());
        s.t_end.push(end.as_secs_f64());
        s.packets_sent.push(b.packets_sent);
        s.bytes_sent.push(b.bytes_sent);
        s.packets_delivered.push(b.packets_delivered);
        s.bytes_delivered.push(b.bytes_delivered);
        s.goodput_bytes.push(b.goodput_bytes);
        s.packets_dropped.push(b.packets_dropped);
        s.rtt_mean_s.push(if b.rtt_samples > 0 {
            b.rtt_sum / b.rtt_samples as f64
        } else {
            f64::NAN
        });
        self.bin = Counts::default();
        self.bin_start = end;
    }

    /// A data packet went out or came in at `now`.
    fn packet_at(&mut self, now: Instant) {
        self.first_packet.get_or_insert(now);
        self.last_packet = Some(now);
    }

    fn both(&mut self, f: impl Fn(&mut Counts)) {
        f(&mut self.bin);
        f(&mut self.total);
    }

    /// A data packet of `size` (on the wire) sent at `now`.
    pub fn sent(&mut self, now: Instant, size: DataSize) {
        self.advance(now);
        self.packet_at(now);
        self.both(|c| {
            c.packets_sent += 1;
            c.bytes_sent += size.as_bytes();
        });
    }

    /// A data packet of `size` carrying `payload` application bytes received at `now`.
    pub fn delivered(&mut self, now: Instant, size: DataSize, payload: u64) {
        self.advance(now);
        self.packet_at(now);
        self.both(|c| {
            c.packets_delivered += 1;
            c.bytes_delivered += size.as_bytes();
            c.goodput_bytes += payload;
        });
    }

    /// `n` data packets found missing at `now`.
    pub fn lost(&mut self, now: Instant, n: u64) {
        self.advance(now);
        self.both(|c| c.packets_dropped += n);
    }

    /// The newest RTT sample.
    pub fn last_rtt(&self) -> Option<Duration> {
        self.last_rtt
    }

    /// Bytes sent and delivered so far.
    pub fn totals(&self) -> (u64, u64) {
        (self.total.bytes_sent, self.total.bytes_delivered)
    }

    /// The span from the first data packet sent or received to the last (see
    /// [`ActiveSpan::of_packets`]): the flow's active time where only its packets are seen, as
    /// at a receiver; an empty span at `otherwise` before any packet.
    pub fn packet_span(&self, otherwise: Instant) -> ActiveSpan {
        ActiveSpan::of_packets(self.first_packet, self.last_packet, otherwise)
    }

    /// The run's output: its series closed at `end`, its summary's rates over the flow's active
    /// time `span` (the one rule of [`ActiveSpan`]).
    pub fn finish(mut self, end: Instant, span: ActiveSpan, labels: &FlowLabels) -> RunOutput {
        self.advance(end);
        if self.bin_start < end {
            self.interval = end.saturating_since(self.bin_start);
            self.close_bin();
        }
        let t = self.total;
        let seen = t.packets_delivered + t.packets_dropped;
        let summary = FlowSummary {
            flow_id: 0,
            name: "flow0".to_string(),
            protocol: labels.protocol.clone(),
            src: labels.src.clone(),
            dst: labels.dst.clone(),
            start_s: span.start.as_secs_f64(),
            stop_s: span.stop.as_secs_f64(),
            packet: labels.packet.unwrap_or_default(),
            packets_sent: t.packets_sent,
            bytes_sent: t.bytes_sent,
            packets_delivered: t.packets_delivered,
            bytes_delivered: t.bytes_delivered,
            goodput_bytes: t.goodput_bytes,
            packets_dropped: t.packets_dropped,
            retransmits: 0,
            throughput_bps: span.bits_per_sec(t.bytes_sent.max(t.bytes_delivered)),
            goodput_bps: span.bits_per_sec(t.goodput_bytes),
            loss_rate: if seen > 0 {
                t.packets_dropped as f64 / seen as f64
            } else {
                0.0
            },
            mean_rtt_s: if t.rtt_samples > 0 {
                t.rtt_sum / t.rtt_samples as f64
            } else {
                f64::NAN
            },
            summaries: self.summaries.values(span.stop.as_secs_f64()),
        };
        RunOutput {
            duration: end.saturating_since(Instant::ZERO),
            flow_names: vec![summary.name.clone()],
            flows: vec![summary],
            flow_series: self.series,
            summary_columns: fairstream_proto::ProtocolConfig::summary_columns(),
            metrics: self.metrics,
            ..RunOutput::default()
        }
    }
}

impl MetricSink for Recorder {
    fn record(&mut self, now: Instant, metric: Metric) {
        self.advance(now);
        if let Some(secs) = metric.of(&RTT) {
            self.last_rtt = Some(Duration::from_secs_f64(secs));
            self.both(|c| {
                c.rtt_sum += secs;
                c.rtt_samples += 1;
            });
        }
        if let Some(summary) = metric.kind.summary {
            self.summaries
                .take(summary, now.as_secs_f64(), metric.value);
        }
        let r = &mut self.metrics;
        r.t.push(now.as_secs_f64());
        r.flow_id.push(0);
        r.metric.push(metric.kind.name);
        r.value.push(metric.value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_and_totals_count_what_happened() {
        let t = |ms| Instant::ZERO + Duration::from_millis(ms);
        let mut r = Recorder::new(t(0), Duration::from_millis(100));
        r.sent(t(10), DataSize::bytes(1000));
        r.sent(t(150), DataSize::bytes(1000));
        r.delivered(t(160), DataSize::bytes(1000), 956);
        r.lost(t(170), 1);
        r.record(t(170), RTT.secs(Duration::from_millis(20)));
        let labels = FlowLabels {
            protocol: "tfrc".into(),
            src: "a".into(),
            dst: "b".into(),
            packet: None,
        };
        let out = r.finish(t(250), ActiveSpan::scheduled(t(0), None, t(250)), &labels);
        assert_eq!(out.flow_series.packets_sent, vec![1, 1, 0]);
        assert_eq!(out.flow_series.t_end.last(), Some(&0.25));
        let f = &out.flows[0];
        assert_eq!(
            (f.packets_sent, f.packets_delivered, f.packets_dropped),
            (2, 1, 1)
        );
        assert_eq!(f.loss_rate, 0.5);
        assert!((f.mean_rtt_s - 0.02).abs() < 1e-12);
        // The packets went out from 10 ms to 160 ms: the span a receiver's summary would use.
        let span = ActiveSpan::of_packets(Some(t(10)), Some(t(160)), t(0));
        assert_eq!(span.secs(), 0.15);
        assert_eq!(out.metrics.metric, vec!["rtt"]);
    }
}
