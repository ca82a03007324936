//! The memory a run may use, and the check made before it starts: a run whose estimate (see
//! `fairstream_sim::estimate`) exceeds the limit is refused with an error that points at the
//! field behind the largest part of the estimate.
//!
//! The limit is the user's (`--max-memory`, `max_memory=`) or else what the machine has
//! available: `MemAvailable` of `/proc/meminfo`, or less if the process's control group allows
//! less (`memory.max` − `memory.current`), or 4 GiB where neither can be read.

use std::fmt;

use fairstream_sim::{Estimate, Part};

use crate::ScenarioError;

/// The limit where the available memory cannot be read: 4 GiB.
pub(crate) const FALLBACK_BYTES: u64 = 4 << 30;

/// The largest limit accepted: 2⁶³ bytes.
const MAX_LIMIT: u64 = 1 << 63;

/// How much memory a run may use, and where the figure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// Where the figure comes from, for messages ("the memory available", "--max-memory").
    pub source: String,
}

impl MemoryLimit {
    /// A limit the user gave, `source` naming how (`--max-memory`, `max_memory`).
    pub fn given(bytes: u64, source: impl Into<String>) -> Self {
        Self {
            bytes,
            source: source.into(),
        }
    }

    /// What this machine has available now (see the module documentation).
    pub fn available() -> Self {
        let meminfo = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| mem_available(&t));
        let cgroup = cgroup_room();
        match (meminfo, cgroup) {
            (Some(m), Some(c)) if c < m => Self::given(c, "the memory its control group allows"),
            (Some(m), _) => Self::given(m, "the memory available (MemAvailable)"),
            (None, Some(c)) => Self::given(c, "the memory its control group allows"),
            (None, None) => Self::given(
                FALLBACK_BYTES,
                "the default limit, as the available memory cannot be read",
            ),
        }
    }

    /// Parses a limit written as a size: `"8GB"`, `"512 MiB"`, `"2e9"` or `"2000000000"`
    /// (bytes); units B, kB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (of 1024).
    pub fn parse_bytes(text: &str) -> Result<u64, String> {
        let t = text.trim();
        let text = fairstream_core::escape_controls(text);
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
            .unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let scale = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "tb" => 1e12,
            "kib" => 1024.0,
            "mib" => 1024.0 * 1024.0,
            "gib" => 1024.0 * 1024.0 * 1024.0,
            "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            _ => {
                return Err(format!(
                    "`{text}` is not a memory size; expected a form such as \"8GB\", \"512MiB\" or a number of bytes"
                ));
            }
        };
        let bytes = number
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(|n| n * scale)
            .ok_or_else(|| {
                format!("`{text}` is not a memory size; expected a form such as \"8GB\", \"512MiB\" or a number of bytes")
            })?;
        if scale == 1.0 && bytes.fract() != 0.0 {
            // "1.5" is more likely 1.5 GB meant than one byte
            return Err(format!(
                "`{text}` is not a whole number of bytes; give a unit, such as \"{}GB\"",
                number.trim()
            ));
        }
        if bytes < 1.0 {
            return Err(format!(
                "`{text}`: a memory limit must be at least one byte"
            ));
        }
        if bytes > MAX_LIMIT as f64 {
            return Err(format!(
                "`{text}` is too large: a memory limit is at most 2^63 bytes"
            ));
        }
        Ok(bytes as u64)
    }
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// What the process's cgroup (v2) still allows: `memory.max` − `memory.current`, if limited.
fn cgroup_room() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let max: u64 = std::fs::read_to_string(dir.join("memory.max"))
        .ok()?
        .trim()
        .parse()
        .ok()?; // "max" (no limit) does not parse
    let current: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(current))
}

/// A size for a person: `1.6 GB`, `512 MB`, `300 kB`, `12 B` (powers of 1000).
pub(crate) struct Bytes(pub(crate) f64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (div, unit) in [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")] {
            if b >= div {
                return write!(f, "{:.1} {unit}", b / div);
            }
        }
        write!(f, "{b:.0} B")
    }
}

/// Where each part of the estimate is set in the scenario, as located errors without a message.
#[derive(Debug, Clone, Default)]
pub(crate) struct PartFields {
    pub(crate) at: Vec<(Part, ScenarioError)>,
}

/// What the user can change to shrink `part`.
fn advice(part: Part) -> &'static str {
    match part {
        Part::Trace => "turn `record.packets` off, shorten the run or send fewer packets",
        Part::Metrics => "turn `record.metrics` off or shorten the run",
        Part::Series => {
            "widen `record.interval`, shorten the run or simulate fewer flows and links"
        }
        Part::Flows => "simulate fewer flows (or with smaller windows)",
        Part::Nodes | Part::Links => "simulate fewer hosts and links",
        Part::Packets => "lower the queue limits, or the rates and delays of the links",
    }
}

/// The refusal of a run estimated at `e` under `limit`, located at the field behind the largest
/// part; `None` if it fits.
pub(crate) fn check(
    e: &Estimate,
    limit: &MemoryLimit,
    fields: &PartFields,
    fallback: &ScenarioError,
) -> Option<ScenarioError> {
    let total = e.total_bytes();
    if total <= limit.bytes as f64 {
        return None;
    }
    let largest = e.largest();
    let (part, bytes) = largest[0];
    let mut err = fields
        .at
        .iter()
        .find(|(p, _)| *p == part)
        .map_or_else(|| fallback.clone(), |(_, e)| e.clone());
    let others: Vec<String> = largest[1..]
        .iter()
        .filter(|(_, b)| *b >= 0.05 * total)
        .map(|(p, b)| format!("{} {}", p.describe(), Bytes(*b)))
        .collect();
    err.message = format!(
        "the run would need about {} of memory, more than the {} limit ({}); most of it is {}, {}{}; \
         {}. A larger limit (--max-memory, or max_memory= in Python) lets it try",
        Bytes(total),
        Bytes(limit.bytes as f64),
        limit.source,
        part.describe(),
        Bytes(bytes),
        if others.is_empty() {
            String::new()
        } else {
            format!(" (then {})", others.join(", "))
        },
        advice(part),
    );
    Some(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_with_their_units_and_refuse_nonsense() {
        assert_eq!(MemoryLimit::parse_bytes("8GB"), Ok(8_000_000_000));
        assert_eq!(MemoryLimit::parse_bytes("512 MiB"), Ok(512 << 20));
        assert_eq!(MemoryLimit::parse_bytes("2e9"), Ok(2_000_000_000));
        assert_eq!(MemoryLimit::parse_bytes("1024"), Ok(1024));
        assert_eq!(MemoryLimit::parse_bytes("1.5KB"), Ok(1500));
        assert_eq!(MemoryLimit::parse_bytes("1.5e3"), Ok(1500));
        for bad in [
            "", "GB", "8 GBs", "-1GB", "0", "1e30TB", "nan", "1.5", "1.5B", "0.5",
        ] {
            assert!(MemoryLimit::parse_bytes(bad).is_err(), "{bad}");
        }
        let err = MemoryLimit::parse_bytes("1.5").unwrap_err();
        assert!(
            err.contains("not a whole number of bytes") && err.contains("\"1.5GB\""),
            "{err}"
        );
    }

    #[test]
    fn mem_available_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  1 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(mem_available(text), Some(22_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert!(MemoryLimit::available().bytes > 0);
    }
}
