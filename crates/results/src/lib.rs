//! Writes what a run produced into an output directory:
//!
//! - `scenario.resolved.toml`: the scenario with every default filled in;
//! - `summary.json`: run facts and the per-flow and per-link totals;
//! - `flow_series.parquet`, `flow_summary.parquet`, `link_series.parquet`, and when
//!   recorded `metrics.parquet` and `packets.parquet` (see [`tables`]);
//! - `pcap/<link>.pcap` for the captured links.
//!
//! Files are first written into a sibling temporary directory that is renamed into place
//! at the end, so a failed write leaves no partial output behind.

pub mod summary;
pub mod tables;

use std::path::{Path, PathBuf};

use fairstream_sim::RunOutput;

/// A failure to write results.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The file system refused.
    #[error("{path}: {source}")]
    Io {
        /// The path being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Parquet or Arrow refused.
    #[error("{path}: {message}")]
    Parquet {
        /// The file being written.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// Facts about the run that the simulator does not know itself.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// Scenario name.
    pub name: String,
    /// Resolved scenario text.
    pub resolved: String,
    /// Wall-clock seconds the simulation took.
    pub wall_time_s: f64,
}

/// Writes every result file of `out` into `dir` (created; must not exist or be empty).
pub fn write_dir(dir: &Path, info: &RunInfo, out: &RunOutput) -> Result<(), ResultsError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ResultsError::Io { path, source }
    };
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let stem = dir
        .file_name()
        .map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
    let tmp = parent.join(format!(".{stem}.partial-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let result = write_into(&tmp, info, out);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if dir.exists() {
        // An existing (e.g. empty, or previous) output directory is replaced as a whole.
        std::fs::remove_dir_all(dir).map_err(io(dir))?;
    }
    std::fs::rename(&tmp, dir).map_err(io(dir))
}

fn write_into(dir: &Path, info: &RunInfo, out: &RunOutput) -> Result<(), ResultsError> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| ResultsError::Io { path, source })
    };
    write("scenario.resolved.toml", info.resolved.as_bytes())?;
    write("summary.json", summary::summary_json(info, out).as_bytes())?;
    tables::write_flow_series(&dir.join("flow_series.parquet"), out)?;
    tables::write_flow_summary(&dir.join("flow_summary.parquet"), out)?;
    tables::write_link_series(&dir.join("link_series.parquet"), out)?;
    if !out.metrics.t.is_empty() {
        tables::write_metrics(&dir.join("metrics.parquet"), out)?;
    }
    if let Some(trace) = &out.packet_trace {
        tables::write_packets(&dir.join("packets.parquet"), trace)?;
    }
    if !out.pcaps.is_empty() {
        let pcap_dir = dir.join("pcap");
        std::fs::create_dir_all(&pcap_dir).map_err(|source| ResultsError::Io {
            path: pcap_dir.clone(),
            source,
        })?;
        for (link, bytes) in &out.pcaps {
            let safe: String = link
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '-'
                    }
                })
                .collect();
            write(&format!("pcap/{safe}.pcap"), bytes)?;
        }
    }
    Ok(())
}
