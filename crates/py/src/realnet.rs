//! `real_send` / `real_recv`: the real-time driver (`fairstream-rt`) from Python. The run goes
//! on a thread of its own while the calling thread, without the GIL, waits for its live lines;
//! between them it takes the GIL back to hand each line to Python and to run Python's signal
//! handlers, so that Ctrl-C stops the run (within [`POLL`]) and its results so far are kept.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use fairstream_core::{Bitrate, Duration};
use fairstream_records::RunOutput;
use fairstream_results::{RunInfo, write_dir};
use fairstream_rt::record::Live;
use fairstream_rt::{RecvConfig, RtError, RtProtocol, SendConfig, StopReason};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::ArrowTable;

/// How often the waiting thread takes the GIL back when no live line comes.
const POLL: std::time::Duration = std::time::Duration::from_millis(100);

fn rt_err(e: RtError) -> PyErr {
    match e {
        RtError::Io(_) | RtError::Results(_) => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

fn resolve(addr: &str) -> Result<SocketAddr, RtError> {
    let bad = |reason: String| RtError::Resolve {
        addr: addr.to_string(),
        reason,
    };
    addr.to_socket_addrs()
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("no address".to_string()))
}

/// A finished real run, one side of it.
#[pyclass(module = "fairstream._core", frozen)]
pub(crate) struct RealRun {
    output: RunOutput,
    info: RunInfo,
    stop: StopReason,
    extra: serde_json::Value,
}

#[pymethods]
impl RealRun {
    /// What the run was asked to do, as TOML.
    fn resolved_toml(&self) -> &str {
        &self.info.resolved
    }

    /// Why the run stopped: `finished`, `interrupted`, or what tripped the circuit breaker.
    #[getter]
    fn stop_reason(&self) -> String {
        self.stop.to_string()
    }

    /// Whether the run went to its end (not interrupted by Ctrl-C).
    #[getter]
    fn complete(&self) -> bool {
        self.stop != StopReason::Interrupted
    }

    /// The run's summary (as in `summary.json`).
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let text = fairstream_results::summary::summary_json(&self.info, &self.output);
        let json = py.import("json")?;
        Ok(json.call_method1("loads", (text,))?.unbind())
    }

    /// What the real-time driver saw besides the tables (as in `rt.json`): pacing lateness
    /// percentiles, datagrams ignored and malformed, the stop reason.
    fn rt_stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let json = py.import("json")?;
        Ok(json
            .call_method1("loads", (self.extra.to_string(),))?
            .unbind())
    }

    /// Table `name` (`flow_series`, `flow_summary`, `metrics`) as Arrow data; None for a
    /// table a real run does not record.
    fn table(&self, name: &str) -> PyResult<Option<ArrowTable>> {
        match fairstream_results::tables::batch(name, &self.output) {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(ArrowTable { batch })),
            Some(Err(e)) => Err(PyRuntimeError::new_err(format!("table {name}: {e}"))),
        }
    }

    /// Writes the result files and `rt.json` into `out_dir` (created when absent, refused
    /// unless empty).
    fn write_results(&self, py: Python<'_>, out_dir: PathBuf) -> PyResult<()> {
        py.detach(|| {
            write_dir(&out_dir, &self.info, &self.output)
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    std::fs::write(out_dir.join("rt.json"), self.extra.to_string())
                        .map_err(|e| format!("{}: {e}", out_dir.join("rt.json").display()))
                })
        })
        .map_err(PyOSError::new_err)
    }
}

impl RealRun {
    fn new(
        name: &str,
        resolved: String,
        t0: std::time::Instant,
        output: RunOutput,
        stop: StopReason,
        extra: serde_json::Value,
    ) -> Self {
        let info = RunInfo {
            name: name.to_string(),
            resolved,
            wall_time_s: t0.elapsed().as_secs_f64(),
            stopped_at_s: (stop == StopReason::Interrupted).then(|| output.duration.as_secs_f64()),
            emulated: None,
        };
        Self {
            output,
            info,
            stop,
            extra,
        }
    }
}

/// Runs `work` on a thread of its own; passes its live lines to `show` (with `on_live`) and
/// checks Python's signals between them. Ctrl-C sets the stop flag: the run ends and returns
/// what it has. Shared by the real-time driver and the emulator.
pub(crate) fn drive_with<T: Send + 'static, L: Copy + Send + 'static, E: Send + 'static>(
    py: Python<'_>,
    on_live: Option<Py<PyAny>>,
    show: impl Fn(Python<'_>, &Py<PyAny>, L) -> PyResult<()>,
    work: impl FnOnce(&AtomicBool, &mut dyn FnMut(&L)) -> Result<T, E> + Send + 'static,
) -> PyResult<Result<T, E>> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<L>();
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || {
        work(&flag, &mut |l| {
            let _ = tx.send(*l);
        })
    });
    let mut rx = rx;
    // An error of the live callback stops the run too (a signal handler may raise inside it);
    // the run is still joined, and the error raised after, unless it was Ctrl-C's (the run's
    // result then says it was stopped).
    let mut failed: Option<PyErr> = None;
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            Ok(l) => {
                if let (Some(f), None) = (&on_live, &failed)
                    && let Err(e) = show(py, f, l)
                {
                    stop.store(true, Ordering::Relaxed);
                    failed = Some(e);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if py.check_signals().is_err() {
            stop.store(true, Ordering::Relaxed);
        }
    }
    let joined = py
        .detach(|| handle.join())
        .map_err(|_| PyRuntimeError::new_err("the run's thread panicked"))?;
    match failed {
        Some(e) if !e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => Err(e),
        _ => Ok(joined),
    }
}

/// [`drive_with`] for the real-time driver's live lines.
fn drive<T: Send + 'static>(
    py: Python<'_>,
    on_live: Option<Py<PyAny>>,
    work: impl FnOnce(&AtomicBool, &mut dyn FnMut(&Live)) -> Result<T, RtError> + Send + 'static,
) -> PyResult<T> {
    let show = |py: Python<'_>, f: &Py<PyAny>, l: Live| {
        let rtt = l.rtt.map(Duration::as_secs_f64);
        f.call1(py, (l.t_s, l.rate_bps, rtt, l.loss)).map(|_| ())
    };
    drive_with(py, on_live, show, work)?.map_err(rt_err)
}

fn pacing_json(l: &fairstream_rt::pacer::Lateness) -> serde_json::Value {
    let us = |q: f64| l.quantile(q).as_nanos() as f64 / 1e3;
    serde_json::json!({
        "sends": l.count(),
        "p50_us": us(0.5),
        "p90_us": us(0.9),
        "p99_us": us(0.99),
        "p999_us": us(0.999),
        "max_us": l.max().as_nanos() as f64 / 1e3,
    })
}

/// The protocols `real_send` runs, by name, in the protocol list's order.
#[pyfunction]
pub(crate) fn real_time_protocols() -> Vec<&'static str> {
    RtProtocol::ALL.into_iter().map(RtProtocol::name).collect()
}

/// Sends a flow of `protocol` to the receiver at `to` (`host:port`) for `duration` (such as
/// `"30s"`), at most `rate_cap` (such as `"50Mbps"`); `on_live(t_s, rate_bps, rtt_s, loss)` is
/// called about once a second.
#[pyfunction]
#[pyo3(signature = (to, protocol, duration="30s", rate_cap=None, on_live=None))]
pub(crate) fn real_send(
    py: Python<'_>,
    to: &str,
    protocol: &str,
    duration: &str,
    rate_cap: Option<&str>,
    on_live: Option<Py<PyAny>>,
) -> PyResult<RealRun> {
    let protocol = fairstream_rt::protocol::parse(protocol).map_err(rt_err)?;
    let d: Duration = duration
        .parse()
        .ok()
        .filter(|d: &Duration| !d.is_zero())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "duration `{duration}`: expected a positive time such as 30s or 500ms"
            ))
        })?;
    let cap = rate_cap
        .map(|c| {
            c.parse::<Bitrate>()
                .ok()
                .filter(|b| b.as_bps() > 0)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "rate cap `{c}`: expected a positive rate such as 50Mbps or 800kbps"
                    ))
                })
        })
        .transpose()?;
    let to = resolve(to).map_err(rt_err)?;
    let mut cfg = SendConfig::new(to, protocol, d);
    cfg.rate_cap = cap;
    let resolved = format!(
        "# fairstream send\nto = \"{to}\"\nprotocol = \"{}\"\nduration = \"{duration}\"\nrate_cap = \"{}\"\n",
        protocol.name(),
        rate_cap.unwrap_or("none")
    );
    let t0 = std::time::Instant::now();
    let r = drive(py, on_live, move |stop, live| {
        fairstream_rt::run_sender(&cfg, stop, live)
    })?;
    let extra = serde_json::json!({
        "role": "send",
        "stop_reason": r.stop.to_string(),
        "pacing": pacing_json(&r.lateness),
        "feedback_reports": r.feedback,
        "ignored_datagrams": r.ignored,
        "malformed_datagrams": r.malformed,
        "send_buffer_drops": r.send_drops,
        "lying_reports": r.lies,
    });
    Ok(RealRun::new("send", resolved, t0, r.output, r.stop, extra))
}

/// Receives one sender's flow on `listen` (`host:port`) until the sender has been silent for
/// `idle_timeout_s` (or Ctrl-C); `wait_s`: how long to wait for a sender at all (None: forever).
#[pyfunction]
#[pyo3(signature = (listen, on_live=None, idle_timeout_s=3.0, wait_s=None))]
pub(crate) fn real_recv(
    py: Python<'_>,
    listen: &str,
    on_live: Option<Py<PyAny>>,
    idle_timeout_s: f64,
    wait_s: Option<f64>,
) -> PyResult<RealRun> {
    let mut cfg = RecvConfig::new(resolve(listen).map_err(rt_err)?);
    cfg.idle_timeout = Duration::from_secs_f64(idle_timeout_s.max(0.0));
    cfg.wait_for_sender = wait_s.map(|s| Duration::from_secs_f64(s.max(0.0)));
    let sock = fairstream_rt::bind_receiver(&cfg).map_err(rt_err)?;
    let resolved = format!("# fairstream recv\nlisten = \"{}\"\n", cfg.listen);
    let t0 = std::time::Instant::now();
    let r = drive(py, on_live, move |stop, live| {
        fairstream_rt::run_receiver(&cfg, &sock, stop, live)
    })?;
    let extra = serde_json::json!({
        "role": "recv",
        "stop_reason": r.stop.to_string(),
        "protocol": r.protocol.map(RtProtocol::name),
        "ignored_datagrams": r.ignored,
        "malformed_datagrams": r.malformed,
    });
    Ok(RealRun::new("recv", resolved, t0, r.output, r.stop, extra))
}
