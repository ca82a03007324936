//! `fairstream._core`: the thin PyO3 layer between the Python package and the Rust crates.
//!
//! It exposes scenario validation, a [`Simulation`] that Python advances in chunks (to draw
//! progress) without holding the GIL, result writing, the run's tables as Arrow data (an
//! [`ArrowTable`] exports the Arrow PyCapsule stream interface, which polars imports without a
//! copy through a file), the real-time driver's two ends (`real_send`, `real_recv`), and the pure
//! metric functions. All logic lives in the Rust crates;
//! this module only converts types and errors.
//!
//! Which build runs: `build_id` is a hash of this module's own file, so that a run cache keyed
//! by it (`fairstream.cache`) never serves results computed by another build.
//!
//! Ctrl-C: however long a chunk is in simulated time, `advance` takes the GIL back every
//! [`SIGNAL_CHECK_INTERVAL`] of wall time to run Python's signal handlers, so a KeyboardInterrupt
//! is raised within that much of the signal; `stop` then turns the run so far into results that
//! say they are incomplete.

mod emulate;
mod media;
mod realnet;
mod toml_text;

use std::path::PathBuf;

use fairstream_core::{Duration, Instant};
use fairstream_records::RunOutput;
use fairstream_results::{RunInfo, write_dir};
use fairstream_scenario::MemoryLimit;
use fairstream_sim::Simulator;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};

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

/// Checks a scenario and returns it with every default filled in, as TOML; with `max_memory`
/// (bytes), also that its run's estimated memory fits (the check a run makes before it starts).
#[pyfunction]
#[pyo3(signature = (text, filename, max_memory=None))]
fn validate(
    py: Python<'_>,
    text: &str,
    filename: &str,
    max_memory: Option<u64>,
) -> PyResult<String> {
    let scenario = load(py, text, filename, None)?;
    if let Some(bytes) = max_memory {
        scenario
            .check_memory(&MemoryLimit::given(bytes, "the limit given"))
            .map_err(scenario_err)?;
    }
    Ok(scenario.resolved)
}

/// Checks a scenario (as `validate`) and returns it with every default filled in, as TOML, and
/// its run's estimated memory in bytes: a run fits a `max_memory` when the estimate is at most
/// that. What a campaign keeps of each run it plans, to check the runs it will make against a
/// limit without reading their scenarios again.
#[pyfunction]
fn resolve(py: Python<'_>, text: &str, filename: &str) -> PyResult<(String, f64)> {
    let scenario = load(py, text, filename, None)?;
    let bytes = scenario.estimate.total_bytes();
    Ok((scenario.resolved, bytes))
}

/// Wall time between two looks for pending signals (Ctrl-C) while a simulation runs.
const SIGNAL_CHECK_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// Events run between two looks at the clock: a few microseconds of work, so the clock costs
/// nothing measurable and the interval above is kept to within one slice.
const SLICE_EVENTS: u64 = 2048;

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
    /// Where the run was stopped before its end (`stop`); None while running or once complete.
    stopped_at: Option<Instant>,
    estimate: Py<PyAny>,
}

#[pymethods]
impl Simulation {
    /// Loads the scenario and builds the run; refuses it (`ScenarioError`) if its estimated
    /// memory exceeds `max_memory` bytes, or else the memory available now. pcap captures are
    /// written as the run goes into hidden files of `capture_dir` (made when a link is captured
    /// and it is missing; default: the temporary directory); put it on the results' file system
    /// so that writing them is a link.
    #[new]
    #[pyo3(signature = (text, filename, seed=None, max_memory=None, capture_dir=None))]
    fn new(
        py: Python<'_>,
        text: &str,
        filename: &str,
        seed: Option<u64>,
        max_memory: Option<u64>,
        capture_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let scenario = load(py, text, filename, seed)?;
        scenario.check_simulable().map_err(scenario_err)?;
        let limit = max_memory.map_or_else(MemoryLimit::available, |bytes| {
            MemoryLimit::given(bytes, "the limit given")
        });
        scenario.check_memory(&limit).map_err(scenario_err)?;
        let estimate = estimate_dict(py, &scenario.estimate)?;
        let duration = scenario.network.duration;
        let capture_dir = capture_dir.unwrap_or_else(std::env::temp_dir);
        let sim = Simulator::with_capture_dir(scenario.network, &capture_dir)
            .map_err(|e| ScenarioError::new_err(format!("{filename}: {e}")))?;
        Ok(Self {
            estimate,
            state: State::Running(Box::new(sim)),
            name: scenario.name,
            resolved: scenario.resolved,
            duration,
            wall: std::time::Duration::ZERO,
            events: 0,
            now: Instant::ZERO,
            stopped_at: None,
        })
    }

    /// What the run was estimated to need before it started: `events`, `bytes` (in all) and
    /// `parts` (bytes of each part: nodes, links, flows, packets, series, trace, metrics).
    #[getter]
    fn estimate(&self, py: Python<'_>) -> Py<PyAny> {
        self.estimate.clone_ref(py)
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

    /// Whether the run went to its end: False after `stop` ended it early.
    #[getter]
    fn complete(&self) -> bool {
        self.stopped_at.is_none()
    }

    /// Simulated seconds at which `stop` ended the run, or None.
    #[getter]
    fn stopped_at_s(&self) -> Option<f64> {
        self.stopped_at.map(Instant::as_secs_f64)
    }

    /// Runs up to `until_s` simulated seconds without holding the GIL; `True` once finished.
    ///
    /// Pending signals are handled every few milliseconds of wall time: a Ctrl-C raises
    /// KeyboardInterrupt here promptly, with the run left where it got to (see `stop`).
    fn advance(&mut self, py: Python<'_>, until_s: f64) -> PyResult<bool> {
        let State::Running(sim) = &mut self.state else {
            return Ok(true);
        };
        let until = Instant::from_secs_f64(until_s);
        let started = std::time::Instant::now();
        let signalled = loop {
            let reached = py.detach(|| {
                let slice_started = std::time::Instant::now();
                loop {
                    if sim.run_until_at_most(until, SLICE_EVENTS) {
                        return true;
                    }
                    if slice_started.elapsed() >= SIGNAL_CHECK_INTERVAL {
                        return false;
                    }
                }
            });
            if reached {
                break None;
            }
            if let Err(e) = py.check_signals() {
                break Some(e);
            }
        };
        self.wall += started.elapsed();
        self.events = sim.events();
        if let Some(e) = signalled {
            self.now = sim.now();
            return Err(e);
        }
        let finished = sim.is_finished() || until >= sim.end();
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

    /// Ends a run that has not finished where it got to (`now_s`), so that its results so far
    /// can be written, marked incomplete (`complete` is then False). Nothing happens to a
    /// finished run.
    fn stop(&mut self, py: Python<'_>) {
        if let State::Running(sim) = std::mem::replace(&mut self.state, State::Empty) {
            let at = sim.now();
            let out = py.detach(|| sim.finish_at(at));
            self.state = State::Finished(Box::new(out));
            self.now = at;
            self.stopped_at = Some(at);
        }
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

    /// Table `name` of the finished run (`flow_series`, `flow_summary`, `link_series`,
    /// `metrics`, `packets`) as Arrow data, written nowhere; None for a table the run did not
    /// record.
    fn table(&self, name: &str) -> PyResult<Option<ArrowTable>> {
        match fairstream_results::tables::batch(name, self.output()?) {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(ArrowTable { batch })),
            Some(Err(e)) => Err(PyRuntimeError::new_err(format!("table {name}: {e}"))),
        }
    }

    /// Table `name` of the finished run as an Arrow IPC stream (bytes: what crosses from a worker
    /// process to the one that asked for the run, and what the run cache keeps of a table), or
    /// None for a table the run did not record. With `compressed`, the stream's buffers are
    /// zstd-compressed: several times smaller for a long series, as small as Parquet, and read
    /// several times faster than Parquet by any Arrow IPC reader.
    #[pyo3(signature = (name, compressed = false))]
    fn table_ipc<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        compressed: bool,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.table_bytes(py, name, |batch| {
            fairstream_results::ipc::stream(batch, compressed)
        })
    }

    /// Table `name` of the finished run as the bytes of the Parquet file `write_results` writes
    /// for it (the same bytes, written nowhere: what the run cache keeps of a packet trace, which
    /// a filter then reads only part of), or None for a table the run did not record.
    fn table_parquet<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.table_bytes(py, name, |batch| {
            fairstream_results::tables::parquet_bytes(name, batch)
        })
    }

    /// The run's summary as the JSON text `summary.json` holds; the run must be finished.
    fn summary_json(&self) -> PyResult<String> {
        let out = self.output()?;
        Ok(fairstream_results::summary::summary_json(&self.info(), out))
    }

    /// Writes the result files (Parquet tables, summary.json, resolved scenario, pcaps) into
    /// `out_dir`, created when absent and refused (OSError) unless empty; staging and what may
    /// be replaced are `fairstream.output`'s.
    fn write_results(&self, py: Python<'_>, out_dir: PathBuf) -> PyResult<()> {
        let out = self.output()?;
        let info = self.info();
        py.detach(|| write_dir(&out_dir, &info, out))
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }
}

impl Simulation {
    /// Table `name` encoded by `encode` (released from the GIL), as Python bytes; None for a
    /// table the run did not record.
    fn table_bytes<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        encode: impl FnOnce(&RecordBatch) -> Result<Vec<u8>, String> + Send,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let batch = match fairstream_results::tables::batch(name, self.output()?) {
            None => return Ok(None),
            Some(Ok(batch)) => batch,
            Some(Err(e)) => return Err(PyRuntimeError::new_err(format!("table {name}: {e}"))),
        };
        let bytes = py
            .detach(|| encode(&batch))
            .map_err(|e| PyRuntimeError::new_err(format!("table {name}: {e}")))?;
        Ok(Some(PyBytes::new(py, &bytes)))
    }

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
            stopped_at_s: self.stopped_at.map(Instant::as_secs_f64),
            emulated: None,
        }
    }
}

/// One table of a run as an Arrow record batch, handed to Python through the Arrow PyCapsule
/// interface (`__arrow_c_stream__`): `polars.DataFrame(table)` and `pyarrow.table(table)` import
/// it without a copy through a file.
#[pyclass(module = "fairstream._core", frozen)]
struct ArrowTable {
    batch: RecordBatch,
}

#[pymethods]
impl ArrowTable {
    /// An Arrow C stream of the table's one batch, in a PyCapsule named `arrow_array_stream`.
    /// `requested_schema` is accepted and ignored (the table has one schema).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__(
        &self,
        py: Python<'_>,
        requested_schema: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = requested_schema;
        let schema = self.batch.schema();
        let reader = RecordBatchIterator::new([Ok(self.batch.clone())], schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The capsule holds the stream; a consumer moves it out (leaving it released), and
        // dropping the capsule releases whatever was not consumed.
        Ok(
            PyCapsule::new_with_value(py, stream, c"arrow_array_stream")?
                .into_any()
                .unbind(),
        )
    }

    /// Rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// Column names, in order.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

/// The estimate as a dict (see `Simulation.estimate`).
fn estimate_dict(py: Python<'_>, e: &fairstream_sim::Estimate) -> PyResult<Py<PyAny>> {
    let parts = pyo3::types::PyDict::new(py);
    for part in fairstream_sim::Part::ALL {
        parts.set_item(format!("{part:?}").to_lowercase(), e.part(part))?;
    }
    let d = pyo3::types::PyDict::new(py);
    d.set_item("events", e.events)?;
    d.set_item("bytes", e.total_bytes())?;
    d.set_item("parts", parts)?;
    Ok(d.into_any().unbind())
}

/// A hash of this extension module's file (`__file__`), as 32 hex digits: any change to the
/// compiled code (a rebuild of any crate it links) gives another id. Read and hashed once per
/// process (the module is a few MB: milliseconds); an OSError when the file cannot be read.
#[pyfunction]
#[pyo3(pass_module)]
fn build_id(module: &Bound<'_, PyModule>) -> PyResult<String> {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(id) = ID.get() {
        return Ok(id.clone());
    }
    let path: PathBuf = module.getattr("__file__")?.extract()?;
    let bytes =
        std::fs::read(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
    Ok(ID.get_or_init(|| file_hash(&bytes)).clone())
}

/// Arrow IPC streams (bytes), in order, joined where consecutive ones share a schema: a list of
/// (one stream, the rows each of its inputs held). How a dataset reads a sweep's thousand
/// small tables in one read each (`fairstream.dataset`). A ValueError names an input that is
/// not a stream.
#[pyfunction]
fn join_ipc_streams<'py>(
    py: Python<'py>,
    streams: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Vec<(Bound<'py, PyBytes>, Vec<usize>)>> {
    let slices: Vec<&[u8]> = streams.iter().map(|b| b.as_bytes()).collect();
    let joined = py
        .detach(|| fairstream_results::ipc::join_streams(slices))
        .map_err(PyValueError::new_err)?;
    Ok(joined
        .into_iter()
        .map(|j| (PyBytes::new(py, &j.stream), j.rows))
        .collect())
}

/// 128 bits of SipHash over `bytes` (std's hasher, fixed keys, run twice with a different first
/// byte): a fingerprint of a file, not a defence against anyone forging one.
fn file_hash(bytes: &[u8]) -> String {
    use std::hash::Hasher;
    let half = |salt: u8| {
        let mut h = std::hash::DefaultHasher::new();
        h.write_u8(salt);
        h.write(bytes);
        h.finish()
    };
    format!("{:016x}{:016x}", half(0), half(1))
}

/// A declared column as a dict: name, unit, meaning, kind (`count`, `real`, `text`, `flag`).
fn column_dict<'py>(
    py: Python<'py>,
    c: &fairstream_records::Column,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    use fairstream_records::ColumnKind;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("name", c.name)?;
    d.set_item("unit", c.unit)?;
    d.set_item("meaning", c.meaning)?;
    let kind = match c.kind {
        ColumnKind::Count => "count",
        ColumnKind::Real => "real",
        ColumnKind::Text => "text",
        ColumnKind::Flag => "flag",
    };
    d.set_item("kind", kind)?;
    Ok(d)
}

/// What the run's tables declare beside their fixed columns, as each protocol and queue
/// discipline declares it: `metrics` (every metric: name, unit, meaning, and the flow-summary
/// column that summarises it, or None), `summary_columns` (those flow-summary columns, as
/// `column_dict`s), `queue_columns` (the link summary's queue parameters) and `queue_series`
/// (each interval series a queue discipline declares: its name and its declared columns).
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    use fairstream_proto::ProtocolConfig;
    let metrics = pyo3::types::PyList::empty(py);
    for m in ProtocolConfig::declared_metrics() {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("name", m.name)?;
        d.set_item("unit", m.unit)?;
        d.set_item("meaning", m.meaning)?;
        d.set_item("summary", m.summary.map(|s| s.column.name))?;
        metrics.append(d)?;
    }
    let columns = |list: Vec<&'static fairstream_records::Column>| {
        let out = pyo3::types::PyList::empty(py);
        for c in list {
            out.append(column_dict(py, c)?)?;
        }
        PyResult::Ok(out)
    };
    let d = pyo3::types::PyDict::new(py);
    d.set_item("metrics", metrics)?;
    d.set_item(
        "summary_columns",
        columns(ProtocolConfig::summary_columns())?,
    )?;
    d.set_item(
        "queue_columns",
        columns(fairstream_net::QueueConfig::columns())?,
    )?;
    let series = pyo3::types::PyDict::new(py);
    for t in fairstream_net::QueueConfig::series_tables() {
        series.set_item(t.name, columns(t.columns.to_vec())?)?;
    }
    d.set_item("queue_series", series)?;
    Ok(d.into_any().unbind())
}

/// Bytes of a memory size written as `"8GB"`, `"512MiB"` or a number of bytes; ValueError
/// saying what was expected otherwise.
#[pyfunction]
fn parse_memory(text: &str) -> PyResult<u64> {
    MemoryLimit::parse_bytes(text).map_err(PyValueError::new_err)
}

/// The one parser of quantities written with a unit, as scenarios write them: `kind` `"rate"`
/// (`"11Mbps"`, `"1.5 Mbit/s"`) gives bit/s, `"duration"` (`"35ms"`) nanoseconds, `"size"`
/// (`"1500B"`, `"64KiB"`) bytes; ValueError saying what was expected otherwise. Python reads
/// every number a run knows from its tables; this is for what a person wrote.
#[pyfunction]
fn parse_quantity(text: &str, kind: &str) -> PyResult<u64> {
    let err = |e: fairstream_core::UnitError| PyValueError::new_err(format!("`{text}`: {e}"));
    match kind {
        "rate" => text
            .parse::<fairstream_core::Bitrate>()
            .map(|r| r.as_bps())
            .map_err(err),
        "duration" => text
            .parse::<Duration>()
            .map(Duration::as_nanos)
            .map_err(err),
        "size" => text
            .parse::<fairstream_core::DataSize>()
            .map(|s| s.as_bytes())
            .map_err(err),
        _ => Err(PyValueError::new_err(format!(
            "unknown kind of quantity `{kind}`; expected \"rate\", \"duration\" or \"size\""
        ))),
    }
}

/// The memory a run may use when no limit is given: `(bytes, where the figure comes from)`.
#[pyfunction]
fn available_memory() -> (u64, String) {
    let limit = MemoryLimit::available();
    (limit.bytes, limit.source)
}

/// The name among `names` that `word` probably misspells, if one stands out (what a scenario's
/// errors suggest: `fairstream_core::closest`).
#[pyfunction]
fn closest_name(word: &str, names: Vec<String>) -> Option<String> {
    fairstream_core::closest(word, names.iter().map(String::as_str)).map(str::to_string)
}

/// Jain's fairness index of `xs`.
#[pyfunction]
fn jain(xs: Vec<f64>) -> f64 {
    fairstream_metrics::fairness::jain(&xs)
}

/// The max-min fair rates of flows over links by progressive filling: `capacity[l]` per link,
/// `paths[f]` the links flow `f` crosses, `demand[f]` its most (infinite for a greedy flow).
#[pyfunction]
fn max_min_rates(
    capacity: Vec<f64>,
    paths: Vec<Vec<usize>>,
    demand: Vec<f64>,
) -> PyResult<Vec<f64>> {
    if paths.len() != demand.len() || paths.iter().flatten().any(|&l| l >= capacity.len()) {
        return Err(PyValueError::new_err(
            "one demand per path, and every path's links within the capacities",
        ));
    }
    Ok(fairstream_metrics::fairness::max_min_rates(
        &capacity, &paths, &demand,
    ))
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

/// RFC 9438's average CUBIC window under a deterministic loss rate, packets.
#[pyfunction]
fn cubic_response(p: f64, rtt_s: f64, c: f64, beta: f64) -> f64 {
    fairstream_metrics::cubic_model::response_function(p, rtt_s, c, beta)
}

/// The mean CUBIC window of RFC 9438's rules under Bernoulli loss, by Monte Carlo, packets.
#[pyfunction]
fn cubic_response_under_bernoulli_loss(
    py: Python<'_>,
    p: f64,
    rtt_s: f64,
    rounds: u64,
    seed: u64,
    c: f64,
    beta: f64,
) -> f64 {
    py.detach(|| {
        fairstream_metrics::cubic_model::response_under_bernoulli_loss(
            p, rtt_s, rounds, seed, c, beta,
        )
    })
}

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("ScenarioWarning", m.py().get_type::<ScenarioWarning>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(build_id, m)?)?;
    m.add_function(wrap_pyfunction!(join_ipc_streams, m)?)?;
    m.add_function(wrap_pyfunction!(toml_text::toml_dumps, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(parse_memory, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(available_memory, m)?)?;
    m.add_function(wrap_pyfunction!(closest_name, m)?)?;
    m.add_function(wrap_pyfunction!(jain, m)?)?;
    m.add_function(wrap_pyfunction!(max_min_rates, m)?)?;
    m.add_function(wrap_pyfunction!(mathis, m)?)?;
    m.add_function(wrap_pyfunction!(padhye, m)?)?;
    m.add_function(wrap_pyfunction!(padhye_approx, m)?)?;
    m.add_function(wrap_pyfunction!(tfrc_equation, m)?)?;
    m.add_function(wrap_pyfunction!(cubic_response, m)?)?;
    m.add_function(wrap_pyfunction!(cubic_response_under_bernoulli_loss, m)?)?;
    m.add_function(wrap_pyfunction!(media::mpeg_policy_table, m)?)?;
    m.add_function(wrap_pyfunction!(media::mpeg_scale_rates, m)?)?;
    m.add_function(wrap_pyfunction!(media::import_video, m)?)?;
    m.add_class::<realnet::RealRun>()?;
    m.add_class::<emulate::EmuRun>()?;
    m.add_function(wrap_pyfunction!(emulate::emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emulator_unavailable, m)?)?;
    m.add_function(wrap_pyfunction!(emulate::emu_devices, m)?)?;
    m.add(
        "EmulatorUnavailable",
        m.py().get_type::<emulate::EmulatorUnavailable>(),
    )?;
    m.add_function(wrap_pyfunction!(realnet::real_time_protocols, m)?)?;
    m.add_function(wrap_pyfunction!(realnet::real_send, m)?)?;
    m.add_function(wrap_pyfunction!(realnet::real_recv, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
