//! What a fairstream run records, whoever drives it: the simulator (`fairstream-sim`), the
//! real-time driver (`fairstream-rt`) and the emulator all fill the same [`RunOutput`], which
//! `fairstream-results` writes as Parquet tables and `summary.json`. This crate holds the records
//! only (no engine, no protocol), so that a driver and the results writer depend on it and not on
//! one another.
//!
//! - [`record`]: per-flow and per-link summaries, interval series, metric records, the packet
//!   trace and the [`RunOutput`] that holds them, all columnar;
//! - [`capture`]: a capture file written as the run goes, removed with the output;
//! - [`column`]: columns a component (a protocol, a queue discipline) declares for a table;
//! - [`active`]: the one rule for a flow's active time, which its summary's rates divide by.

pub mod active;
pub mod capture;
pub mod column;
pub mod record;

pub use active::ActiveSpan;
pub use capture::CaptureFile;
pub use column::{Column, ColumnKind, Declared, Value};
pub use record::{
    FlowSeries, FlowSummary, LinkSeries, LinkSummary, MediaSummary, MetricRecords, PacketEvent,
    PacketTrace, PortSeries, RateMean, RunOutput,
};
