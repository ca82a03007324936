//! Writes what a run produced into an output directory:
//!
//! - `scenario.resolved.toml`: the scenario with every default filled in;
//! - `summary.json`: run facts and the per-flow and per-link totals;
//! - `flow_series.parquet`, `flow_summary.parquet`, `link_series.parquet`, and when
//!   recorded the series the queue disciplines declare (`port_series.parquet`, ERICA ports),
//!   `metrics.parquet` and `packets.parquet` (see [`tables`]);
//! - `pcap/<link>.pcap` for the captured links, the link's name percent-encoded ([`pcap_names`])
//!   (written as the run went, by the driver, see `fairstream_records::CaptureFile`; here they only get their names);
//! - `INCOMPLETE`, only for a run stopped before its end (Ctrl-C): what it covers, in words
//!   (`summary.json` then says `"complete": false` and where the run stopped).
//!
//! [`write_dir`] writes into a directory that is absent or empty; where that directory is, what
//! an earlier one may be replaced by, and the staging that makes results appear only complete
//! are the caller's (`python/fairstream/output.py`, one set of rules for every command).

pub mod ipc;
pub mod pcap_names;
pub mod summary;
pub mod tables;

use std::path::{Path, PathBuf};

use fairstream_records::RunOutput;

pub use pcap_names::pcap_file_name;

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
    /// The output path cannot receive results (a file, a directory that is not empty).
    #[error("{path}: {reason}")]
    BadTarget {
        /// The path given.
        path: PathBuf,
        /// Why it cannot hold results.
        reason: String,
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
    /// Simulated seconds at which the run was stopped before its end (interrupted); None for a
    /// run that went to its end.
    pub stopped_at_s: Option<f64>,
    /// For a run of the emulator (`fairstream emulate`): whether it forwarded every packet in
    /// time (no packet late, none cut); `None` for a simulated or real-network run.
    pub emulated: Option<bool>,
}

/// The marker file of a run stopped before its end; the report and `fairstream` read it.
pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + use<> {
    let path = path.to_path_buf();
    move |source| ResultsError::Io { path, source }
}

/// Writes every result file of `out` into `dir`, which is created when absent and must be
/// empty otherwise: nothing that is there already is ever overwritten or deleted.
pub fn write_dir(dir: &Path, info: &RunInfo, out: &RunOutput) -> Result<(), ResultsError> {
    let bad = |reason: &str| ResultsError::BadTarget {
        path: dir.to_path_buf(),
        reason: reason.to_string(),
    };
    if dir.as_os_str().is_empty() {
        return Err(bad("an empty path is no output directory"));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(bad("is a file, not a directory"));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    if std::fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
        return Err(bad(
            "is not empty; results are written into a new or empty directory",
        ));
    }
    write_into(dir, info, out)
}

fn write_into(dir: &Path, info: &RunInfo, out: &RunOutput) -> Result<(), ResultsError> {
    if let Some(e) = out.capture_errors.first() {
        return Err(ResultsError::BadTarget {
            path: dir.to_path_buf(),
            reason: format!("a pcap capture could not be written as the run went: {e}"),
        });
    }
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| ResultsError::Io { path, source })
    };
    write("scenario.resolved.toml", info.resolved.as_bytes())?;
    if let Some(at) = info.stopped_at_s {
        let text = format!(
            "interrupted: this run was stopped at {at} s of simulated time, before its end; \
             its results cover only the time up to there (summary.json: \"complete\": false)\n"
        );
        write(INCOMPLETE_MARKER, text.as_bytes())?;
    }
    write("summary.json", summary::summary_json(info, out).as_bytes())?;
    tables::write_flow_series(&dir.join("flow_series.parquet"), out)?;
    tables::write_flow_summary(&dir.join("flow_summary.parquet"), out)?;
    tables::write_link_series(&dir.join("link_series.parquet"), out)?;
    for s in &out.queue_series {
        let file = format!("{}.parquet", s.table.name);
        tables::write_declared_series(&dir.join(file), s, out)?;
    }
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
        for (link, file) in &out.pcaps {
            // The capture was written as the run went: it gets a name here, not a copy.
            let path = pcap_dir.join(pcap_file_name(link));
            file.link_to(&path)
                .map_err(|source| ResultsError::Io { path, source })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("fairstream-results-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn writes_a_new_or_empty_directory() {
        let base = scratch("ok");
        let (info, out) = (RunInfo::default(), RunOutput::default());
        let dir = base.join("nested").join("run");
        write_dir(&dir, &info, &out).unwrap();
        assert!(dir.join("summary.json").is_file() && dir.join("flow_series.parquet").is_file());
        let empty = base.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        write_dir(&empty, &info, &out).unwrap();
        assert!(empty.join("summary.json").is_file());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_stopped_run_is_marked_incomplete_and_a_complete_one_is_not() {
        let base = scratch("incomplete");
        let dir = base.join("run");
        let stopped = RunInfo {
            stopped_at_s: Some(1.5),
            ..RunInfo::default()
        };
        write_dir(&dir, &stopped, &RunOutput::default()).unwrap();
        let marker = std::fs::read_to_string(dir.join(INCOMPLETE_MARKER)).unwrap();
        assert!(marker.contains("1.5 s"), "{marker}");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["complete"], false);
        assert_eq!(summary["stopped_at_s"], 1.5);
        let whole = base.join("whole");
        write_dir(&whole, &RunInfo::default(), &RunOutput::default()).unwrap();
        assert!(!whole.join(INCOMPLETE_MARKER).exists());
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(whole.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["complete"], true);
        assert!(summary["stopped_at_s"].is_null());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_tables_parquet_bytes_are_the_file_written_for_it() {
        let base = scratch("bytes");
        let dir = base.join("run");
        let out = RunOutput::default();
        write_dir(&dir, &RunInfo::default(), &out).unwrap();
        for name in ["flow_series", "flow_summary", "link_series"] {
            let batch = tables::batch(name, &out).unwrap().unwrap();
            let file = std::fs::read(dir.join(format!("{name}.parquet"))).unwrap();
            assert_eq!(tables::parquet_bytes(name, &batch).unwrap(), file, "{name}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_packet_traces_clocks_and_counters_are_delta_encoded_and_read_back_unchanged() {
        use fairstream_records::{PacketEvent, PacketTrace};
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        use parquet::basic::Encoding;

        let rows = 5_000u64;
        let trace = PacketTrace {
            t: (0..rows).map(|i| i as f64 * 1.2e-6).collect(),
            t_ns: (0..rows).map(|i| i * 1_200 + i % 7).collect(),
            packet_id: (0..rows).map(|i| i / 2 + (i % 3) * 40).collect(),
            event: (0..rows)
                .map(|i| PacketEvent::ALL[i as usize % 5])
                .collect(),
            link_id: (0..rows).map(|i| (i % 4) as u32).collect(),
            flow_id: (0..rows).map(|i| (i % 3) as u32).collect(),
            seq: (0..rows).map(|i| i as i64 / 3 - 1).collect(),
            size: (0..rows)
                .map(|i| if i % 2 == 0 { 1_040 } else { 40 })
                .collect(),
            reverse: (0..rows).map(|i| i % 2 == 1).collect(),
        };
        let out = RunOutput {
            packet_trace: Some(trace),
            ..RunOutput::default()
        };
        let base = scratch("packets");
        let dir = base.join("run");
        write_dir(&dir, &RunInfo::default(), &out).unwrap();
        let file = std::fs::read(dir.join("packets.parquet")).unwrap();
        let batch = tables::batch("packets", &out).unwrap().unwrap();
        assert_eq!(tables::parquet_bytes("packets", &batch).unwrap(), file);

        let opened = std::fs::File::open(dir.join("packets.parquet")).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(opened).unwrap();
        let row_group = reader.metadata().row_group(0).clone();
        let batches = reader.with_batch_size(rows as usize).build().unwrap();
        let read: Vec<_> = batches.map(Result::unwrap).collect();
        assert_eq!(read.len(), 1, "one batch");
        assert_eq!(read[0].columns(), batch.columns(), "the values read back");
        for chunk in row_group.columns() {
            let name = chunk.column_path().string();
            let delta = chunk
                .encodings()
                .any(|e| e == Encoding::DELTA_BINARY_PACKED);
            let dictionary = chunk.dictionary_page_offset().is_some();
            let (plain, delta_expected) = match name.as_str() {
                "t" => (true, false),
                "t_ns" | "packet_id" | "seq" => (true, true),
                // The default: a dictionary, but for booleans, which Parquet packs as bits.
                _ => (name == "reverse", false),
            };
            assert_eq!(dictionary, !plain, "{name}: a dictionary");
            assert_eq!(delta, delta_expected, "{name}: delta-encoded");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn never_writes_over_anything() {
        let base = scratch("full");
        let (info, out) = (RunInfo::default(), RunOutput::default());
        let dir = base.join("run");
        write_dir(&dir, &info, &out).unwrap();
        let e = write_dir(&dir, &info, &out).unwrap_err().to_string();
        assert!(e.contains("not empty"), "{e}");
        let file = base.join("file");
        std::fs::write(&file, b"keep").unwrap();
        let e = write_dir(&file, &info, &out).unwrap_err().to_string();
        assert!(e.contains("is a file"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
        assert!(write_dir(Path::new(""), &info, &out).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
