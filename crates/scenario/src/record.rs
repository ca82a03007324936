//! The `[record]` table: interval-series bin width and optional recorders.

use std::collections::HashSet;

use fairstream_core::{Duration, LinkId, did_you_mean};
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
pub(crate) const RECORD_KEYS: &[&str] = &["interval", "metrics", "packets", "pcap", "link_series"];

/// Reads `[record]` (absent: defaults) into `net.record`; returns the resolved table.
pub(crate) fn read_record(
    section: Option<&mut Section<'_, '_>>,
    top: &Section<'_, '_>,
    net: &mut Network,
) -> Result<toml::Table> {
    let Some(r) = section else {
        // The defaults' series are bounded too: the run's length is then what to change.
        if let Some(message) = too_many_series_rows(net, net.record.interval) {
            return Err(top.error("duration", message));
        }
        let mut out = toml::Table::new();
        out.insert(
            "interval".into(),
            Value::String(net.record.interval.to_string()),
        );
        out.insert("metrics".into(), Value::Boolean(false));
        out.insert("packets".into(), Value::Boolean(false));
        out.insert("pcap".into(), Value::Array(Vec::new()));
        out.insert("link_series".into(), Value::Boolean(true));
        return Ok(out);
    };
    let interval: Duration = r.unit_or("interval", net.record.interval)?;
    if interval.is_zero() {
        return Err(r.error("interval", "the bin width must be longer than zero"));
    }
    net.record.interval = interval;
    (net.record.metrics, net.record.metric_selection) = read_metrics(r)?;
    (net.record.packets, net.record.packet_events) = read_packets(r)?;
    let names = r.opt_str_list("pcap")?.unwrap_or_default();
    for (name, span) in names {
        let id = link_named(r, net, "pcap", name, span)?;
        net.record.pcap.push(id);
    }
    if !r.has("pcap") {
        r.set("pcap", Value::Array(Vec::new()));
    }
    net.record.link_series = read_link_series(r, net)?;
    if let Some(message) = too_many_series_rows(net, interval) {
        return Err(r.error("interval", message));
    }
    Ok(r.take_resolved())
}

/// Why the interval series of `net` at `interval` are refused (more than [`MAX_SERIES_ROWS`]
/// rows), or `None`.
fn too_many_series_rows(net: &Network, interval: Duration) -> Option<String> {
    let series_links = net.record.series_links(net.links().len());
    let bins = net.duration.as_nanos().div_ceil(interval.as_nanos());
    let rows = u128::from(bins) * (net.flows().len() + series_links) as u128;
    (rows > MAX_SERIES_ROWS).then(|| {
        format!(
            "at {interval} the interval series would hold {rows} rows ({bins} bins × {} flows and \
             links), more than {MAX_SERIES_ROWS}; widen the interval (`record.interval`), shorten \
             the run or keep fewer links' series (`record.link_series`)",
            net.flows().len() + series_links
        )
    })
}

/// The link called `name` (`"N1->N2"`), listed under `key`; an unknown name is an error at
/// `span` that lists the links.
fn link_named(
    r: &Section<'_, '_>,
    net: &Network,
    key: &str,
    name: &str,
    span: std::ops::Range<usize>,
) -> Result<LinkId> {
    let ids = (0..net.links().len()).map(|i| LinkId(i as u32));
    if let Some(id) = ids.clone().find(|&id| net.link_name(id) == name) {
        return Ok(id);
    }
    let known: Vec<String> = ids.map(|id| net.link_name(id)).collect();
    Err(r.src.error(
        span,
        &r.field(key),
        format!(
            "unknown link `{name}`; {}the links are {}",
            did_you_mean(name, known.iter().map(String::as_str)),
            name_list(&known)
        ),
    ))
}

/// How many names an error message lists before it says how many more there are.
const NAMES_SHOWN: usize = 12;

/// `known` for an error message, quoted: the first [`NAMES_SHOWN`] and how many more (a dumbbell
/// of 10 000 flows has 40 002 links, which no message should spell out).
fn name_list<S: AsRef<str>>(known: &[S]) -> String {
    let shown: Vec<String> = known
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format!("\"{}\"", n.as_ref()))
        .collect();
    match known.len().saturating_sub(NAMES_SHOWN) {
        0 => shown.join(", "),
        more => format!("{}, … and {more} more", shown.join(", ")),
    }
}

/// `link_series`: `true` (every link's interval series, the default), `false` (none), or the
/// names of the links whose series is kept (`read_kept`), resolved in link order, each once.
fn read_link_series(r: &mut Section<'_, '_>, net: &Network) -> Result<Option<Vec<LinkId>>> {
    if r.raw("link_series").is_none() {
        r.set("link_series", Value::Boolean(true));
        return Ok(None);
    }
    let name = |i: usize| net.link_name(LinkId(i as u32));
    let every = || (0..net.links().len()).map(name).collect::<Vec<_>>();
    Ok(match read_kept(r, "link_series", every, "link", true)? {
        Kept::All => None,
        Kept::Off => Some(Vec::new()),
        Kept::Named(kept) => {
            let listed = kept.iter().map(|&i| Value::String(name(i)));
            r.set("link_series", Value::Array(listed.collect()));
            Some(kept.into_iter().map(|i| LinkId(i as u32)).collect())
        }
    })
}

/// What a recorder's key says: off, everything, or the names it lists.
enum Kept {
    Off,
    All,
    /// The listed names, each once, as indices into the known names, in their order.
    Named(Vec<usize>),
}

/// `key` as `true`, `false`, or an array of names among `known()` (each a `noun`; repeats are
/// kept once); `default` when absent. An unknown name, an empty array or any other value is an
/// error naming the field. Leaves `key` resolved as written for a boolean; the caller resolves
/// a list. The known names are made only for a list or an error (a network's links are
/// thousands, and a resolved scenario says `link_series = true`).
fn read_kept<S: AsRef<str>>(
    r: &mut Section<'_, '_>,
    key: &str,
    known: impl FnOnce() -> Vec<S>,
    noun: &str,
    default: bool,
) -> Result<Kept> {
    let Some(DeValue::Array(_)) = r.raw(key).map(|v| v.get_ref()) else {
        if let Some(v) = r.raw(key)
            && !matches!(v.get_ref(), DeValue::Boolean(_))
        {
            return Err(r.error(
                key,
                format!(
                    "expected true, false, or an array of the {noun}s to keep, among {}",
                    name_list(&known())
                ),
            ));
        }
        return Ok(if r.bool_or(key, default)? {
            Kept::All
        } else {
            Kept::Off
        });
    };
    let listed = r.opt_str_list(key)?.unwrap_or_default();
    let known = known();
    let known_names: HashSet<&str> = known.iter().map(AsRef::as_ref).collect();
    if let Some((name, span)) = listed.iter().find(|(n, _)| !known_names.contains(n)) {
        return Err(r.src.error(
            span.clone(),
            &r.field(key),
            format!(
                "unknown {noun} `{name}`; {}the {noun}s are {}",
                did_you_mean(name, known.iter().map(AsRef::as_ref)),
                name_list(&known)
            ),
        ));
    }
    let listed: HashSet<&str> = listed.iter().map(|(n, _)| *n).collect();
    let kept: Vec<usize> = (0..known.len())
        .filter(|&i| listed.contains(known[i].as_ref()))
        .collect();
    if kept.is_empty() {
        return Err(r.error(
            key,
            format!("an empty list keeps no {noun}; write `{key} = false` to keep none"),
        ));
    }
    Ok(Kept::Named(kept))
}

/// The list `names` as a resolved TOML array.
fn names_value(names: &[&'static str]) -> Value {
    Value::Array(names.iter().map(|n| Value::String((*n).into())).collect())
}

/// `packets`: `true` (every event), `false`, or the list of events the trace keeps, by name
/// (`["drop", "corrupt"]`: the losses alone). Resolved as `true` when the list names every
/// event.
fn read_packets(r: &mut Section<'_, '_>) -> Result<(bool, PacketEvents)> {
    let known = PacketEvent::ALL.map(PacketEvent::name);
    Ok(
        match read_kept(r, "packets", || known.to_vec(), "event", false)? {
            Kept::Off => (false, PacketEvents::ALL),
            Kept::All => (true, PacketEvents::ALL),
            Kept::Named(kept) if kept.len() == known.len() => {
                r.set("packets", Value::Boolean(true));
                (true, PacketEvents::ALL)
            }
            Kept::Named(kept) => {
                let names: Vec<&'static str> = kept.iter().map(|&i| known[i]).collect();
                r.set("packets", names_value(&names));
                let kept = PacketEvent::ALL
                    .into_iter()
                    .filter(|e| names.contains(&e.name()));
                (true, kept.collect())
            }
        },
    )
}

/// `metrics`: `true` (every metric), `false`, or the list of the metrics to keep, by their names
/// in `metrics.parquet` (`["rtt", "timeout"]`), resolved in the order of the protocols'
/// declarations.
fn read_metrics(r: &mut Section<'_, '_>) -> Result<(bool, MetricSelection)> {
    let known: Vec<&'static str> = ProtocolConfig::declared_metrics()
        .iter()
        .map(|m| m.name)
        .collect();
    Ok(
        match read_kept(r, "metrics", || known.clone(), "metric", false)? {
            Kept::Off => (false, MetricSelection::All),
            Kept::All => (true, MetricSelection::All),
            Kept::Named(kept) => {
                let names: Vec<&'static str> = kept.iter().map(|&i| known[i]).collect();
                r.set("metrics", names_value(&names));
                (true, MetricSelection::Named(names))
            }
        },
    )
}
