//! Writes what a run produced into an output directory:
//!
//! - `scenario.resolved.toml`: the scenario with every default filled in;
//! - `summary.json`: run facts and the per-flow and per-link totals;
//! - `flow_series.parquet`, `flow_summary.parquet`, `link_series.parquet`, and when
//!   recorded `metrics.parquet` and `packets.parquet` (see [`tables`]);
//! - `pcap/<link>.pcap` for the captured links (written as the run went, see
//!   `fairstream_sim::pcap`; here they only get their names).
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
    /// The output directory holds files that are not results of a run, which would be lost.
    #[error(
        "{path} exists and holds files that are not fairstream results (e.g. `{example}`); choose another directory or empty it"
    )]
    NotResults {
        /// The directory.
        path: PathBuf,
        /// One of the foreign entries.
        example: String,
    },
    /// The output path cannot be a result directory (empty, a file, a link to nowhere).
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
}

/// Every name a result directory may hold.
const RESULT_ENTRIES: &[&str] = &[
    "scenario.resolved.toml",
    "summary.json",
    "flow_series.parquet",
    "flow_summary.parquet",
    "link_series.parquet",
    "metrics.parquet",
    "packets.parquet",
    "pcap",
];

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + use<> {
    let path = path.to_path_buf();
    move |source| ResultsError::Io { path, source }
}

/// Fails unless `dir` is absent, empty, or holds only the files of an earlier run (which the
/// new results replace): nothing else in it is ever deleted.
fn check_replaceable(dir: &Path) -> Result<(), ResultsError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(dir)(e)),
    };
    for entry in entries {
        let name = entry
            .map_err(io(dir))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if !RESULT_ENTRIES.contains(&name.as_str()) {
            return Err(ResultsError::NotResults {
                path: dir.to_path_buf(),
                example: name,
            });
        }
    }
    Ok(())
}

/// Where results for `dir` go, checked before anything runs: `dir` must be a non-empty path that
/// is absent, an empty directory or an earlier run's result directory; a symbolic link is
/// followed (its target receives the results and the link stays), never replaced.
pub fn output_target(dir: &Path) -> Result<PathBuf, ResultsError> {
    let bad = |reason: &str| ResultsError::BadTarget {
        path: dir.to_path_buf(),
        reason: reason.to_string(),
    };
    if dir.as_os_str().is_empty() {
        return Err(bad(
            "an empty path is no output directory; name one, such as `-o results`",
        ));
    }
    let target = if dir.is_symlink() {
        dir.canonicalize().map_err(|_| {
            bad("is a symbolic link to nowhere; point it at a directory or remove it")
        })?
    } else {
        dir.to_path_buf()
    };
    if target.exists() && !target.is_dir() {
        return Err(bad(
            "is a file, not a directory; results are a directory of files",
        ));
    }
    check_replaceable(&target)?;
    Ok(target)
}

/// Writes every result file of `out` into `dir`. `dir` must be absent, empty, or an earlier
/// run's result directory (replaced as a whole); any other content makes this fail untouched.
/// A symbolic link is followed, so its target receives the results (see [`output_target`]).
pub fn write_dir(dir: &Path, info: &RunInfo, out: &RunOutput) -> Result<(), ResultsError> {
    let target = output_target(dir)?;
    let dir = target.as_path();
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
        // Checked above: empty, or only an earlier run's files.
        std::fs::remove_dir_all(dir).map_err(io(dir))?;
    }
    std::fs::rename(&tmp, dir).map_err(io(dir))
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
        for (link, file) in &out.pcaps {
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
            // The capture was written as the run went: it gets a name here, not a copy.
            let path = pcap_dir.join(format!("{safe}.pcap"));
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
    fn a_link_is_followed_and_a_file_or_empty_path_refused_before_writing() {
        let base = scratch("links");
        std::fs::create_dir_all(&base).unwrap();
        let real = base.join("real");
        std::fs::create_dir_all(&real).unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_dir(&link, &RunInfo::default(), &RunOutput::default()).unwrap();
        assert!(link.is_symlink(), "the link was replaced");
        assert!(real.join("summary.json").is_file());
        let file = base.join("file");
        std::fs::write(&file, b"keep").unwrap();
        let e = output_target(&file).unwrap_err().to_string();
        assert!(e.contains("is a file"), "{e}");
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
        let e = output_target(Path::new("")).unwrap_err().to_string();
        assert!(e.contains("empty path"), "{e}");
        let dangling = base.join("dangling");
        std::os::unix::fs::symlink(base.join("nowhere"), &dangling).unwrap();
        assert!(output_target(&dangling).is_err());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn writes_new_empty_and_earlier_result_directories() {
        let base = scratch("ok");
        let (info, out) = (RunInfo::default(), RunOutput::default());
        let dir = base.join("run");
        write_dir(&dir, &info, &out).unwrap();
        assert!(dir.join("summary.json").is_file() && dir.join("flow_series.parquet").is_file());
        write_dir(&dir, &info, &out).expect("an earlier run's directory is replaced");
        let empty = base.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        write_dir(&empty, &info, &out).unwrap();
        assert!(empty.join("summary.json").is_file());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn refuses_a_directory_with_other_files_and_leaves_it_alone() {
        let dir = scratch("foreign");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "keep me").unwrap();
        let err = write_dir(&dir, &RunInfo::default(), &RunOutput::default()).unwrap_err();
        assert!(err.to_string().contains("notes.txt"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
            "keep me"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "nothing was added"
        );
        let parent = dir.parent().unwrap();
        let stem = dir.file_name().unwrap().to_string_lossy().into_owned();
        let leftovers = std::fs::read_dir(parent)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(&format!(".{stem}.partial"))
            })
            .count();
        assert_eq!(leftovers, 0, "no staging directory left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
