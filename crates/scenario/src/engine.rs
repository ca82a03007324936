//! The `[engine]` table: how same-instant events are ordered and the phase perturbation of
//! link delays (see `fairstream_sim::EngineConfig`).

use fairstream_sim::{Network, TieRule};
use toml::Value;

use crate::reader::{Result, Section};

/// Keys `[engine]` may hold.
pub(crate) const ENGINE_KEYS: &[&str] = &["ties", "perturb_delays"];

/// Largest delay perturbation, in MTU transmission times.
const MAX_PERTURBATION: f64 = 1000.0;

/// Reads `[engine]` (absent: defaults) into `net.engine`; returns the resolved table.
pub(crate) fn read_engine(
    section: Option<&mut Section<'_, '_>>,
    net: &mut Network,
) -> Result<toml::Table> {
    let Some(e) = section else {
        let mut out = toml::Table::new();
        out.insert(
            "ties".into(),
            Value::String(net.engine.ties.keyword().into()),
        );
        out.insert(
            "perturb_delays".into(),
            Value::Float(net.engine.perturb_delays),
        );
        return Ok(out);
    };
    net.engine.ties = match e.choice("ties", &["random", "fifo"], TieRule::default().keyword())? {
        "fifo" => TieRule::Fifo,
        _ => TieRule::Random,
    };
    net.engine.perturb_delays = e.float_or("perturb_delays", 0.0, MAX_PERTURBATION, 0.0)?;
    Ok(e.take_resolved())
}
