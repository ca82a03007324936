//! The `[record]` table: interval-series bin width and optional recorders.

use fairstream_core::{Duration, LinkId};
use fairstream_proto::ProtocolConfig;
use fairstream_records::{MetricSelection, PacketEvent, PacketEvents};
use fairstream_sim::Network;
use toml::Value;
use toml::de::DeValue;

use crate::reader::{Result, Section};

/// Most rows the interval series may hold in all (about 1.6 GB of tables): a scenario asking
/// for more is refused before it runs rather than exhausting memory.
const MAX_SERIES_ROWS: u128 = 20_000_000;

/// Keys `[record]` may hold.
pub(crate) const RECORD_KEYS: &[&str] = &["interval", "metrics", "packets", "pcap"];

/// Reads `[record]` (absent: defaults) into `net.record`; returns the resolved table.
pub(crate) fn read_record(
    section: Option<&mut Section<'_, '_>>,
    net: &mut Network,
) -> Result<toml::Table> {
    let Some(r) = section else {
        let mut out = toml::Table::new();
        out.insert(
            "interval".into(),
            Value::String(net.record.interval.to_string()),
        );
        out.insert("metrics".into(), Value::Boolean(false));
        out.insert("packets".into(), Value::Boolean(false));
        out.insert("pcap".into(), Value::Array(Vec::new()));
        return Ok(out);
    };
    let interval: Duration = r.unit_or("interval", net.record.interval)?;
    if interval.is_zero() {
        return Err(r.error("interval", "the bin width must be longer than zero"));
    }
    let bins = net.duration.as_nanos().div_ceil(interval.as_nanos());
    let rows = u128::from(bins) * (net.flows().len() + net.links().len()) as u128;
    if rows > MAX_SERIES_ROWS {
        return Err(r.error(
            "interval",
            format!(
                "at {interval} the interval series would hold {rows} rows ({bins} bins × {} flows and \
                 links), more than {MAX_SERIES_ROWS}; widen the interval or shorten the run",
                net.flows().len() + net.links().len()
            ),
        ));
    }
    net.record.interval = interval;
    (net.record.metrics, net.record.metric_selection) = read_metrics(r)?;
    (net.record.packets, net.record.packet_events) = read_packets(r)?;
    let names = r.opt_str_list("pcap")?.unwrap_or_default();
    for (name, span) in names {
        let id = (0..net.links().len())
            .map(|i| LinkId(i as u32))
            .find(|&id| net.link_name(id) == name);
        match id {
            Some(id) => net.record.pcap.push(id),
            None => {
                let known: Vec<String> = (0..net.links().len())
                    .map(|i| net.link_name(LinkId(i as u32)))
                    .collect();
                return Err(r.src.error(
                    span,
                    &r.field("pcap"),
                    format!("unknown link `{name}`; links are: {}", known.join(", ")),
                ));
            }
        }
    }
    if !r.has("pcap") {
        r.set("pcap", Value::Array(Vec::new()));
    }
    Ok(r.take_resolved())
}

/// `packets`: `true` (every event), `false`, or the list of events the trace keeps, by name
/// (`["drop", "corrupt"]`: the losses alone). Resolved as a boolean when it keeps every event
/// or none, as the list otherwise.
fn read_packets(r: &mut Section<'_, '_>) -> Result<(bool, PacketEvents)> {
    let names = PacketEvent::ALL.map(PacketEvent::name).join("\", \"");
    let expected =
        format!("expected true, false, or an array of the events to keep, among \"{names}\"");
    let Some(DeValue::Array(_)) = r.raw("packets").map(|v| v.get_ref()) else {
        return match r.raw("packets").map(|v| v.get_ref()) {
            None | Some(DeValue::Boolean(_)) => {
                let on = r.bool_or("packets", false)?;
                Ok((on, PacketEvents::ALL))
            }
            Some(_) => Err(r.error("packets", expected)),
        };
    };
    let listed = r.opt_str_list("packets")?.unwrap_or_default();
    let mut events = PacketEvents::NONE;
    for (name, span) in &listed {
        let Some(event) = PacketEvent::ALL.into_iter().find(|e| e.name() == *name) else {
            return Err(r.src.error(
                span.clone(),
                &r.field("packets"),
                format!("unknown event `{name}`; {expected}"),
            ));
        };
        events = events.with(event);
    }
    if events == PacketEvents::NONE {
        return Err(r.error(
            "packets",
            "an empty list keeps no event; write `packets = false` for no trace",
        ));
    }
    if events == PacketEvents::ALL {
        r.set("packets", Value::Boolean(true));
    } else {
        let kept = events.iter().map(|e| Value::String(e.name().into()));
        r.set("packets", Value::Array(kept.collect()));
    }
    Ok((true, events))
}

/// `metrics`: `true` (every metric), `false`, or the list of the metrics to keep, by their names
/// in `metrics.parquet` (`["rtt", "timeout"]`). Resolved as a boolean for `true` and `false`, as
/// the list (in the order of the protocols' declarations) otherwise.
fn read_metrics(r: &mut Section<'_, '_>) -> Result<(bool, MetricSelection)> {
    let Some(DeValue::Array(_)) = r.raw("metrics").map(|v| v.get_ref()) else {
        if let Some(v) = r.raw("metrics")
            && !matches!(v.get_ref(), DeValue::Boolean(_))
        {
            return Err(r.error(
                "metrics",
                "expected true, false, or an array of the metrics to keep by name (\"rtt\", \"cwnd\", …; docs/results.md lists them)",
            ));
        }
        let on = r.bool_or("metrics", false)?;
        return Ok((on, MetricSelection::All));
    };
    let declared = ProtocolConfig::declared_metrics();
    let listed = r.opt_str_list("metrics")?.unwrap_or_default();
    for (name, span) in &listed {
        if !declared.iter().any(|m| m.name == *name) {
            let known: Vec<&str> = declared.iter().map(|m| m.name).collect();
            return Err(r.src.error(
                span.clone(),
                &r.field("metrics"),
                format!(
                    "unknown metric `{name}`; the metrics are: {}",
                    known.join(", ")
                ),
            ));
        }
    }
    let kept: Vec<&'static str> = declared
        .iter()
        .map(|m| m.name)
        .filter(|n| listed.iter().any(|(l, _)| l == n))
        .collect();
    if kept.is_empty() {
        return Err(r.error(
            "metrics",
            "an empty list keeps no metric; write `metrics = false` for none",
        ));
    }
    let resolved = kept.iter().map(|n| Value::String((*n).into())).collect();
    r.set("metrics", Value::Array(resolved));
    Ok((true, MetricSelection::Named(kept)))
}
