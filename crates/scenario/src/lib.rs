//! Scenario files: a TOML description of a run (topology, flows, duration, seed, recorders)
//! turned into a [`fairstream_sim::Network`], with every field checked.
//!
//! A bad file gets a [`ScenarioError`] that names the file, the line and column, the field
//! (as a dotted path such as `topology.link[2].rate`) and the expected form. A good file
//! also yields its *resolved* form: the same scenario with every default filled in, which
//! loads back to the identical run.
//!
//! - [`reader`]: typed, checked access to one TOML table;
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
//! assert_eq!(scenario.network.links().len(), 2);
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

use fairstream_core::Duration;
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

/// The TOML parser's "duplicate key" with the key named (the text its error points at), as
/// the other errors name their field; None for any other message, or a span that is no key.
fn named_duplicate(message: &str, at: Option<&str>) -> Option<String> {
    let key = at?.trim();
    let plain = !key.is_empty() && key.len() <= 200 && !key.contains(['\n', '=', '[']);
    (message.trim_end() == "duplicate key" && plain).then(|| {
        format!(
            "duplicate key `{}`: each key and table is given once",
            fairstream_core::escape_controls(key)
        )
    })
}

/// Parses and checks `text` (read from `file`); `seed` overrides the file's seed.
pub fn load(text: &str, file: &str, seed: Option<u64>) -> Result<Scenario, ScenarioError> {
    let src = Source { file, text };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let message = named_duplicate(e.message(), text.get(span.clone()))
            .unwrap_or_else(|| e.message().to_string());
        src.error(span, "", format!("invalid TOML: {message}"))
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
    let flow_tables = top.tables_with_own_keys("flow", flows::flow_keys(), flows::own_keys)?;
    if flow_tables.is_empty() {
        return Err(top.error("flow", "no flows; expected at least one [[flow]] table"));
    }
    let mut resolved_flows = Vec::new();
    let mut warnings = Vec::new();
    let mut part_fields = limits::PartFields::default();
    let mut most_flows = (0, top.error("flow", ""));
    let mut book = flows::FlowBook::default();
    for mut f in flow_tables {
        let before = net.flows().len();
        flows::read_flow(&mut f, &index, &mut net, duration, &mut warnings, &mut book)?;
        if net.flows().len() - before > most_flows.0 {
            most_flows = (net.flows().len() - before, f.error("count", ""));
        }
        resolved_flows.push(Value::Table(f.take_resolved()));
    }
    part_fields.at.push((Part::Flows, most_flows.1));
    top.set("flow", Value::Array(resolved_flows));

    let record_out = record::read_record(record_section.as_mut(), &top, &mut net)?;
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
pub(crate) const TOPOLOGY_KEYS: &[&str] = &[
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
    //! docs/scenarios.md documents every key the reader accepts, each in its own place: a flow
    //! key as a row of the `[[flow]]` table, a protocol's key as a row of that protocol's table
    //! (or of the table of a protocol whose keys it shares), a `[record]` or `[engine]` key in
    //! its section's table, a queue's field in its kind's row of the queue table. A key merely
    //! mentioned somewhere on the page is not documented.

    use crate::protocols::READERS;

    const DOC: &str = include_str!("../../../docs/scenarios.md");

    /// One section of the page: its heading line and its table rows.
    struct Section<'a> {
        heading: &'a str,
        rows: Vec<&'a str>,
    }

    fn sections(doc: &str) -> Vec<Section<'_>> {
        let mut out = vec![Section {
            heading: "",
            rows: Vec::new(),
        }];
        for line in doc.lines() {
            if line.starts_with('#') {
                out.push(Section {
                    heading: line,
                    rows: Vec::new(),
                });
            } else if line.starts_with('|') {
                out.last_mut().expect("never empty").rows.push(line);
            }
        }
        out
    }

    /// The keys a table row documents: the backticked words of its first cell.
    fn row_keys(row: &str) -> Vec<&str> {
        let first = row.trim_start_matches('|').split('|').next().unwrap_or("");
        first.split('`').skip(1).step_by(2).collect()
    }

    fn is_row_key(section: &Section<'_>, key: &str) -> bool {
        section.rows.iter().any(|row| row_keys(row).contains(&key))
    }

    /// The keys in `keys` that no section `wanted` holds as a row key.
    fn missing<'k>(
        doc: &str,
        keys: &[&'k str],
        wanted: impl Fn(&Section<'_>) -> bool,
    ) -> Vec<&'k str> {
        let sections = sections(doc);
        keys.iter()
            .copied()
            .filter(|k| !sections.iter().any(|s| wanted(s) && is_row_key(s, k)))
            .collect()
    }

    /// Protocol keys not documented as rows of the table of a protocol that takes them.
    fn missing_protocol_keys(doc: &str) -> Vec<String> {
        let mut out = Vec::new();
        for reader in READERS {
            for key in (reader.keys)() {
                let holders: Vec<String> = READERS
                    .iter()
                    .filter(|r| (r.keys)().contains(&key))
                    .map(|r| format!("`protocol = \"{}\"`", r.name))
                    .collect();
                let found = missing(doc, &[key], |s| {
                    holders.iter().any(|h| s.heading.contains(h.as_str()))
                });
                if !found.is_empty() {
                    out.push(format!("{}.{key}", reader.name));
                }
            }
        }
        out
    }

    /// Queue fields not in their kind's row of the queue table (the generic ones anywhere in it).
    fn missing_queue_keys(doc: &str) -> Vec<String> {
        let sections = sections(doc);
        let Some(queues) = sections.iter().find(|s| s.heading == "### Queues") else {
            return vec!["### Queues".to_string()];
        };
        let kinds = [None, Some("red"), Some("tbf"), Some("fq"), Some("erica")];
        let mut out = Vec::new();
        for (keys, kind) in crate::elements::QUEUE_KEYS.iter().zip(kinds) {
            for key in *keys {
                let tick = format!("`{key}`");
                let found = queues.rows.iter().any(|row| {
                    kind.is_none_or(|k| row_keys(row).contains(&k)) && row.contains(&tick)
                });
                if !found {
                    out.push(format!("{}.{key}", kind.unwrap_or("queue")));
                }
            }
        }
        out
    }

    fn undocumented(doc: &str) -> Vec<String> {
        let flow = [crate::flows::COMMON_KEYS, crate::protocols::abr::KEYS].concat();
        let mut out: Vec<String> = missing(doc, &flow, |s| s.heading == "## `[[flow]]`")
            .into_iter()
            .map(|k| format!("flow.{k}"))
            .collect();
        out.extend(missing_protocol_keys(doc));
        out.extend(
            missing(doc, crate::record::RECORD_KEYS, |s| {
                s.heading == "## `[record]`"
            })
            .into_iter()
            .map(|k| format!("record.{k}")),
        );
        out.extend(
            missing(doc, crate::engine::ENGINE_KEYS, |s| {
                s.heading == "## `[engine]`"
            })
            .into_iter()
            .map(|k| format!("engine.{k}")),
        );
        out.extend(missing_queue_keys(doc));
        out
    }

    #[test]
    fn every_key_is_in_the_scenario_docs() {
        assert_eq!(undocumented(DOC), Vec::<String>::new());
    }

    #[test]
    fn a_key_mentioned_out_of_place_is_not_documented() {
        // Every key below is on the page in backticks, which the old rule (the key anywhere on
        // the page) accepted: `count` only as a heading's word, TFRC's `rtt_filter` only in
        // prose, the token bucket's `burst` only in the RED row.
        let doc = "## `[[flow]]`\n| `name` | | |\n### `count`\n### TFRC (`protocol = \"tfrc\"`)\n\
                   The filter is like VTP's `rtt_filter`.\n| `preset` | | |\n\
                   ### Queues\n| `red` | `burst` |\n";
        let flow = missing(doc, &["name", "count"], |s| s.heading == "## `[[flow]]`");
        assert_eq!(flow, ["count"]);
        let tfrc = missing(doc, &["preset", "rtt_filter"], |s| {
            s.heading.contains("`protocol = \"tfrc\"`")
        });
        assert_eq!(tfrc, ["rtt_filter"]);
        assert!(missing_queue_keys(doc).contains(&"tbf.burst".to_string()));
    }
}
