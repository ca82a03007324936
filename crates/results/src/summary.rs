//! `summary.json`: the run's facts and the per-flow and per-link totals, whose columns are the
//! ones `tables` declares (so `flow_summary.parquet` and the `flows` here cannot drift apart).
//! A value missing in a table (null: an RTT with no samples) is `null` here too.

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, ListArray, StringArray, UInt32Array, UInt64Array,
};
use fairstream_records::RunOutput;
use serde_json::{Value, json};

use crate::RunInfo;
use crate::tables::{Columns, flow_summary_columns, link_summary_columns};

/// A JSON number, or `null` for NaN and infinities (JSON has no NaN).
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// Row `row` of `column` as JSON.
fn cell(column: &ArrayRef, row: usize) -> Value {
    if column.is_null(row) {
        return Value::Null; // a null in the table is a null here (a missing RTT)
    }
    let any = column.as_any();
    if let Some(a) = any.downcast_ref::<UInt32Array>() {
        json!(a.value(row))
    } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
        json!(a.value(row))
    } else if let Some(a) = any.downcast_ref::<Float64Array>() {
        num(a.value(row))
    } else if let Some(a) = any.downcast_ref::<StringArray>() {
        json!(a.value(row))
    } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
        json!(a.value(row))
    } else if let Some(a) = any.downcast_ref::<ListArray>() {
        let items = a.value(row);
        Value::Array((0..items.len()).map(|i| cell(&items, i)).collect())
    } else {
        Value::Null
    }
}

/// The rows of a table as JSON objects, keyed by column name.
fn rows(columns: &Columns) -> Vec<Value> {
    let n = columns.first().map_or(0, |(_, c)| c.len());
    (0..n)
        .map(|row| {
            Value::Object(
                columns
                    .iter()
                    .map(|(name, c)| ((*name).to_string(), cell(c, row)))
                    .collect(),
            )
        })
        .collect()
}

/// The summary as a JSON value.
pub fn summary_value(info: &RunInfo, out: &RunOutput) -> Value {
    let flows = rows(&flow_summary_columns(out));
    let links = rows(&link_summary_columns(out));
    let wall = info.wall_time_s;
    let mut v = json!({
        "name": info.name,
        "seed": out.seed,
        "duration_s": out.duration.as_secs_f64(),
        "complete": info.stopped_at_s.is_none(),
        "stopped_at_s": info.stopped_at_s.map_or(Value::Null, num),
        "events": out.events,
        "packets": out.packets,
        "wall_time_s": num(wall),
        "events_per_s": num(if wall > 0.0 { out.events as f64 / wall } else { f64::NAN }),
        "fairstream_version": env!("CARGO_PKG_VERSION"),
        "flows": flows,
        "links": links,
    });
    if let (Some(accurate), Value::Object(m)) = (info.emulated, &mut v) {
        m.insert("emulated".to_string(), json!(true));
        m.insert("emulation_accurate".to_string(), json!(accurate));
    }
    v
}

/// The summary as pretty-printed JSON text.
pub fn summary_json(info: &RunInfo, out: &RunOutput) -> String {
    let mut s = serde_json::to_string_pretty(&summary_value(info, out))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
