//! `emulate`: a scenario through the emulator (`fairstream-emu`) from Python, on a thread of
//! its own while the calling thread hands the live lines to Python and runs its signal handlers
//! (Ctrl-C stops the run, keeping what ran); and `emulator_unavailable`, what this machine lacks
//! for it.

use std::path::PathBuf;

use fairstream_emu::{EmuError, EmuLive, EmuReport};
use fairstream_results::{RunInfo, write_dir};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::ArrowTable;
use crate::realnet::drive_with;

pyo3::create_exception!(
    _core,
    EmulatorUnavailable,
    PyRuntimeError,
    "This machine cannot emulate (no root, no network namespaces, no TUN device, no `ip`); the message names what is missing."
);

fn emu_err(e: EmuError) -> PyErr {
    match e {
        EmuError::Unavailable(_) => EmulatorUnavailable::new_err(e.to_string()),
        EmuError::Unsupported(_) => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// What this machine lacks to emulate, or None when it can.
#[pyfunction]
pub(crate) fn emulator_unavailable(py: Python<'_>) -> Option<String> {
    py.detach(fairstream_emu::preflight)
        .err()
        .map(|e| e.to_string())
}

/// A finished (or stopped) emulation.
#[pyclass(module = "fairstream._core", frozen)]
pub(crate) struct EmuRun {
    report: EmuReport,
    info: RunInfo,
}

#[pymethods]
impl EmuRun {
    /// The scenario with every default filled in, as TOML.
    fn resolved_toml(&self) -> &str {
        &self.info.resolved
    }

    /// Whether the run went to its end (not stopped by Ctrl-C).
    #[getter]
    fn complete(&self) -> bool {
        self.report.stopped_at.is_none()
    }

    /// The run's summary (as in `summary.json`).
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = fairstream_results::summary::summary_json(&self.info, &self.report.output);
        let json = py.import("json")?;
        Ok(json.call_method1("loads", (text,))?.unbind())
    }

    /// What only an emulation has (as in `emu.json`): departure errors per link, packets
    /// forwarded late, the flows' ends' own reports.
    fn emu_stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let json = py.import("json")?;
        Ok(json
            .call_method1("loads", (self.report.emu.to_string(),))?
            .unbind())
    }

    /// Table `name` as Arrow data; None for a table an emulation does not record.
    fn table(&self, name: &str) -> PyResult<Option<ArrowTable>> {
        match fairstream_results::tables::batch(name, &self.report.output) {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(ArrowTable { batch })),
            Some(Err(e)) => Err(PyRuntimeError::new_err(format!("table {name}: {e}"))),
        }
    }

    /// Writes the result files and `emu.json` into `out_dir` (created when absent, refused
    /// unless empty).
    fn write_results(&self, py: Python<'_>, out_dir: PathBuf) -> PyResult<()> {
        py.detach(|| {
            write_dir(&out_dir, &self.info, &self.report.output)
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    let path = out_dir.join("emu.json");
                    let text = serde_json::to_string_pretty(&self.report.emu)
                        .unwrap_or_else(|_| self.report.emu.to_string());
                    std::fs::write(&path, text + "\n")
                        .map_err(|e| format!("{}: {e}", path.display()))
                })
        })
        .map_err(PyOSError::new_err)
    }
}

/// The kinds of host device `emulate` takes, by name, the default first.
#[pyfunction]
pub(crate) fn emu_devices() -> Vec<&'static str> {
    fairstream_emu::DeviceKind::ALL
        .into_iter()
        .map(fairstream_emu::DeviceKind::name)
        .collect()
}

/// Emulates the scenario `text` (read from `filename`) in real time, the hosts on `device`s
/// (one of [`emu_devices`]; the first when None); `on_live(t_s, delivered_bps, dropped, late)` is called
/// about once a second.
#[pyfunction]
#[pyo3(signature = (text, filename, seed=None, on_live=None, device=None))]
pub(crate) fn emulate(
    py: Python<'_>,
    text: &str,
    filename: &str,
    seed: Option<u64>,
    on_live: Option<Py<PyAny>>,
    device: Option<&str>,
) -> PyResult<EmuRun> {
    let options = fairstream_emu::EmuOptions {
        device: device
            .map(fairstream_emu::DeviceKind::parse)
            .transpose()
            .map_err(PyValueError::new_err)?
            .unwrap_or_default(),
    };
    let scenario = crate::load(py, text, filename, seed)?;
    let resolved = scenario.resolved.clone();
    let name = scenario.name.clone();
    let t0 = std::time::Instant::now();
    let show = |py: Python<'_>, f: &Py<PyAny>, l: EmuLive| {
        f.call1(py, (l.t_s, l.delivered_bps, l.dropped, l.late))
            .map(|_| ())
    };
    let report = drive_with(py, on_live, show, move |stop, live| {
        fairstream_emu::emulate_with(&scenario, &options, stop, live)
    })?
    .map_err(emu_err)?;
    let accurate = report.emu["accurate"].as_bool().unwrap_or(false);
    let info = RunInfo {
        name,
        resolved,
        wall_time_s: t0.elapsed().as_secs_f64(),
        stopped_at_s: report.stopped_at.map(|d| d.as_secs_f64()),
        emulated: Some(accurate),
    };
    Ok(EmuRun { report, info })
}
