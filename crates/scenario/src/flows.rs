//! The `[[flow]]` tables: protocol, endpoints, schedule and protocol parameters, expanded
//! `count` times with `{i}` substituted in `name`, `from` and `to`. What comes out is a
//! configuration per flow; the simulator builds the endpoints from it.

use fairstream_core::{Bitrate, DataSize, Duration, Instant};
use fairstream_proto::tcp::{TcpConfig, TcpSinkConfig, TcpVariant};
use fairstream_proto::{CbrConfig, OnOff, ProtocolConfig, TcpFlowConfig};
use fairstream_sim::routing::Routes;
use fairstream_sim::{FlowSpec, FlowStart, Network};
use toml::Value;
use toml::de::DeValue;

use crate::error::ScenarioError;
use crate::reader::{Result, Section};
use crate::tcp_control::read_control;
use crate::topology::NodeIndex;

const COMMON_KEYS: &[&str] = &[
    "name", "protocol", "from", "to", "start", "stop", "count", "overhead",
];
const TCP_KEYS: &[&str] = &[
    "variant",
    "preset",
    "window",
    "max_cwnd",
    "initial_window",
    "initial_ssthresh",
    "min_rto",
    "max_rto",
    "initial_rto",
    "tick",
    "delayed_ack",
    "packets",
    "syn",
    "limited_transmit",
    "max_burst",
    "control",
    "k",
    "l",
    "alpha",
    "beta",
];
const CBR_KEYS: &[&str] = &["rate", "on", "off", "random"];
const SHARED_KEYS: &[&str] = &["packet_size"];

/// All keys a flow table may hold.
pub(crate) fn flow_keys() -> Vec<&'static str> {
    [COMMON_KEYS, TCP_KEYS, CBR_KEYS, SHARED_KEYS].concat()
}

/// Reads one `[[flow]]` table and adds its `count` flows to `net`.
pub(crate) fn read_flow(
    f: &mut Section<'_, '_>,
    index: &NodeIndex,
    routes: &Routes,
    net: &mut Network,
    end: Duration,
    warnings: &mut Vec<ScenarioError>,
) -> Result<()> {
    let protocol = f.choice("protocol", &["tcp", "cbr"], "tcp")?;
    let foreign: &[&str] = if protocol == "tcp" {
        CBR_KEYS
    } else {
        TCP_KEYS
    };
    if let Some(key) = foreign.iter().find(|k| f.raw(k).is_some()) {
        return Err(f.error(key, format!("does not apply to {protocol} flows")));
    }
    let count = f.int_or("count", 1, 1_000_000, 1)? as usize;
    let first = net.flows.len();
    let name = f.opt_str("name", "a flow name")?.map_or_else(
        || format!("{protocol}{first}{}", if count > 1 { "_{i}" } else { "" }),
        str::to_string,
    );
    f.out.insert("name".into(), Value::String(name.clone()));
    let from = f.req_str("from", "a node name")?;
    let to = f.req_str("to", "a node name")?;
    let start = read_start(f)?;
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
    let config = read_protocol(f, protocol, warnings)?;
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
                        "unknown node `{name}`; nodes include: {}{}",
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
        let mut spec = FlowSpec {
            name: subst(&name),
            src,
            dst,
            protocol: config.clone(),
            start,
            stop: stop_at,
            overhead,
            route: None,
        };
        match net.route(routes, &spec) {
            Ok(route) => spec.route = Some(route),
            Err((a, b)) => {
                let (na, nb) = (&net.nodes[a.index()], &net.nodes[b.index()]);
                return Err(f.error(
                    "to",
                    format!("no route from `{na}` to `{nb}`; add links that join them"),
                ));
            }
        }
        net.add_flow(spec);
    }
    Ok(())
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
                    f.out.insert("start".into(), Value::Table(t.out));
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

/// Reads the protocol parameters of a flow table (`protocol` already read).
fn read_protocol(
    f: &mut Section<'_, '_>,
    protocol: &str,
    warnings: &mut Vec<ScenarioError>,
) -> Result<ProtocolConfig> {
    if protocol == "cbr" {
        let rate: Bitrate = f.req_unit("rate")?;
        let packet_size: DataSize = f.unit_or("packet_size", DataSize::bytes(1000))?;
        if packet_size.as_bytes() < 28 {
            return Err(f.error(
                "packet_size",
                "a UDP packet is at least 28 bytes (its IP and UDP headers)",
            ));
        }
        let on: Option<Duration> = f.opt_unit("on")?;
        let off: Option<Duration> = f.opt_unit("off")?;
        let on_off = match (on, off) {
            (None, None) => None,
            (Some(on), Some(off)) if !on.is_zero() => Some(OnOff { on, off }),
            (Some(_), Some(_)) => {
                return Err(f.error("on", "the on period must be longer than zero"));
            }
            _ => {
                return Err(f.error(
                    if on.is_none() { "on" } else { "off" },
                    "give both `on` and `off`, or neither",
                ));
            }
        };
        let random = f.bool_or("random", false)?;
        return Ok(ProtocolConfig::Cbr(CbrConfig {
            rate,
            packet_size,
            start: Instant::ZERO,
            stop: None,
            on_off,
            random,
        }));
    }
    let preset = f.choice("preset", &["ns2", "modern"], "ns2")?;
    let base = if preset == "modern" {
        TcpConfig::default().modern()
    } else {
        TcpConfig::default()
    };
    let variant = match f.choice("variant", &["newreno", "reno"], "newreno")? {
        "reno" => TcpVariant::Reno,
        _ => TcpVariant::NewReno,
    };
    let control = read_control(f, warnings)?;
    let packet_size: DataSize = f.unit_or("packet_size", base.packet_size)?;
    if packet_size.as_bytes() <= 40 {
        return Err(f.error(
            "packet_size",
            "a TCP data packet is larger than its 40-byte header",
        ));
    }
    let window = f.int_or("window", 1, 1 << 30, i64::from(base.window))? as u32;
    let max_cwnd = f.opt_int("max_cwnd", 1, 1 << 30)?.map(|n| n as u32);
    let initial_window =
        f.int_or("initial_window", 1, 1 << 20, i64::from(base.initial_window))? as u32;
    let initial_ssthresh = f.opt_int("initial_ssthresh", 2, 1 << 30)?.map(|n| n as u32);
    let min_rto = f.unit_or("min_rto", base.min_rto)?;
    let max_rto = f.unit_or("max_rto", base.max_rto)?;
    let initial_rto = f.unit_or("initial_rto", base.initial_rto)?;
    let tick = f.unit_or("tick", base.tick)?;
    if tick.is_zero() {
        return Err(f.error("tick", "the timer tick must be longer than zero"));
    }
    if max_rto < min_rto {
        return Err(f.error("max_rto", format!("must not be below min_rto ({min_rto})")));
    }
    let packets = f.opt_int("packets", 1, i64::MAX)?.map(|n| n as u64);
    let syn = f.bool_or("syn", base.syn)?;
    let limited_transmit = f.bool_or("limited_transmit", base.limited_transmit)?;
    let max_burst = f.int_or("max_burst", 0, 1 << 20, i64::from(base.max_burst))? as u32;
    let delayed_ack = match f.raw("delayed_ack").map(|v| v.get_ref()) {
        None | Some(DeValue::Boolean(false)) => {
            f.out.insert("delayed_ack".into(), Value::Boolean(false));
            None
        }
        Some(DeValue::Boolean(true)) => {
            f.out
                .insert("delayed_ack".into(), Value::String("100ms".into()));
            Some(Duration::from_millis(100))
        }
        Some(_) => f.opt_unit("delayed_ack")?,
    };
    let config = TcpConfig {
        variant,
        control,
        packet_size,
        window,
        max_cwnd,
        initial_window,
        initial_ssthresh,
        syn,
        limited_transmit,
        max_burst,
        tick,
        min_rto,
        max_rto,
        initial_rto,
        start: Instant::ZERO,
        stop: None,
        packets,
    };
    Ok(ProtocolConfig::Tcp(TcpFlowConfig {
        sender: config,
        sink: TcpSinkConfig { delayed_ack },
    }))
}
