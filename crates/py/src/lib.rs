//! `fairstream._core`: the thin PyO3 layer between the Python package and the Rust crates.
//!
//! It exposes scenario validation, a [`Simulation`] that Python advances in chunks (to draw
//! progress) without holding the GIL, result writing, and the pure metric functions. All
//! logic lives in the Rust crates; this module only converts types and errors.

mod media;

use std::path::PathBuf;

use fairstream_core::{Duration, Instant};
use fairstream_results::{RunInfo, output_target, write_dir};
use fairstream_sim::{RunOutput, Simulator};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run; the message names file, line, field and the expected form."
);

create_exception!(
    _core,
    ScenarioWarning,
    PyUserWarning,
    "A scenario that runs but is probably not what was meant; the message names file, line and field."
);

fn scenario_err(e: fairstream_scenario::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Loads a scenario, issuing its warnings as Python `ScenarioWarning`s.
fn load(
    py: Python<'_>,
    text: &str,
    filename: &str,
    seed: Option<u64>,
) -> PyResult<fairstream_scenario::Scenario> {
    let scenario = fairstream_scenario::load(text, filename, seed).map_err(scenario_err)?;
    for w in &scenario.warnings {
        let category = py.get_type::<ScenarioWarning>();
        let message = std::ffi::CString::new(w.to_string()).unwrap_or_default();
        PyErr::warn(py, &category, &message, 1)?;
    }
    Ok(scenario)
}

/// Checks a scenario and returns it with every default filled in, as TOML.
#[pyfunction]
fn validate(py: Python<'_>, text: &str, filename: &str) -> PyResult<String> {
    load(py, text, filename, None).map(|s| s.resolved)
}

enum State {
    Running(Box<Simulator>),
    Finished(Box<RunOutput>),
    /// Only while a transition is under way.
    Empty,
}

/// A simulation run, advanced from Python with `advance(until_s)`.
#[pyclass(module = "fairstream._core")]
struct Simulation {
    state: State,
    name: String,
    resolved: String,
    duration: Duration,
    wall: std::time::Duration,
    events: u64,
    now: Instant,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, filename, seed=None))]
    fn new(py: Python<'_>, text: &str, filename: &str, seed: Option<u64>) -> PyResult<Self> {
        let scenario = load(py, text, filename, seed)?;
        let duration = scenario.network.duration;
        let sim = Simulator::new(scenario.network)
            .map_err(|e| ScenarioError::new_err(format!("{filename}: {e}")))?;
        Ok(Self {
            state: State::Running(Box::new(sim)),
            name: scenario.name,
            resolved: scenario.resolved,
            duration,
            wall: std::time::Duration::ZERO,
            events: 0,
            now: Instant::ZERO,
        })
    }

    /// Simulated seconds the run lasts.
    #[getter]
    fn duration_s(&self) -> f64 {
        self.duration.as_secs_f64()
    }

    /// Simulated seconds reached so far.
    #[getter]
    fn now_s(&self) -> f64 {
        self.now.as_secs_f64()
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> u64 {
        self.events
    }

    /// Wall-clock seconds spent simulating so far.
    #[getter]
    fn wall_time_s(&self) -> f64 {
        self.wall.as_secs_f64()
    }

    /// The scenario's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Runs up to `until_s` simulated seconds without holding the GIL; `True` once finished.
    fn advance(&mut self, py: Python<'_>, until_s: f64) -> PyResult<bool> {
        let State::Running(sim) = &mut self.state else {
            return Ok(true);
        };
        let until = Instant::from_secs_f64(until_s);
        let started = std::time::Instant::now();
        let finished = py.detach(|| {
            sim.run_until(until);
            sim.is_finished() || until >= sim.end()
        });
        self.wall += started.elapsed();
        self.events = sim.events();
        self.now = until.min(sim.end());
        if finished {
            if let State::Running(sim) = std::mem::replace(&mut self.state, State::Empty) {
                let out = py.detach(|| sim.finish());
                self.state = State::Finished(Box::new(out));
            }
            self.now = Instant::ZERO + self.duration;
        }
        Ok(finished)
    }

    /// The scenario with every default filled in, as TOML.
    fn resolved_toml(&self) -> &str {
        &self.resolved
    }

    /// The run's summary (as in `summary.json`); the run must be finished.
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let out = self.output()?;
        let text = fairstream_results::summary::summary_json(&self.info(), out);
        let json = py.import("json")?;
        Ok(json.call_method1("loads", (text,))?.unbind())
    }

    /// Writes the result directory (Parquet tables, summary.json, resolved scenario, pcaps).
    fn write_results(&self, py: Python<'_>, out_dir: PathBuf) -> PyResult<()> {
        let out = self.output()?;
        let info = self.info();
        py.detach(|| write_dir(&out_dir, &info, out))
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }
}

impl Simulation {
    fn output(&self) -> PyResult<&RunOutput> {
        match &self.state {
            State::Finished(out) => Ok(out),
            _ => Err(PyRuntimeError::new_err(
                "the run is not finished: call advance() until it returns True",
            )),
        }
    }

    fn info(&self) -> RunInfo {
        RunInfo {
            name: self.name.clone(),
            resolved: self.resolved.clone(),
            wall_time_s: self.wall.as_secs_f64(),
        }
    }
}

/// Jain's fairness index of `xs`.
#[pyfunction]
fn jain(xs: Vec<f64>) -> f64 {
    fairstream_metrics::fairness::jain(&xs)
}

/// Mathis et al. TCP throughput, bytes/s.
#[pyfunction]
#[pyo3(signature = (mss_bytes, rtt_s, p, delayed_ack=false))]
fn mathis(mss_bytes: f64, rtt_s: f64, p: f64, delayed_ack: bool) -> f64 {
    fairstream_metrics::tcp_model::mathis(mss_bytes, rtt_s, p, delayed_ack)
}

/// Full PFTK (Padhye et al.) TCP throughput, bytes/s.
#[pyfunction]
#[pyo3(signature = (mss_bytes, rtt_s, p, rto_s, wmax_pkts, b=1.0))]
fn padhye(mss_bytes: f64, rtt_s: f64, p: f64, rto_s: f64, wmax_pkts: f64, b: f64) -> f64 {
    fairstream_metrics::tcp_model::padhye(mss_bytes, rtt_s, p, rto_s, wmax_pkts, b)
}

/// Approximate PFTK TCP throughput (TFRC's equation with ns-2's cap), bytes/s.
#[pyfunction]
#[pyo3(signature = (mss_bytes, rtt_s, p, rto_s, wmax_pkts, b=1.0))]
fn padhye_approx(mss_bytes: f64, rtt_s: f64, p: f64, rto_s: f64, wmax_pkts: f64, b: f64) -> f64 {
    fairstream_metrics::tcp_model::padhye_approx(mss_bytes, rtt_s, p, rto_s, wmax_pkts, b)
}

/// TFRC's throughput equation (RFC 5348 §3.1, b = 1, no cap on the timeout term), bytes/s.
#[pyfunction]
fn tfrc_equation(s_bytes: f64, rtt_s: f64, p: f64, t_rto_s: f64) -> f64 {
    fairstream_metrics::tcp_model::tfrc_rfc5348(s_bytes, rtt_s, p, t_rto_s, 1.0)
}

/// Checks, before a run, that its results can go to `path` (absent, empty, or an earlier run's
/// results; a symbolic link is followed); a ValueError saying why not otherwise.
#[pyfunction]
fn check_output_dir(path: PathBuf) -> PyResult<()> {
    output_target(&path)
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("ScenarioWarning", m.py().get_type::<ScenarioWarning>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(check_output_dir, m)?)?;
    m.add_function(wrap_pyfunction!(jain, m)?)?;
    m.add_function(wrap_pyfunction!(mathis, m)?)?;
    m.add_function(wrap_pyfunction!(padhye, m)?)?;
    m.add_function(wrap_pyfunction!(padhye_approx, m)?)?;
    m.add_function(wrap_pyfunction!(tfrc_equation, m)?)?;
    m.add_function(wrap_pyfunction!(media::mpeg_policy_table, m)?)?;
    m.add_function(wrap_pyfunction!(media::mpeg_scale_rates, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
