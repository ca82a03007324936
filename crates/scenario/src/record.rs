//! The `[record]` table: interval-series bin width and optional recorders.

use fairstream_core::{Duration, LinkId};
use fairstream_sim::Network;
use toml::Value;

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
    net.record.metrics = r.bool_or("metrics", false)?;
    net.record.packets = r.bool_or("packets", false)?;
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
