//! What a fairstream run records, whoever drives it: the simulator (`fairstream-sim`), the
//! real-time driver (`fairstream-rt`) and the emulator all fill the same [`RunOutput`], which
//! `fairstream-results` writes as Parquet tables and `summary.json`. This crate holds the records
//! only (no engine, no protocol), so that a driver and the results writer depend on it and not on
//! one another.
//!
//! - [`record`]: per-flow and per-link summaries, interval series, metric records, the packet
//!   trace and the [`RunOutput`] that holds them, all columnar;
//! - [`capture`]: a capture file written as the run goes, removed with the output;
//! - [`metric`]: the metric schema (a metric declared beside its protocol), the sink endpoints
//!   record into, and the folds of a flow's summary columns;
//! - [`column`](mod@column): columns a component (a protocol, a queue discipline) declares for a table;
//! - [`active`]: the one rule for a flow's active time, which its summary's rates divide by.

pub mod active;
pub mod capture;
pub mod column;
pub mod metric;
pub mod record;

pub use active::ActiveSpan;
pub use capture::CaptureFile;
pub use column::{Column, ColumnKind, Declared, Value};
pub use metric::{Metric, MetricKind, MetricSelection, MetricSink, NullSink, VecSink};
pub use record::{
    DataPacket, DeclaredSeries, FlowSeries, FlowSummary, LinkSeries, LinkSummary, MetricRecords,
    PacketEvent, PacketEvents, PacketTrace, RunOutput, SeriesTable,
};
