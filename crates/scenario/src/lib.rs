//! Scenario files: a TOML description of a run (topology, flows, duration, seed, recorders)
//! turned into a [`fairstream_sim::Network`], with every field checked.
//!
//! A bad file gets a [`ScenarioError`] that names the file, the line and column, the field
//! (as a dotted path such as `topology.link[2].rate`) and the expected form. A good file
//! also yields its *resolved* form: the same scenario with every default filled in, which
//! loads back to the identical run.
//!
//! - [`reader`](crate::reader): typed, checked access to one TOML table;
//! - `topology`: `[topology]`, explicit or from a helper (dumbbell, parking lot, chain);
//! - `elements`: queue disciplines and loss models of a link;
//! - `flows`: the `[[flow]]` tables (what every flow has);
//! - `protocols`: one reader file per protocol, returning its configuration;
//! - `record`: the `[record]` table;
//! - `engine`: the `[engine]` table (tie rule, delay perturbation).
//!
//! ```
//! let text = r#"
//! name = "one-link"
//! duration = "2s"
//! [topology]
//! nodes = ["a", "b"]
//! [[topology.link]]
//! between = ["a", "b"]
//! rate = "10Mbps"
//! delay = "5ms"
//! [[flow]]
//! protocol = "cbr"
//! from = "a"
//! to = "b"
//! rate = "1Mbps"
//! "#;
//! let scenario = fairstream_scenario::load(text, "one-link.toml", None).unwrap();
//! assert_eq!(scenario.network.links.len(), 2);
//! assert!(scenario.resolved.contains("packet_size = \"1000B\""));
//! let err = fairstream_scenario::load(&text.replace("10Mbps", "10 Mbs"), "one-link.toml", None).unwrap_err();
//! assert_eq!(err.to_string(), "one-link.toml:8:8: field `topology.link[0].rate`: `10 Mbs` is not a bit rate; expected a form such as \"11Mbps\", \"1.5 Mbit/s\" or \"512kbps\"");
//! ```

mod elements;
mod engine;
mod error;
mod flows;
pub mod kernel;
mod limits;
mod protocols;
mod reader;
mod record;
mod schedule;
mod topology;
mod transport;

use fairstream_core::Duration;
use fairstream_sim::routing::Routes;
use fairstream_sim::{Estimate, Network, Part};
use toml::Value;
use toml::de::DeTable;

pub use error::ScenarioError;
pub use kernel::{KernelFlow, LinuxTcpConfig};
pub use limits::MemoryLimit;

use crate::error::Source;
use crate::reader::Section;

/// A checked scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario's name.
    pub name: String,
    /// What to simulate.
    pub network: Network,
    /// The scenario with every default filled in, as TOML.
    pub resolved: String,
    /// What is allowed but probably not meant (e.g. a control that is not TCP-compatible),
    /// located like errors; each message starts with "warning:".
    pub warnings: Vec<ScenarioError>,
    /// The memory and events the run is estimated to need.
    pub estimate: Estimate,
    /// The `protocol = "linux-tcp"` flows: the kernel's TCP, which only the emulator runs
    /// (not in `network.flows`).
    pub kernel_flows: Vec<KernelFlow>,
    /// Where the fields behind each part of the estimate are.
    part_fields: limits::PartFields,
    /// Where an error about the whole file points.
    top: ScenarioError,
}

impl Scenario {
    /// Refuses a simulation of a scenario with a `linux-tcp` flow, at the first one's
    /// `protocol` field.
    pub fn check_simulable(&self) -> Result<(), ScenarioError> {
        match self.kernel_flows.first() {
            Some(k) => Err(k.at.clone()),
            None => Ok(()),
        }
    }

    /// Refuses the run, before it starts, if its estimated memory exceeds `limit`: the error
    /// points at the field behind the largest part of the estimate (the packet trace, the
    /// interval series, a flow's count, the topology's hosts) and says what to change.
    pub fn check_memory(&self, limit: &MemoryLimit) -> Result<(), ScenarioError> {
        match limits::check(&self.estimate, limit, &self.part_fields, &self.top) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Parses and checks `text` (read from `file`); `seed` overrides the file's seed.
pub fn load(text: &str, file: &str, seed: Option<u64>) -> Result<Scenario, ScenarioError> {
    let src = Source { file, text };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        src.error(span, "", format!("invalid TOML: {}", e.message()))
    })?;
    let mut top = Section::new(
        src,
        root.get_ref(),
        root.span(),
        "",
        &[
            "name",
            "description",
            "duration",
            "seed",
            "topology",
            "flow",
            "record",
            "engine",
        ],
    )?;
    let name = top.req_str("name", "a scenario name")?.to_string();
    top.opt_str("description", "a description")?;
    let duration: Duration = top.req_unit("duration")?;
    if duration.is_zero() {
        return Err(top.error("duration", "a run must last longer than zero"));
    }
    let file_seed = top.opt_int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let seed = seed.unwrap_or(file_seed);
    if seed > i64::MAX as u64 {
        return Err(src.error(
            0..0,
            "seed",
            format!(
                "the seed override {seed} is above {}, the largest a scenario holds",
                i64::MAX
            ),
        ));
    }
    top.set("seed", Value::Integer(seed as i64));

    let mut net = Network::new(duration, seed);
    let Some(mut topo) = top.opt_table("topology", TOPOLOGY_KEYS)? else {
        return Err(top.error("topology", "missing table; expected [topology] with nodes and links, or kind = \"dumbbell\" | \"parking_lot\" | \"chain\""));
    };
    let index = topology::read_topology(&mut topo, &mut net)?;
    let size_key = ["hosts", "nodes", "routers"]
        .into_iter()
        .find(|k| topo.raw(k).is_some());
    let topology_at = size_key.map_or_else(|| top.error("topology", ""), |k| topo.error(k, ""));
    top.set("topology", Value::Table(topo.take_resolved()));

    let mut record_section = top.opt_table("record", record::RECORD_KEYS)?;
    let routes = Routes::compute(net.nodes.len(), &net.link_ends());
    let flow_tables = top.tables("flow", &flows::flow_keys())?;
    if flow_tables.is_empty() {
        return Err(top.error("flow", "no flows; expected at least one [[flow]] table"));
    }
    let mut resolved_flows = Vec::new();
    let mut warnings = Vec::new();
    let mut part_fields = limits::PartFields::default();
    let mut most_flows = (0, top.error("flow", ""));
    let mut book = flows::FlowBook::default();
    for mut f in flow_tables {
        let before = net.flows.len();
        flows::read_flow(
            &mut f,
            &index,
            &routes,
            &mut net,
            duration,
            &mut warnings,
            &mut book,
        )?;
        if net.flows.len() - before > most_flows.0 {
            most_flows = (net.flows.len() - before, f.error("count", ""));
        }
        resolved_flows.push(Value::Table(f.take_resolved()));
    }
    part_fields.at.push((Part::Flows, most_flows.1));
    top.set("flow", Value::Array(resolved_flows));

    let record_out = record::read_record(record_section.as_mut(), &mut net)?;
    let in_record = |key: &str| match &record_section {
        Some(r) if key != "interval" || r.raw(key).is_some() => r.error(key, ""),
        Some(_) => top.error("duration", ""),
        None => top.error("record", ""),
    };
    part_fields.at.push((Part::Trace, in_record("packets")));
    part_fields.at.push((Part::Metrics, in_record("metrics")));
    part_fields.at.push((Part::Series, in_record("interval")));
    top.set("record", Value::Table(record_out));

    let mut engine_section = top.opt_table("engine", engine::ENGINE_KEYS)?;
    let engine_out = engine::read_engine(engine_section.as_mut(), &mut net)?;
    top.set("engine", Value::Table(engine_out));

    for part in [Part::Nodes, Part::Links, Part::Packets] {
        part_fields.at.push((part, topology_at.clone()));
    }

    let resolved = toml::to_string(&top.take_resolved())
        .map_err(|e| src.error(0..0, "", format!("cannot print the resolved scenario: {e}")))?;
    Ok(Scenario {
        name,
        estimate: Estimate::of(&net),
        network: net,
        kernel_flows: book.kernel,
        resolved,
        warnings,
        part_fields,
        top: src.error(0..0, "", ""),
    })
}

/// Keys `[topology]` may hold (explicit form and every helper).
const TOPOLOGY_KEYS: &[&str] = &[
    "kind",
    "nodes",
    "link",
    "hosts",
    "access",
    "left_access",
    "right_access",
    "bottleneck",
    "routers",
    "backbone",
];

#[cfg(test)]
mod docs_tests {
    //! docs/scenarios.md documents every key the reader accepts.

    const DOC: &str = include_str!("../../../docs/scenarios.md");

    fn undocumented(keys: &[&str]) -> Vec<String> {
        keys.iter()
            .filter(|k| !DOC.contains(&format!("`{k}`")))
            .map(|k| (*k).to_string())
            .collect()
    }

    #[test]
    fn every_key_is_in_the_scenario_docs() {
        let mut keys = crate::flows::flow_keys();
        keys.extend(crate::record::RECORD_KEYS);
        keys.extend(crate::engine::ENGINE_KEYS);
        keys.extend(crate::elements::QUEUE_KEYS.iter().flat_map(|k| k.iter()));
        assert_eq!(undocumented(&keys), Vec::<String>::new());
    }
}
