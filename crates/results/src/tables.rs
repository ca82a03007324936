//! Parquet tables of a run, one file per table (columns as documented on each writer). A float
//! that is not a finite number is written as null, as in `summary.json`.

use std::path::Path;
use std::sync::Arc;

use arrow_array::types::UInt64Type;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
    UInt32Array, UInt64Array,
};
use fairstream_records::column;
use fairstream_records::{Column, ColumnKind, DeclaredSeries, PacketTrace, RunOutput, Value};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::ResultsError;

fn u64s(v: &[u64]) -> ArrayRef {
    Arc::new(UInt64Array::from(v.to_vec()))
}
/// A column of values that may be missing (null).
fn opt_u64s(v: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter(v))
}
fn u32s(v: &[u32]) -> ArrayRef {
    Arc::new(UInt32Array::from(v.to_vec()))
}
/// A float column in which a value that is not a finite number (an RTT with no samples is NaN)
/// is null, as `summary.json` writes it: the two agree, and a reader's mean skips it.
fn f64s(v: &[f64]) -> ArrayRef {
    Arc::new(Float64Array::from_iter(
        v.iter().map(|&x| x.is_finite().then_some(x)),
    ))
}
/// A column a component declared (see `fairstream_records::column`): each row's value, null
/// where the row has none.
fn declared(column: &Column, values: impl Iterator<Item = Option<Value>>) -> ArrayRef {
    match column.kind {
        ColumnKind::Count => Arc::new(UInt64Array::from_iter(values.map(|v| match v {
            Some(Value::Count(n)) => Some(n),
            _ => None,
        }))),
        ColumnKind::Real => Arc::new(Float64Array::from_iter(values.map(|v| match v {
            Some(Value::Real(x)) if x.is_finite() => Some(x),
            _ => None,
        }))),
        ColumnKind::Text => Arc::new(StringArray::from_iter(values.map(|v| match v {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        }))),
        ColumnKind::Flag => Arc::new(BooleanArray::from_iter(values.map(|v| match v {
            Some(Value::Flag(b)) => Some(b),
            _ => None,
        }))),
    }
}

/// A column of lists of whole numbers, one list per row.
fn u64_lists(rows: impl Iterator<Item = Vec<u64>>) -> ArrayRef {
    Arc::new(ListArray::from_iter_primitive::<UInt64Type, _, _>(
        rows.map(|r| Some(r.into_iter().map(Some))),
    ))
}

fn names(ids: &[u32], table: &[String]) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(
        ids.iter().map(|&i| table[i as usize].as_str()),
    ))
}

/// Writes one record batch of named columns to `path`, its columns encoded as `encodings` says
/// (see [`encodings`]).
fn write(
    path: &Path,
    columns: Vec<(&str, ArrayRef)>,
    encodings: &[ColumnEncoding],
) -> Result<(), ResultsError> {
    let err = |message: String| ResultsError::Parquet {
        path: path.to_path_buf(),
        message,
    };
    let batch = RecordBatch::try_from_iter(columns).map_err(|e| err(e.to_string()))?;
    let file = std::fs::File::create(path).map_err(|source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    write_parquet(file, &batch, encodings).map_err(err)
}

/// Table `name`'s `batch` as the bytes of a Parquet file, written nowhere: the same bytes as the
/// file its table's writer makes (what a worker hands the run cache without creating a file).
pub fn parquet_bytes(name: &str, batch: &RecordBatch) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    write_parquet(&mut bytes, batch, encodings(name))?;
    Ok(bytes)
}

/// How one column of a table is encoded in Parquet where the default (a dictionary, falling
/// back to plain values when it grows too big) does not suit it.
#[derive(Clone, Copy, Debug)]
struct ColumnEncoding {
    /// The column's name.
    column: &'static str,
    /// Its encoding, without a dictionary: `None` for plain values.
    encoding: Option<Encoding>,
}

/// The packet trace's clocks and counters: nearly every value differs from every other, so a
/// dictionary only costs the attempt (the writer builds one until it outgrows its page, then
/// starts again in plain values), while each value lies close to the row's before. Written
/// delta-encoded instead, a fifo-audit run's trace (392 006 rows) takes 4.8 MB instead of 7.2 and
/// encodes in two thirds of the time; polars reads it as fast (docs/PERFORMANCE.md).
const PACKET_TRACE_ENCODINGS: &[ColumnEncoding] = &[
    ColumnEncoding {
        column: "t",
        encoding: None,
    },
    ColumnEncoding {
        column: "t_ns",
        encoding: Some(Encoding::DELTA_BINARY_PACKED),
    },
    ColumnEncoding {
        column: "packet_id",
        encoding: Some(Encoding::DELTA_BINARY_PACKED),
    },
    ColumnEncoding {
        column: "seq",
        encoding: Some(Encoding::DELTA_BINARY_PACKED),
    },
];

/// The columns of table `name` encoded otherwise than by default: the packet trace's
/// ([`PACKET_TRACE_ENCODINGS`]); no other table's.
fn encodings(name: &str) -> &'static [ColumnEncoding] {
    match name {
        "packets" => PACKET_TRACE_ENCODINGS,
        _ => &[],
    }
}

/// Writes `batch` as one Parquet file into `sink`, Snappy-compressed, the columns `encodings`
/// names encoded as it says: the one writer of every table, to a file or to memory.
fn write_parquet<W: std::io::Write + Send>(
    sink: W,
    batch: &RecordBatch,
    encodings: &[ColumnEncoding],
) -> Result<(), String> {
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    for e in encodings {
        let column = ColumnPath::from(e.column);
        props = props.set_column_dictionary_enabled(column.clone(), false);
        if let Some(encoding) = e.encoding {
            props = props.set_column_encoding(column, encoding);
        }
    }
    let mut w = ArrowWriter::try_new(sink, batch.schema(), Some(props.build()))
        .map_err(|e| e.to_string())?;
    w.write(batch).map_err(|e| e.to_string())?;
    w.close().map_err(|e| e.to_string())?;
    Ok(())
}

/// `flow_series.parquet`: [`flow_series_columns`].
pub fn write_flow_series(path: &Path, out: &RunOutput) -> Result<(), ResultsError> {
    write(path, flow_series_columns(out), encodings("flow_series"))
}

/// The interval series of the flows: flow_id, flow, t_start, t_end, packets_sent, bytes_sent,
/// packets_delivered, bytes_delivered, goodput_bytes, packets_dropped, throughput_bps,
/// goodput_bps, rtt_mean_s.
pub fn flow_series_columns(out: &RunOutput) -> Columns {
    let s = &out.flow_series;
    let rate = |bytes: &[u64]| -> ArrayRef {
        f64s(
            &bytes
                .iter()
                .zip(s.t_start.iter().zip(&s.t_end))
                .map(|(&b, (&t0, &t1))| {
                    if t1 > t0 {
                        b as f64 * 8.0 / (t1 - t0)
                    } else {
                        0.0
                    }
                })
                .collect::<Vec<_>>(),
        )
    };
    vec![
        ("flow_id", u32s(&s.flow_id)),
        ("flow", names(&s.flow_id, &out.flow_names)),
        ("t_start", f64s(&s.t_start)),
        ("t_end", f64s(&s.t_end)),
        ("packets_sent", u64s(&s.packets_sent)),
        ("bytes_sent", u64s(&s.bytes_sent)),
        ("packets_delivered", u64s(&s.packets_delivered)),
        ("bytes_delivered", u64s(&s.bytes_delivered)),
        ("goodput_bytes", u64s(&s.goodput_bytes)),
        ("packets_dropped", u64s(&s.packets_dropped)),
        ("throughput_bps", rate(&s.bytes_delivered)),
        ("goodput_bps", rate(&s.goodput_bytes)),
        ("rtt_mean_s", f64s(&s.rtt_mean_s)),
    ]
}

/// Named columns of one table, in order.
pub type Columns = Vec<(&'static str, ArrayRef)>;

/// The per-flow totals, declared once: written as `flow_summary.parquet` and as the `flows` of
/// `summary.json`. The columns the protocols' metrics declare ([`RunOutput::summary_columns`])
/// follow the fixed ones.
pub(crate) fn flow_summary_columns(out: &RunOutput) -> Columns {
    let f = &out.flows;
    let col_u64 =
        |g: fn(&fairstream_records::FlowSummary) -> u64| u64s(&f.iter().map(g).collect::<Vec<_>>());
    let col_f64 =
        |g: fn(&fairstream_records::FlowSummary) -> f64| f64s(&f.iter().map(g).collect::<Vec<_>>());
    let col_str = |g: fn(&fairstream_records::FlowSummary) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(f.iter().map(g)))
    };
    let mut columns: Columns = vec![
        (
            "flow_id",
            u32s(&f.iter().map(|x| x.flow_id).collect::<Vec<_>>()),
        ),
        ("name", col_str(|x| &x.name)),
        ("protocol", col_str(|x| &x.protocol)),
        ("src", col_str(|x| &x.src)),
        ("dst", col_str(|x| &x.dst)),
        ("start_s", col_f64(|x| x.start_s)),
        ("stop_s", col_f64(|x| x.stop_s)),
        ("packet_size_bytes", col_u64(|x| x.packet.size.as_bytes())),
        ("header_bytes", col_u64(|x| x.packet.headers.as_bytes())),
        ("payload_bytes", col_u64(|x| x.packet.payload().as_bytes())),
        ("packets_sent", col_u64(|x| x.packets_sent)),
        ("bytes_sent", col_u64(|x| x.bytes_sent)),
        ("packets_delivered", col_u64(|x| x.packets_delivered)),
        ("bytes_delivered", col_u64(|x| x.bytes_delivered)),
        ("goodput_bytes", col_u64(|x| x.goodput_bytes)),
        ("packets_dropped", col_u64(|x| x.packets_dropped)),
        ("retransmits", col_u64(|x| x.retransmits)),
        ("throughput_bps", col_f64(|x| x.throughput_bps)),
        ("goodput_bps", col_f64(|x| x.goodput_bps)),
        ("loss_rate", col_f64(|x| x.loss_rate)),
        ("mean_rtt_s", col_f64(|x| x.mean_rtt_s)),
    ];
    for &c in &out.summary_columns {
        let values = f.iter().map(|x| column::value_of(&x.summaries, c));
        columns.push((c.name, declared(c, values)));
    }
    columns
}

/// The per-link totals and parameters, declared once: the `links` of `summary.json`. Each queue
/// discipline's own parameters are the columns it declares ([`RunOutput::queue_columns`]).
pub(crate) fn link_summary_columns(out: &RunOutput) -> Columns {
    let l = &out.links;
    let col_u64 =
        |g: fn(&fairstream_records::LinkSummary) -> u64| u64s(&l.iter().map(g).collect::<Vec<_>>());
    let col_f64 =
        |g: fn(&fairstream_records::LinkSummary) -> f64| f64s(&l.iter().map(g).collect::<Vec<_>>());
    let col_str = |g: fn(&fairstream_records::LinkSummary) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(l.iter().map(g)))
    };
    let mut columns: Columns = vec![
        (
            "link_id",
            u32s(&l.iter().map(|x| x.link_id).collect::<Vec<_>>()),
        ),
        ("name", col_str(|x| &x.name)),
        ("src", col_str(|x| &x.src)),
        ("dst", col_str(|x| &x.dst)),
        ("rate_bps", col_f64(|x| x.rate_bps)),
        ("delay_s", col_f64(|x| x.delay_s)),
        ("loss_rate", col_f64(|x| x.loss_rate)),
        (
            "schedule_t_ns",
            u64_lists(l.iter().map(|x| x.schedule.iter().map(|s| s.0).collect())),
        ),
        (
            "schedule_bps",
            u64_lists(l.iter().map(|x| x.schedule.iter().map(|s| s.1).collect())),
        ),
        ("queue_kind", col_str(|x| x.queue_kind)),
        (
            "queue_limit_packets",
            opt_u64s(l.iter().map(|x| x.queue_limit_packets)),
        ),
        (
            "queue_limit_bytes",
            opt_u64s(l.iter().map(|x| x.queue_limit_bytes)),
        ),
        ("packets_forwarded", col_u64(|x| x.packets_forwarded)),
        ("bytes_forwarded", col_u64(|x| x.bytes_forwarded)),
        ("packets_dropped", col_u64(|x| x.packets_dropped)),
        ("packets_corrupted", col_u64(|x| x.packets_corrupted)),
        ("utilisation", col_f64(|x| x.utilisation)),
        ("mean_queue_packets", col_f64(|x| x.mean_queue_packets)),
    ];
    for &c in &out.queue_columns {
        let values = l.iter().map(|x| column::value_of(&x.queue_params, c));
        columns.push((c.name, declared(c, values)));
    }
    columns
}

/// `flow_summary.parquet`: [`flow_summary_columns`].
pub fn write_flow_summary(path: &Path, out: &RunOutput) -> Result<(), ResultsError> {
    write(path, flow_summary_columns(out), encodings("flow_summary"))
}

/// `link_series.parquet`: [`link_series_columns`].
pub fn write_link_series(path: &Path, out: &RunOutput) -> Result<(), ResultsError> {
    write(path, link_series_columns(out), encodings("link_series"))
}

/// The interval series of the links: link_id, link, t_start, t_end, queue_packets,
/// queue_bytes, packets_forwarded, bytes_forwarded, packets_dropped, utilisation.
pub fn link_series_columns(out: &RunOutput) -> Columns {
    let s = &out.link_series;
    vec![
        ("link_id", u32s(&s.link_id)),
        ("link", names(&s.link_id, &out.link_names)),
        ("t_start", f64s(&s.t_start)),
        ("t_end", f64s(&s.t_end)),
        ("queue_packets", u64s(&s.queue_packets)),
        ("queue_bytes", u64s(&s.queue_bytes)),
        ("packets_forwarded", u64s(&s.packets_forwarded)),
        ("bytes_forwarded", u64s(&s.bytes_forwarded)),
        ("packets_dropped", u64s(&s.packets_dropped)),
        ("utilisation", f64s(&s.utilisation)),
    ]
}

/// `<name>.parquet` of a series a queue discipline declares: [`declared_series_columns`].
pub fn write_declared_series(
    path: &Path,
    s: &DeclaredSeries,
    out: &RunOutput,
) -> Result<(), ResultsError> {
    write(
        path,
        declared_series_columns(s, out),
        encodings(s.table.name),
    )
}

/// A series a queue discipline declares (an ERICA port's `port_series`): link_id, link, t_start,
/// t_end, then the columns its table declares (a value that is not a finite number is null).
pub fn declared_series_columns(s: &DeclaredSeries, out: &RunOutput) -> Columns {
    let mut columns = vec![
        ("link_id", u32s(&s.link_id)),
        ("link", names(&s.link_id, &out.link_names)),
        ("t_start", f64s(&s.t_start)),
        ("t_end", f64s(&s.t_end)),
    ];
    for (c, values) in s.table.columns.iter().zip(&s.values) {
        columns.push((c.name, declared(c, values.iter().map(|&v| Some(v)))));
    }
    columns
}

/// `metrics.parquet`: [`metrics_columns`].
pub fn write_metrics(path: &Path, out: &RunOutput) -> Result<(), ResultsError> {
    write(path, metrics_columns(out), encodings("metrics"))
}

/// The protocol metric records: t, flow_id, flow, metric, value.
pub fn metrics_columns(out: &RunOutput) -> Columns {
    let m = &out.metrics;
    vec![
        ("t", f64s(&m.t)),
        ("flow_id", u32s(&m.flow_id)),
        ("flow", names(&m.flow_id, &out.flow_names)),
        (
            "metric",
            Arc::new(StringArray::from_iter_values(m.metric.iter().copied())) as ArrayRef,
        ),
        ("value", f64s(&m.value)),
    ]
}

/// `packets.parquet`: [`packets_columns`].
pub fn write_packets(path: &Path, trace: &PacketTrace) -> Result<(), ResultsError> {
    write(path, packets_columns(trace), encodings("packets"))
}

/// The per-packet trace: t, t_ns, packet_id, event (`+ - r d e`), link_id, flow_id, seq,
/// size, reverse.
pub fn packets_columns(trace: &PacketTrace) -> Columns {
    vec![
        ("t", f64s(&trace.t)),
        ("t_ns", u64s(&trace.t_ns)),
        ("packet_id", u64s(&trace.packet_id)),
        (
            "event",
            Arc::new(StringArray::from_iter_values(
                trace.event.iter().map(|e| e.letter()),
            )) as ArrayRef,
        ),
        ("link_id", u32s(&trace.link_id)),
        ("flow_id", u32s(&trace.flow_id)),
        (
            "seq",
            Arc::new(Int64Array::from(trace.seq.clone())) as ArrayRef,
        ),
        ("size", u32s(&trace.size)),
        (
            "reverse",
            Arc::new(BooleanArray::from(trace.reverse.clone())) as ArrayRef,
        ),
    ]
}

/// Table `name` of a run as one Arrow record batch, with the columns of its Parquet file;
/// `None` for a table the run did not record (a declared series such as `port_series`,
/// `metrics`, `packets`) or an unknown name.
pub fn batch(name: &str, out: &RunOutput) -> Option<Result<RecordBatch, String>> {
    let columns = match name {
        "flow_series" => flow_series_columns(out),
        "flow_summary" => flow_summary_columns(out),
        "link_series" => link_series_columns(out),
        "metrics" if !out.metrics.t.is_empty() => metrics_columns(out),
        "packets" => packets_columns(out.packet_trace.as_ref()?),
        _ => {
            let series = out.queue_series.iter().find(|s| s.table.name == name)?;
            declared_series_columns(series, out)
        }
    };
    Some(RecordBatch::try_from_iter(columns).map_err(|e| e.to_string()))
}
