//! The `[topology]` section: explicit nodes and links, or a helper (dumbbell, parking lot,
//! chain) that expands into them. Every link parameter is read by [`link_params`].

use std::collections::HashMap;

use fairstream_core::{Bitrate, Duration, NodeId, RateSchedule, did_you_mean};
use fairstream_sim::{LinkSpec, Network};
use toml::Value;

use crate::elements::{read_loss, read_queue};
use crate::reader::{Result, Section};
use crate::schedule::read_schedule;

/// Keys a link-parameter table may hold.
pub(crate) const LINK_PARAM_KEYS: &[&str] = &["rate", "delay", "queue", "loss", "schedule"];

/// The parameters shared by both directions of a link.
#[derive(Clone, Debug)]
pub(crate) struct LinkParams {
    capacity: RateSchedule,
    delay: Duration,
    queue: fairstream_net::QueueConfig,
    error: fairstream_net::ErrorModel,
}

impl LinkParams {
    fn spec(&self, from: NodeId, to: NodeId) -> LinkSpec {
        LinkSpec {
            name: None,
            from,
            to,
            capacity: self.capacity.clone(),
            delay: self.delay,
            queue: self.queue.clone(),
            error: self.error.clone(),
        }
    }
}

/// Reads rate, delay, queue, loss and schedule from `s` (whose other keys the caller checked).
pub(crate) fn link_params(s: &mut Section<'_, '_>) -> Result<LinkParams> {
    let rate: Bitrate = s.req_unit("rate")?;
    let delay: Duration = s.req_unit("delay")?;
    let capacity = read_schedule(s, rate)?;
    let queue = read_queue(s, rate)?;
    let error = read_loss(s)?;
    Ok(LinkParams {
        capacity,
        delay,
        queue,
        error,
    })
}

/// Most hosts a helper builds (a dumbbell's on each side, a chain's nodes, a parking lot's
/// in all): the node names, links and routes of a topology grow linearly with them.
const MAX_HOSTS: usize = 100_000;

/// Node names to ids.
pub(crate) type NodeIndex = HashMap<String, NodeId>;

/// Reads `[topology]` into `net`; returns the node index and the resolved table.
pub(crate) fn read_topology(top: &mut Section<'_, '_>, net: &mut Network) -> Result<NodeIndex> {
    let kind = top.choice(
        "kind",
        &["explicit", "dumbbell", "parking_lot", "chain"],
        "explicit",
    )?;
    // Each kind reads its own keys: another kind's would be ignored in silence.
    let (keys, name): (&[&str], _) = match kind {
        "dumbbell" => (
            &[
                "hosts",
                "access",
                "left_access",
                "right_access",
                "bottleneck",
            ],
            "a dumbbell",
        ),
        "parking_lot" => (&["routers", "hosts", "access", "backbone"], "a parking lot"),
        "chain" => (&["nodes", "link"], "a chain"),
        _ => (
            &["nodes", "link"],
            "an explicit topology (set `kind` for a helper)",
        ),
    };
    let others: Vec<&str> = crate::TOPOLOGY_KEYS
        .iter()
        .copied()
        .filter(|k| *k != "kind" && !keys.contains(k))
        .collect();
    top.none_of(
        &others,
        &format!("{name}, whose keys are {}", keys.join(", ")),
    )?;
    match kind {
        "dumbbell" => dumbbell(top, net),
        "parking_lot" => parking_lot(top, net),
        "chain" => chain(top, net),
        _ => explicit(top, net),
    }
}

fn add_nodes(net: &mut Network, index: &mut NodeIndex, names: impl IntoIterator<Item = String>) {
    for name in names {
        let id = net.add_node(name.clone());
        index.insert(name, id);
    }
}

fn duplex(net: &mut Network, a: NodeId, b: NodeId, p: &LinkParams) {
    net.add_link(p.spec(a, b));
    net.add_link(p.spec(b, a));
}

/// Reads the sub-table `key` as link parameters and records its resolved form.
fn params_table(top: &mut Section<'_, '_>, key: &str) -> Result<Option<LinkParams>> {
    let Some(mut t) = top.opt_table(key, LINK_PARAM_KEYS)? else {
        return Ok(None);
    };
    let p = link_params(&mut t)?;
    top.set(key, Value::Table(t.take_resolved()));
    Ok(Some(p))
}

/// Like [`params_table`], for a table that must be there.
fn required_params_table(top: &mut Section<'_, '_>, key: &str) -> Result<LinkParams> {
    params_table(top, key)?.ok_or_else(|| {
        top.error(
            key,
            "missing table; expected { rate = \"…\", delay = \"…\" }",
        )
    })
}

fn dumbbell(top: &mut Section<'_, '_>, net: &mut Network) -> Result<NodeIndex> {
    let n = top.int_or("hosts", 1, MAX_HOSTS as i64, 1)? as usize;
    let access = params_table(top, "access")?;
    let left = params_table(top, "left_access")?.or_else(|| access.clone());
    let right = params_table(top, "right_access")?.or_else(|| access.clone());
    let (Some(left), Some(right)) = (left, right) else {
        return Err(top.error("access", "missing table; expected access = { rate = \"…\", delay = \"…\" } (or left_access and right_access)"));
    };
    let bottleneck = required_params_table(top, "bottleneck")?;
    let mut index = NodeIndex::new();
    add_nodes(net, &mut index, (0..n).map(|i| format!("left{i}")));
    add_nodes(net, &mut index, (0..n).map(|i| format!("right{i}")));
    add_nodes(
        net,
        &mut index,
        ["router_left".to_string(), "router_right".to_string()],
    );
    let (rl, rr) = (index["router_left"], index["router_right"]);
    duplex(net, rl, rr, &bottleneck);
    for i in 0..n {
        duplex(net, index[&format!("left{i}")], rl, &left);
        duplex(net, rr, index[&format!("right{i}")], &right);
    }
    Ok(index)
}

fn parking_lot(top: &mut Section<'_, '_>, net: &mut Network) -> Result<NodeIndex> {
    let routers = top.int_or("routers", 2, 10_000, 3)? as usize;
    let hosts = top.int_or("hosts", 1, 10_000, 1)? as usize;
    if routers * hosts > MAX_HOSTS {
        return Err(top.error(
            "hosts",
            format!(
                "{routers} routers × {hosts} hosts is {} hosts, more than the {MAX_HOSTS} a topology helper builds",
                routers * hosts
            ),
        ));
    }
    let backbone = required_params_table(top, "backbone")?;
    let access = required_params_table(top, "access")?;
    let mut index = NodeIndex::new();
    add_nodes(net, &mut index, (0..routers).map(|r| format!("r{r}")));
    add_nodes(
        net,
        &mut index,
        (0..routers).flat_map(|r| (0..hosts).map(move |k| format!("h{r}_{k}"))),
    );
    for r in 0..routers - 1 {
        duplex(
            net,
            index[&format!("r{r}")],
            index[&format!("r{}", r + 1)],
            &backbone,
        );
    }
    for r in 0..routers {
        for k in 0..hosts {
            duplex(
                net,
                index[&format!("h{r}_{k}")],
                index[&format!("r{r}")],
                &access,
            );
        }
    }
    Ok(index)
}

fn chain(top: &mut Section<'_, '_>, net: &mut Network) -> Result<NodeIndex> {
    let nodes = top.int_or("nodes", 2, MAX_HOSTS as i64, 2)? as usize;
    let link = required_params_table(top, "link")?;
    let mut index = NodeIndex::new();
    add_nodes(net, &mut index, (0..nodes).map(|i| format!("n{i}")));
    for i in 0..nodes - 1 {
        duplex(
            net,
            index[&format!("n{i}")],
            index[&format!("n{}", i + 1)],
            &link,
        );
    }
    Ok(index)
}

fn explicit(top: &mut Section<'_, '_>, net: &mut Network) -> Result<NodeIndex> {
    let Some(names) = top.opt_str_list("nodes")? else {
        return Err(top.error(
            "nodes",
            "missing field; expected a list of node names such as [\"A\", \"B\"]",
        ));
    };
    let mut index = NodeIndex::new();
    for (name, span) in &names {
        if name.is_empty() || index.contains_key(*name) {
            return Err(top.src.error(
                span.clone(),
                &top.field("nodes"),
                format!("node name `{name}` is empty or repeated"),
            ));
        }
        add_nodes(net, &mut index, [(*name).to_string()]);
    }
    let mut keys = vec!["between", "from", "to", "name"];
    keys.extend_from_slice(LINK_PARAM_KEYS);
    let mut resolved = Vec::new();
    let mut link_names = std::collections::HashSet::new();
    for mut link in top.tables("link", &keys)? {
        let node = |link: &mut Section<'_, '_>, key: &str, name: &str, span| {
            index.get(name).copied().ok_or_else(|| {
                link.src.error(
                    span,
                    &link.field(key),
                    format!(
                        "unknown node `{name}`; {}nodes are: {}",
                        did_you_mean(name, names.iter().map(|n| n.0)),
                        names.iter().map(|n| n.0).collect::<Vec<_>>().join(", ")
                    ),
                )
            })
        };
        let (a, b, both) = if let Some(pair) = link.opt_str_list("between")? {
            if pair.len() != 2 || link.raw("from").is_some() || link.raw("to").is_some() {
                return Err(link.error(
                    "between",
                    "expected two node names, [\"A\", \"B\"], and no `from`/`to`",
                ));
            }
            (
                node(&mut link, "between", pair[0].0, pair[0].1.clone())?,
                node(&mut link, "between", pair[1].0, pair[1].1.clone())?,
                true,
            )
        } else {
            let from = link.req_str("from", "a node name (or use between = [\"A\", \"B\"])")?;
            let to = link.req_str("to", "a node name")?;
            let fs = link.raw("from").map(|v| v.span()).unwrap_or_default();
            let ts = link.raw("to").map(|v| v.span()).unwrap_or_default();
            (
                node(&mut link, "from", from, fs)?,
                node(&mut link, "to", to, ts)?,
                false,
            )
        };
        if a == b {
            return Err(link.error(
                if both { "between" } else { "to" },
                "a link must join two different nodes",
            ));
        }
        let name = link.opt_str("name", "a link name")?.map(str::to_string);
        if name.as_deref().is_some_and(str::is_empty) {
            return Err(link.error("name", "a link's name must not be empty"));
        }
        let p = link_params(&mut link)?;
        let mut spec = p.spec(a, b);
        spec.name = name.clone();
        let first = net.add_link(spec);
        if both {
            let mut back = p.spec(b, a);
            back.name = name.as_ref().map(|n| format!("{n}:reverse"));
            net.add_link(back);
        }
        // A link is chosen by its name (`record.pcap`, `record.link_series`) and reported by it:
        // two of one name would be one in every table.
        for id in first.index()..net.links().len() {
            let shown = net.link_name(fairstream_core::LinkId(id as u32));
            if !link_names.insert(shown.clone()) {
                let key = if name.is_some() {
                    "name"
                } else if both {
                    "between"
                } else {
                    "to"
                };
                return Err(link.error(
                    key,
                    format!(
                        "a second link named `{shown}`; links are named `FROM->TO` unless they say \
                         otherwise, so give one of them a `name` of its own"
                    ),
                ));
            }
        }
        resolved.push(Value::Table(link.take_resolved()));
    }
    if resolved.is_empty() {
        return Err(top.error(
            "link",
            "no links; expected at least one [[topology.link]] table",
        ));
    }
    top.set("link", Value::Array(resolved));
    Ok(index)
}
