//! The `[[flow]]` tables: protocol, endpoints, schedule and protocol parameters, expanded
//! `count` times with `{i}` substituted in `name`, `from` and `to`. What comes out is a
//! configuration per flow; the simulator builds the endpoints from it.

use fairstream_core::{Duration, Instant, did_you_mean};
use fairstream_proto::ProtocolConfig;
use fairstream_sim::{FlowSpec, FlowStart, Network, NetworkError};
use toml::Value;
use toml::de::{DeTable, DeValue};

use crate::error::ScenarioError;
use crate::kernel::{self, KernelFlow, LINUX_TCP, LinuxTcpConfig};
use crate::protocols::{ProtocolReader, READERS};
use crate::reader::{Result, Section};
use crate::topology::NodeIndex;

pub(crate) const COMMON_KEYS: &[&str] = &[
    "name", "protocol", "from", "to", "start", "stop", "count", "overhead",
];
const SHARED_KEYS: &[&str] = &["packet_size"];

/// Most flows a scenario holds, all `[[flow]]` tables together.
const MAX_FLOWS: usize = 1_000_000;

/// All keys a flow table may hold, sorted: every protocol's [`protocol_keys`] together, gathered
/// once per process (sorting them took a tenth of reading a small scenario, which a sweep does
/// twice per point).
pub(crate) fn flow_keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let protocols = READERS.iter().map(|r| r.name).chain([LINUX_TCP]);
        let mut keys: Vec<&'static str> = protocols.flat_map(protocol_keys).flatten().collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    })
}

/// The keys a flow of `protocol` (a reader's name or `linux-tcp`) takes, sorted; None for a name
/// that is neither.
fn protocol_keys(protocol: &str) -> Option<Vec<&'static str>> {
    let mut keys = [COMMON_KEYS, SHARED_KEYS].concat();
    if protocol == LINUX_TCP {
        keys.extend(kernel::KEYS);
    } else {
        keys.extend(crate::protocols::abr::KEYS);
        keys.extend((READERS.iter().find(|r| r.name == protocol)?.keys)());
    }
    keys.sort_unstable();
    keys.dedup();
    Some(keys)
}

/// The keys a flow of the table's protocol takes, sorted, and what it is ("a cbr flow"); None
/// when the protocol is no name a reader knows (its own error says so). A flow without
/// `protocol` is a TCP flow. For an unknown field's error: a flow table may hold any protocol's
/// fields (another protocol's is refused as not applying), but a flow takes its own.
pub(crate) fn own_keys(table: &DeTable<'_>) -> Option<(String, Vec<&'static str>)> {
    let protocol = match table.get("protocol").map(|v| v.get_ref()) {
        None => READERS[0].name,
        Some(DeValue::String(s)) => s.as_ref(),
        Some(_) => return None,
    };
    Some((format!("a {protocol} flow"), protocol_keys(protocol)?))
}

/// Reads one `[[flow]]` table and adds its `count` flows to `net`.
pub(crate) fn read_flow(
    f: &mut Section<'_, '_>,
    index: &NodeIndex,
    net: &mut Network,
    end: Duration,
    warnings: &mut Vec<ScenarioError>,
    book: &mut FlowBook,
) -> Result<()> {
    let FlowBook { names, kernel } = book;
    let is_kernel = matches!(f.raw("protocol").map(|v| v.get_ref()), Some(DeValue::String(s)) if s == LINUX_TCP);
    let reader = if is_kernel {
        check_own_keys(f, LINUX_TCP, kernel::KEYS)?;
        f.set("protocol", Value::String(LINUX_TCP.to_string()));
        None
    } else {
        Some(choose_reader(f)?)
    };
    let protocol = reader.map_or(LINUX_TCP, |r| r.name);
    let count = f.int_or("count", 1, MAX_FLOWS as i64, 1)? as usize;
    let first = net.flows().len() + kernel.len();
    if first + count > MAX_FLOWS {
        return Err(f.error(
            "count",
            format!(
                "{count} more flows would make {} in all, more than the {MAX_FLOWS} a scenario holds",
                first + count
            ),
        ));
    }
    let name = f.opt_str("name", "a flow name")?.map_or_else(
        || format!("{protocol}{first}{}", if count > 1 { "_{i}" } else { "" }),
        str::to_string,
    );
    f.set("name", Value::String(name.clone()));
    let from = f.req_str("from", "a node name")?;
    let to = f.req_str("to", "a node name")?;
    let start = read_start(f)?;
    // Not an error: a run shortened for a quick look (a reproduction's `--quick`, a sweep over
    // `duration`) may end before a late flow's start. But never silently.
    let latest = start.latest().saturating_since(Instant::ZERO);
    if latest >= end {
        warnings.push(f.error(
            "start",
            format!(
                "{latest} is not before the end of the run ({end}): {} never send",
                if matches!(start, FlowStart::At(_)) {
                    "it will"
                } else {
                    "some of its draws"
                }
            ),
        ));
    }
    let stop: Option<Duration> = f.opt_unit("stop")?;
    if let Some(stop) = stop
        && stop > end
    {
        return Err(f.error(
            "stop",
            format!("{stop} is after the end of the run ({end})"),
        ));
    }
    let overhead: Duration = f.unit_or("overhead", Duration::ZERO)?;
    let config = match reader {
        Some(reader) => {
            let config = (reader.read)(f, warnings)?;
            Flavour::Simulated(Box::new(crate::protocols::abr::read(f, config)?))
        }
        None => {
            if !overhead.is_zero() {
                return Err(f.error(
                    "overhead",
                    "does not apply to linux-tcp flows (the kernel sends when it sends)",
                ));
            }
            Flavour::Kernel(kernel::read(f)?)
        }
    };
    let stop_at = stop.map(|d| Instant::ZERO + d);
    if stop_at.is_some_and(|s| s <= start.latest()) {
        return Err(f.error(
            "stop",
            format!(
                "a flow must stop after it starts (after {}, its latest start)",
                start.latest().saturating_since(Instant::ZERO)
            ),
        ));
    }
    for i in 0..count {
        let subst = |s: &str| s.replace("{i}", &i.to_string());
        let node = |key: &str, name: String| {
            index.get(&name).copied().ok_or_else(|| {
                let mut known: Vec<&String> = index.keys().collect();
                known.sort();
                let shown: Vec<&str> = known.iter().take(12).map(|s| s.as_str()).collect();
                f.error(
                    key,
                    format!(
                        "unknown node `{name}`; {}nodes include: {}{}",
                        did_you_mean(&name, known.iter().map(|s| s.as_str())),
                        shown.join(", "),
                        if known.len() > 12 { ", …" } else { "" }
                    ),
                )
            })
        };
        let src = node("from", subst(from))?;
        let dst = node("to", subst(to))?;
        if src == dst {
            return Err(f.error(
                "to",
                format!("the flow starts and ends at node `{}`", subst(to)),
            ));
        }
        let flow_name = subst(&name);
        if !names.insert(flow_name.clone()) {
            return Err(f.error(
                "name",
                format!(
                    "a second flow named `{flow_name}`; flow names must be unique (use `{{i}}` in the name of a flow with a count)"
                ),
            ));
        }
        match &config {
            Flavour::Simulated(c) => {
                let spec = FlowSpec {
                    name: flow_name,
                    src,
                    dst,
                    protocol: (**c).clone(),
                    start,
                    stop: stop_at,
                    overhead,
                };
                net.add_flow(spec).map_err(|e| route_error(f, e))?;
            }
            Flavour::Kernel(tcp) => {
                // Routed as a flow whose receiver answers (TCP's ACKs), and kept apart.
                let route = net
                    .find_route(&flow_name, src, dst, true)
                    .map_err(|e| route_error(f, e))?;
                kernel.push(KernelFlow {
                    name: flow_name,
                    order: net.flows().len() + kernel.len(),
                    src,
                    dst,
                    start,
                    stop: stop_at,
                    route,
                    tcp: tcp.clone(),
                    at: f.error(
                        "protocol",
                        "a linux-tcp flow runs the kernel's TCP, which only `fairstream emulate` \
                         runs; the simulator cannot",
                    ),
                });
            }
        }
    }
    Ok(())
}

/// What the flow tables read so far hold beside the network: the flow names taken, and the
/// kernel TCP flows (kept apart from the simulated ones).
#[derive(Default)]
pub(crate) struct FlowBook {
    pub(crate) names: std::collections::HashSet<String>,
    pub(crate) kernel: Vec<KernelFlow>,
}

/// A flow's configuration: a simulated protocol's, or the kernel's TCP.
enum Flavour {
    Simulated(Box<ProtocolConfig>),
    Kernel(LinuxTcpConfig),
}

/// Refuses any key of another protocol that `own` does not share.
fn check_own_keys(f: &Section<'_, '_>, protocol: &str, own: &[&str]) -> Result<()> {
    let own: Vec<&str> = [own, SHARED_KEYS].concat();
    for other in READERS.iter().map(|r| (r.keys)()) {
        if let Some(key) = other
            .into_iter()
            .find(|k| !own.contains(k) && f.raw(k).is_some())
        {
            return Err(f.error(key, format!("does not apply to {protocol} flows")));
        }
    }
    Ok(())
}

/// The reader of the flow's `protocol`, after checking that no key of another protocol is set.
fn choose_reader(f: &mut Section<'_, '_>) -> Result<&'static ProtocolReader> {
    let mut names: Vec<&'static str> = READERS.iter().map(|r| r.name).collect();
    names.push(LINUX_TCP);
    let protocol = f.choice("protocol", &names, names[0])?;
    let Some(reader) = READERS.iter().find(|r| r.name == protocol) else {
        return Err(f.error("protocol", "no reader for this protocol"));
    };
    let own = (reader.keys)();
    if let Some(key) = kernel::KEYS
        .iter()
        .find(|k| !own.contains(k) && f.raw(k).is_some())
    {
        return Err(f.error(key, format!("does not apply to {protocol} flows")));
    }
    for other in READERS.iter().filter(|r| r.name != protocol) {
        if let Some(key) = (other.keys)()
            .into_iter()
            .find(|k| !own.contains(k) && f.raw(k).is_some())
        {
            return Err(f.error(key, format!("does not apply to {protocol} flows")));
        }
    }
    Ok(reader)
}

/// Adds `spec` to `net`, which finds its route (the error names the nodes that cannot be
/// joined).
/// The scenario error for a flow the network cannot route, at its `to` line.
fn route_error(f: &Section<'_, '_>, e: NetworkError) -> ScenarioError {
    match e {
        NetworkError::NoRoute { from, to, .. } => f.error(
            "to",
            format!("no route from `{from}` to `{to}`; add links that join them"),
        ),
        e => f.error("to", e.to_string()),
    }
}

fn read_start(f: &mut Section<'_, '_>) -> Result<FlowStart> {
    match f.raw("start").map(|v| v.get_ref()) {
        Some(DeValue::Table(_)) => {
            let Some(mut t) = f.opt_table("start", &["uniform"])? else {
                return Ok(FlowStart::At(Instant::ZERO));
            };
            let range = t.opt_str_list("uniform")?.unwrap_or_default();
            let parse = |(s, _): &(&str, std::ops::Range<usize>)| s.parse::<Duration>();
            match range
                .iter()
                .map(parse)
                .collect::<std::result::Result<Vec<_>, _>>()
            {
                Ok(v) if v.len() == 2 && v[0] <= v[1] => {
                    f.set("start", Value::Table(t.take_resolved()));
                    Ok(FlowStart::Uniform(
                        Instant::ZERO + v[0],
                        Instant::ZERO + v[1],
                    ))
                }
                Ok(_) => Err(f.error(
                    "start",
                    "expected { uniform = [\"LOW\", \"HIGH\"] } with LOW <= HIGH",
                )),
                Err(e) => Err(f.error("start", e.to_string())),
            }
        }
        _ => Ok(FlowStart::At(
            Instant::ZERO + f.unit_or("start", Duration::ZERO)?,
        )),
    }
}
