//! `summary.json`: the run's facts and the per-flow and per-link totals, whose columns are the
//! ones `tables` declares (so `flow_summary.parquet` and the `flows` here cannot drift apart).
//! A value missing in a table (null: an RTT with no samples) is `null` here too.

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, ListArray, StringArray, UInt32Array, UInt64Array,
};
use fairstream_records::RunOutput;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Value, json};

use crate::RunInfo;
use crate::tables::{Columns, flow_summary_columns, link_summary_columns};

/// A JSON number, or `null` for NaN and infinities (JSON has no NaN).
fn num(x: f64) -> Value {
    if x.is_finite() { json!(x) } else { Value::Null }
}

/// Row `row` of `column`, serialised as JSON: a null in the table is `null` here (a missing
/// RTT), as is a NaN or an infinity; a list is an array of its items.
struct Cell<'a> {
    column: &'a ArrayRef,
    row: usize,
}

impl Serialize for Cell<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (column, row) = (self.column, self.row);
        if column.is_null(row) {
            return s.serialize_none();
        }
        let any = column.as_any();
        if let Some(a) = any.downcast_ref::<UInt32Array>() {
            s.serialize_u32(a.value(row))
        } else if let Some(a) = any.downcast_ref::<UInt64Array>() {
            s.serialize_u64(a.value(row))
        } else if let Some(a) = any.downcast_ref::<Float64Array>() {
            num(a.value(row)).serialize(s)
        } else if let Some(a) = any.downcast_ref::<StringArray>() {
            s.serialize_str(a.value(row))
        } else if let Some(a) = any.downcast_ref::<BooleanArray>() {
            s.serialize_bool(a.value(row))
        } else if let Some(a) = any.downcast_ref::<ListArray>() {
            let items = a.value(row);
            let mut seq = s.serialize_seq(Some(items.len()))?;
            for i in 0..items.len() {
                seq.serialize_element(&Cell {
                    column: &items,
                    row: i,
                })?;
            }
            seq.end()
        } else {
            s.serialize_none()
        }
    }
}

/// The rows of a table as JSON objects keyed by column name, written as they are read: no
/// `Value` is built (building one and writing it took 2.5 times the instructions, for a one-second
/// B3 run's summary). Keys are in the order a `serde_json::Map` keeps them (sorted; a repeated
/// name, its last column).
struct Rows {
    columns: Columns,
    /// Column indices, by name.
    order: Vec<usize>,
}

impl Rows {
    fn new(columns: Columns) -> Self {
        let mut order: Vec<usize> = (0..columns.len()).collect();
        // By name, a repeated name's last column first: `dedup` keeps it.
        order.sort_by_key(|&i| (columns[i].0, std::cmp::Reverse(i)));
        order.dedup_by_key(|i| columns[*i].0);
        Self { columns, order }
    }
}

impl Serialize for Rows {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = self.columns.first().map_or(0, |(_, c)| c.len());
        let mut seq = s.serialize_seq(Some(n))?;
        for row in 0..n {
            seq.serialize_element(&Row { rows: self, row })?;
        }
        seq.end()
    }
}

/// One row of [`Rows`].
struct Row<'a> {
    rows: &'a Rows,
    row: usize,
}

impl Serialize for Row<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.rows.order.len()))?;
        for &i in &self.rows.order {
            let (name, column) = &self.rows.columns[i];
            map.serialize_entry(
                name,
                &Cell {
                    column,
                    row: self.row,
                },
            )?;
        }
        map.end()
    }
}

/// One field of the summary: a value, or a table's rows.
enum Field {
    Value(Value),
    Rows(Rows),
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(v) => v.serialize(s),
            Self::Rows(r) => r.serialize(s),
        }
    }
}

/// The summary's fields, written in the order of their names (a `serde_json::Map`'s).
struct Summary(Vec<(&'static str, Field)>);

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, field) in &self.0 {
            map.serialize_entry(name, field)?;
        }
        map.end()
    }
}

/// The summary's fields.
fn summary(info: &RunInfo, out: &RunOutput) -> Summary {
    let wall = info.wall_time_s;
    let value = |v: Value| Field::Value(v);
    let mut fields = vec![
        ("name", value(json!(info.name))),
        ("seed", value(json!(out.seed))),
        ("duration_s", value(json!(out.duration.as_secs_f64()))),
        ("complete", value(json!(info.stopped_at_s.is_none()))),
        (
            "stopped_at_s",
            value(info.stopped_at_s.map_or(Value::Null, num)),
        ),
        ("events", value(json!(out.events))),
        ("packets", value(json!(out.packets))),
        ("wall_time_s", value(num(wall))),
        (
            "events_per_s",
            value(num(if wall > 0.0 {
                out.events as f64 / wall
            } else {
                f64::NAN
            })),
        ),
        (
            "fairstream_version",
            value(json!(env!("CARGO_PKG_VERSION"))),
        ),
        ("flows", Field::Rows(Rows::new(flow_summary_columns(out)))),
        ("links", Field::Rows(Rows::new(link_summary_columns(out)))),
    ];
    if let Some(accurate) = info.emulated {
        fields.push(("emulated", value(json!(true))));
        fields.push(("emulation_accurate", value(json!(accurate))));
    }
    fields.sort_by_key(|(name, _)| *name);
    Summary(fields)
}

/// The summary as pretty-printed JSON text.
pub fn summary_json(info: &RunInfo, out: &RunOutput) -> String {
    let mut s = serde_json::to_string_pretty(&summary(info, out))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use fairstream_records::LinkSummary;

    use super::*;

    /// The keys of each object in pretty-printed JSON, in the order written (by indentation).
    fn keys_by_object(text: &str) -> Vec<Vec<String>> {
        let mut open: Vec<(usize, Vec<String>)> = Vec::new();
        let mut done = Vec::new();
        for line in text.lines() {
            let indent = line.len() - line.trim_start().len();
            let line = line.trim();
            if line.ends_with('{') && !line.contains(':') || line.ends_with(": {") {
                open.push((indent + 2, Vec::new()));
            } else if line.starts_with('}') {
                done.extend(open.pop().map(|(_, keys)| keys));
            }
            if let Some(key) = line.strip_prefix('"').and_then(|l| l.split_once("\":"))
                && let Some((at, keys)) = open.last_mut()
                && *at == indent
            {
                keys.push(key.0.to_string());
            }
        }
        done
    }

    #[test]
    fn the_summary_is_written_as_the_json_value_of_its_tables_with_keys_in_order() {
        let link =
            |id: u32, schedule: Vec<(u64, u64)>, limit: Option<u64>, util: f64| LinkSummary {
                link_id: id,
                name: format!("l{id}"),
                src: "a".into(),
                dst: "b".into(),
                rate_bps: 1e6,
                delay_s: 0.01,
                schedule,
                queue_kind: "droptail",
                queue_limit_packets: limit,
                packets_forwarded: 7,
                utilisation: util,
                ..LinkSummary::default()
            };
        let out = RunOutput {
            seed: 3,
            events: 11,
            links: vec![
                link(0, vec![(0, 1_000_000), (5_000_000_000, 0)], Some(50), 0.5),
                link(1, Vec::new(), None, f64::NAN),
            ],
            ..RunOutput::default()
        };
        for (emulated, stopped) in [(None, None), (Some(false), Some(1.5))] {
            let info = RunInfo {
                name: "s".into(),
                wall_time_s: 0.0,
                stopped_at_s: stopped,
                emulated,
                ..RunInfo::default()
            };
            let text = summary_json(&info, &out);
            let parsed: Value = serde_json::from_str(&text).unwrap();
            let links = &parsed["links"];
            assert_eq!(links[0]["schedule_t_ns"], json!([0, 5_000_000_000_u64]));
            assert_eq!(links[0]["schedule_bps"], json!([1_000_000, 0]));
            assert_eq!(links[0]["queue_limit_packets"], json!(50));
            assert_eq!(links[1]["queue_limit_packets"], Value::Null);
            assert_eq!(links[0]["utilisation"], json!(0.5));
            assert_eq!(links[1]["utilisation"], Value::Null, "NaN is null");
            assert_eq!(links[1]["schedule_bps"], json!([]));
            assert_eq!(parsed["events_per_s"], Value::Null, "no wall time: no rate");
            assert_eq!(parsed["complete"], json!(stopped.is_none()));
            assert_eq!(parsed.get("emulated").is_some(), emulated.is_some());
            let objects = keys_by_object(&text);
            assert_eq!(objects.len(), 3, "the summary and its two links");
            for keys in objects {
                let mut sorted = keys.clone();
                sorted.sort();
                assert_eq!(keys, sorted, "keys in a JSON map's order");
            }
        }
    }
}
