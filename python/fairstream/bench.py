"""`fairstream bench`: the benchmarks B1-B3 in fairstream and in ns-3, side by side, on this machine.

For each benchmark and each of ``repeat`` rounds, three fresh processes run one after the other:

1. ``python -m fairstream.bench_worker`` builds and runs the scenario with `fairstream._core`
   alone and reports the in-process simulation time (build + run), the event count, its memory
   and the run's summary (the per-flow results and the resolved scenario);
2. ``python -m fairstream run SCENARIO -o DIR``, the whole command a user runs (start-up,
   simulation, results written), timed and measured from outside;
3. with the ``ns3`` extra installed, ``python -m fairstream.bench_ns3``: the same network and flows
   in ns-3 (same links and queues, same packet sizes, the flow start times fairstream drew, TCP
   settings chosen to model the same thing; see `fairstream.bench_ns3`), which reports its
   bindings import, set-up and ``Simulator::Run()`` times, its results and its memory.

Every child is started through `fairstream.bench_timer`, a small process that measures the wall
time and the peak resident memory (``ru_maxrss``) of exactly that command; the in-process children
also read their own memory from /proc.

Both simulators' results are compared (`agreement`): per-flow goodput within ±10 %, Jain's index
within 0.05, bottleneck drops within ±15 %; every criterion that fails is named. Times are shown
as the median and the range (min-max) over the rounds; nothing is divided by a figure measured
elsewhere. Before measuring, `wait_for_idle` waits (up to a limit) for the machine's 1-minute load
to fall below 0.5 and the report says whether it did.

`run_scaling` runs B2's shape with 8 to 1024 flows (or any list of flow counts, up to
`SCALING_FLOWS_FULL`'s 10 000) in fairstream (optionally in ns-3 too), with each size's events/s
against the smallest's and the memory each flow added beyond it.
Scenarios live in ``fairstream/scenarios/bench/``.

Ctrl-C: every child runs in a process group of its own, which is killed at once (a benchmark's
round half-done measures nothing); `BenchInterrupted` carries the benchmarks measured whole so
far, which ``fairstream bench`` prints and saves marked ``"complete": false``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import bench_ns3, tomlio
from .interrupt import Interrupted
from .scenario import packaged, with_overrides

#: Simulated duration of every benchmark under ``--quick`` (a smoke test, not a measurement).
QUICK_DURATION = "2s"

#: Agreement criteria: relative per-flow goodput difference, absolute Jain's index difference,
#: relative bottleneck-drop difference (both relative to fairstream's value).
GOODPUT_TOLERANCE = 0.10
JAIN_TOLERANCE = 0.05
DROPS_TOLERANCE = 0.15

#: The machine counts as idle below this 1-minute load average.
IDLE_LOAD = 0.5

#: Flow counts of the scaling row (B2's shape).
SCALING_FLOWS = (8, 64, 256, 1024)

#: The scaling row's long form (``--scaling-flows full``), to 10 000 flows (about 0.5 GB).
SCALING_FLOWS_FULL = (8, 64, 256, 1024, 4096, 10000)

#: Progress callback: one line of text.
Progress = Callable[[str], None]


class BenchInterrupted(Interrupted):
    """Ctrl-C stopped the benchmarks: `rows` were measured whole before it, `meta` (filled in by
    `measure`) is the machine and conditions, with ``"complete": False``."""

    def __init__(self, rows: list[dict[str, Any]]):
        super().__init__(f"interrupted after {len(rows)} whole benchmark(s)")
        self.rows = rows
        self.meta: dict[str, Any] = {}


@dataclass(frozen=True)
class Benchmark:
    """A benchmark scenario shipped with the package."""

    id: str
    description: str
    ns3: bool = True
    """Whether ns-3 can run it too (ns-3 has no TFRC, TFRC Wireless, MULTFRC or VTP)."""
    base: str | None = None
    """The benchmark whose scenario file this one runs with `overrides` (today's TCP on B1/B2)."""
    overrides: tuple[tuple[str, Any], ...] = ()
    """Dotted-path overrides of the base scenario."""
    default: bool = True
    """Whether ``fairstream bench`` without ids runs it (the TCP variants run when named)."""

    def path(self) -> Path:
        return packaged("bench", f"{self.base or self.id}.toml")


#: Today's TCP on B1's and B2's shapes, each against its ns-3 twin (issue 22): SACK with PRR (ns-3
#: TcpPrrRecovery), CUBIC on SACK (TcpCubic without HyStart), BBR on SACK (TcpBbr).
_SACK: tuple[tuple[str, Any], ...] = (("flow.0.variant", "sack"), ("flow.0.prr", True))
_TODAYS_TCP: tuple[tuple[str, str, str, str, tuple[tuple[str, Any], ...]], ...] = (
    ("B1", "sack", "SACK (RFC 6675, PRR)", "SACK, TcpPrrRecovery", _SACK),
    ("B2", "sack", "SACK (RFC 6675, PRR)", "SACK, TcpPrrRecovery", _SACK),
    ("B1", "cubic", "CUBIC on SACK", "TcpCubic, SACK", (*_SACK, ("flow.0.control", "cubic"))),
    ("B2", "cubic", "CUBIC on SACK", "TcpCubic, SACK", (*_SACK, ("flow.0.control", "cubic"))),
    ("B2", "bbr", "BBR v1 on SACK", "TcpBbr, SACK", (*_SACK, ("flow.0.control", "bbr"))),
)

BENCHMARKS: dict[str, Benchmark] = {
    b.id: b
    for b in (
        Benchmark("B1", "dumbbell, 2 NewReno flows, 11 Mbps / 1 ms bottleneck, 300 s"),
        Benchmark("B2", "dumbbell, 64 NewReno flows, 100 Mbps / 10 ms bottleneck, 60 s"),
        Benchmark("B3", "20 Mbps UDP CBR into a 10 Mbps / 10 ms bottleneck, 300 s"),
        Benchmark("B4", "vtp-friendly: VTP + NewReno over an 11 Mbps link at 5 % PER, 300 s", ns3=False),
        Benchmark("B5", "dumbbell, 64 TFRC flows, 100 Mbps / 10 ms bottleneck, 60 s", ns3=False),
        Benchmark("B6", "abr-tcp4: 4 TCP flows on ABR VCs, ERICA ports, 1.5 Mbps T1, 60 s", ns3=False),
        Benchmark("B7", "155 Mbps parking lot, 3 TCP flows on ABR VCs, ERICA ports, 10 s", ns3=False),
        *(
            Benchmark(
                f"{base}-{name.upper()}",
                f"{base} with {what} (ns-3: {ns3_what})",
                base=base,
                overrides=(("name", f"{base}-{name.upper()}"), *overrides),
                default=False,
            )
            for base, name, what, ns3_what, overrides in _TODAYS_TCP
        ),
    )
}


def worker_summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a run's summary a `fairstream.bench_worker` report carries (its flows, links and
    simulated duration), as `bench_ns3.spec_from_run` reads it."""
    return {"flows": report["flows"], "links": report["links"], "duration_s": report["sim_duration_s"]}


# --------------------------------------------------------------------------- scenarios


def scenario_text(
    bench: Benchmark, duration: str | None = None, overrides: Mapping[str, Any] | None = None
) -> str:
    """The benchmark's scenario, with its duration and any dotted-path `overrides` replaced."""
    text = bench.path().read_text(encoding="utf-8")
    changes = {**dict(bench.overrides), **dict(overrides or {})}
    if duration is not None:
        changes["duration"] = duration
    if not changes:
        return text
    return tomlio.dumps(with_overrides(tomlio.loads(text), changes))


def scaling_text(flows: int, duration: str | None = None) -> str:
    """B2's shape with `flows` hosts per side and `flows` flows."""
    return scenario_text(
        BENCHMARKS["B2"],
        duration,
        {"name": f"B2-{flows}", "topology.hosts": flows, "flow.0.count": flows},
    )


# --------------------------------------------------------------------------- processes


def _env() -> dict[str, str]:
    package_root = str(Path(__file__).resolve().parent.parent)
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p),
    }


def _run_child(
    command: Sequence[str],
    stdin: bytes | None,
    cwd: str | os.PathLike[str] | None,
    what: str,
    env: Mapping[str, str] | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Runs `command` through bench_timer, with `env` added to the environment; returns its stdout
    and the timer's report."""
    timer = Path(__file__).with_name("bench_timer.py")
    with tempfile.TemporaryDirectory(prefix="fairstream-bench-") as tmp:
        report_path = Path(tmp) / "timer.json"
        with tempfile.TemporaryFile() as errors:
            # A process group of its own (the timer and the command it starts), killed as a
            # whole on Ctrl-C or any other failure here: no child outlives the parent.
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(timer), str(report_path), "--", *command],
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                cwd=cwd,
                env={**_env(), **(env or {})},
                start_new_session=True,
            )
            try:
                # Not `communicate`, which on KeyboardInterrupt waits 0.25 s for the child to exit
                # by itself (it would, had a terminal signalled its group; this one has none).
                # The children read all their input before they write.
                assert proc.stdout is not None
                if proc.stdin is not None:
                    proc.stdin.write(stdin or b"")
                    proc.stdin.close()
                out = proc.stdout.read()
                proc.stdout.close()
                proc.wait()
            except BaseException:
                _kill_group(proc)
                raise
            if proc.returncode != 0 or not report_path.exists():
                errors.seek(0)
                message = errors.read().decode(errors="replace")[-4000:]
                raise RuntimeError(f"{what} failed (exit {proc.returncode}):\n{message}")
        timing = json.loads(report_path.read_text(encoding="utf-8"))
    return out, timing


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kills `proc`'s process group (it leads one) and reaps `proc`."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def run_fairstream(text: str, filename: str) -> dict[str, Any]:
    """One in-process run of a scenario in a fresh `bench_worker` child; its report."""
    job = json.dumps({"text": text, "filename": filename}).encode()
    out, timing = _run_child([sys.executable, "-m", "fairstream.bench_worker"], job, None, f"{filename}")
    report = json.loads(out)
    report["peak_kib"] = report.get("vmhwm_kib") or timing["maxrss_kib"]
    return report


def run_cli(text: str, name: str) -> dict[str, Any]:
    """``python -m fairstream run SCENARIO -o DIR -q`` as a whole process: wall time and peak memory.
    The child has a cold run cache of its own, so that every round simulates, as a user's first
    run of a scenario does (lookup, run, store); with the user's cache, every round after the
    first would be answered from disk."""
    with tempfile.TemporaryDirectory(prefix="fairstream-bench-") as tmp:
        scenario = Path(tmp) / f"{name}.toml"
        scenario.write_text(text, encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "fairstream",
            "run",
            str(scenario),
            "-o",
            str(Path(tmp) / "out"),
            "-q",
        ]
        cold = {"FAIRSTREAM_CACHE": str(Path(tmp) / "cache")}
        _, timing = _run_child(command, None, tmp, f"fairstream run {name}", cold)
        written = sorted(p.name for p in (Path(tmp) / "out").iterdir())
    return {"wall_s": timing["wall_s"], "peak_kib": timing["maxrss_kib"], "files": written}


def run_ns3(spec: Mapping[str, Any]) -> dict[str, Any]:
    """One ns-3 run of `spec` in a fresh process; its report plus the whole process's wall time and peak."""
    # The bindings search their libraries recursively below the working directory: start the
    # child in an empty one.
    with tempfile.TemporaryDirectory(prefix="fairstream-ns3-") as tmp:
        out, timing = _run_child(
            [sys.executable, "-m", "fairstream.bench_ns3"],
            json.dumps(spec).encode(),
            tmp,
            f"ns-3 {spec['name']}",
        )
    report = json.loads(out)
    report["process_wall_s"] = timing["wall_s"]
    report["process_peak_kib"] = max(timing["maxrss_kib"], report.get("vmhwm_kib") or 0)
    return report


# --------------------------------------------------------------------------- the machine


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def wait_for_idle(
    max_wait_s: float, threshold: float = IDLE_LOAD, poll_s: float = 5.0, progress: Progress | None = None
) -> dict[str, Any]:
    """Waits up to `max_wait_s` for the 1-minute load to fall below `threshold`.

    Returns ``{"load": ..., "idle": ..., "waited_s": ...}``; idle is None when the load is unknown.
    """
    started = time.monotonic()
    load = load_average()
    announced = False
    while load is not None and load >= threshold and time.monotonic() - started < max_wait_s:
        if progress and not announced:
            progress(f"waiting up to {max_wait_s:g} s for the machine to be idle (1-min load {load:.2f})")
            announced = True
        time.sleep(min(poll_s, max(0.0, max_wait_s - (time.monotonic() - started))))
        load = load_average()
    return {
        "load": load,
        "idle": None if load is None else load < threshold,
        "waited_s": time.monotonic() - started,
        "threshold": threshold,
    }


def machine() -> dict[str, Any]:
    """What the benchmarks ran on."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
    }


def ns3_info() -> dict[str, Any] | None:
    """The installed ns-3 (version and build), or None without the ``ns3`` extra."""
    if not bench_ns3.available():
        return None
    return {"version": bench_ns3.version(), "build": bench_ns3.BUILD_NOTE}


# --------------------------------------------------------------------------- agreement


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index, as the core computes it (1.0 for all zero; NaN for no flows)."""
    from ._core import jain as core_jain

    return core_jain([float(v) for v in values])


def relative(ours: float, theirs: float) -> float:
    """(theirs − ours) / ours: how far ns-3's value is from fairstream's, as a fraction."""
    if ours == 0:
        return 0.0 if theirs == 0 else math.inf
    return (theirs - ours) / ours


def agreement(
    fairstream: Mapping[str, Any],
    ns3: Mapping[str, Any],
    goodput_tolerance: float = GOODPUT_TOLERANCE,
    jain_tolerance: float = JAIN_TOLERANCE,
    drops_tolerance: float = DROPS_TOLERANCE,
) -> dict[str, Any]:
    """Compares two simulators' results of one scenario.

    Each side is ``{"flows": [{"name", "goodput_bps"}, ...], "drops": int}`` with the flows in
    the same order. Differences are relative to fairstream's value. Returns the per-flow rows,
    Jain's index and drops of both, ``failed`` (one sentence per criterion that failed) and
    ``agree`` (no criterion failed).
    """
    ours, theirs = list(fairstream["flows"]), list(ns3["flows"])
    if [f["name"] for f in ours] != [f["name"] for f in theirs]:
        raise ValueError("the two simulators' flows differ")
    flows = []
    for a, b in zip(ours, theirs, strict=True):
        diff = relative(a["goodput_bps"], b["goodput_bps"])
        flows.append(
            {
                "name": a["name"],
                "fairstream_bps": a["goodput_bps"],
                "ns3_bps": b["goodput_bps"],
                "diff": diff,
                "ok": abs(diff) <= goodput_tolerance,
            }
        )
    jain_fs = jain([f["goodput_bps"] for f in ours])
    jain_ns3 = jain([f["goodput_bps"] for f in theirs])
    drops_diff = relative(fairstream["drops"], ns3["drops"])
    result = {
        "flows": flows,
        "jain": {
            "fairstream": jain_fs,
            "ns3": jain_ns3,
            "diff": jain_ns3 - jain_fs,
            "ok": abs(jain_ns3 - jain_fs) <= jain_tolerance,
        },
        "drops": {
            "fairstream": fairstream["drops"],
            "ns3": ns3["drops"],
            "diff": drops_diff,
            "ok": abs(drops_diff) <= drops_tolerance,
        },
        "tolerances": {"goodput": goodput_tolerance, "jain": jain_tolerance, "drops": drops_tolerance},
    }
    failed = []
    bad = [f for f in flows if not f["ok"]]
    if bad:
        worst = max(bad, key=lambda f: abs(f["diff"]))
        failed.append(
            f"per-flow goodput: {len(bad)} of {len(flows)} flow(s) differ by more than "
            f"±{goodput_tolerance:.0%} (worst {worst['name']} {pct(worst['diff'])})"
        )
    if not result["jain"]["ok"]:
        failed.append(f"Jain's index: {jain_fs:.4f} vs {jain_ns3:.4f} differ by more than {jain_tolerance:g}")
    if not result["drops"]["ok"]:
        failed.append(
            f"bottleneck drops: {fairstream['drops']} vs {ns3['drops']} differ by {pct(drops_diff)} "
            f"(more than ±{drops_tolerance:.0%})"
        )
    result["failed"] = failed
    result["agree"] = not failed
    return result


def pct(x: float) -> str:
    """A fraction as a signed percentage, e.g. ``+3.1 %``."""
    return "∞ %" if math.isinf(x) else f"{x * 100:+.1f} %"


# --------------------------------------------------------------------------- running


def _spread(values: Sequence[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "all": list(values)}


def run_benchmarks(
    ids: Sequence[str] | None = None,
    repeat: int = 3,
    quick: bool = False,
    duration: str | None = None,
    ns3: bool | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Runs each benchmark `repeat` times in fairstream and (`ns3`: default when installed) ns-3.

    `quick` shortens every run to `QUICK_DURATION` (a smoke test), `duration` to any duration.
    Returns one row per benchmark (see the module docstring; `format_report` prints them).
    """
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    chosen = [_get(i) for i in ids] if ids else [b for b in BENCHMARKS.values() if b.default]
    with_ns3 = bench_ns3.available() if ns3 is None else ns3
    if with_ns3 and not bench_ns3.available():
        raise RuntimeError(f"ns-3 is not installed: {bench_ns3.INSTALL_HINT}")
    if quick and duration is None:
        duration = QUICK_DURATION
    rows: list[dict[str, Any]] = []
    try:
        for bench in chosen:
            rows.append(_run_one(bench, repeat, duration, with_ns3, progress))
    except KeyboardInterrupt:
        raise BenchInterrupted(rows) from None
    return rows


def _run_one(
    bench: Benchmark, repeat: int, duration: str | None, with_ns3: bool, progress: Progress | None
) -> dict[str, Any]:
    text = scenario_text(bench, duration)
    filename = str(bench.path())
    sims: list[dict[str, Any]] = []
    clis: list[dict[str, Any]] = []
    ns3_runs: list[dict[str, Any]] = []
    spec: dict[str, Any] | None = None
    for k in range(repeat):
        if progress:
            progress(f"bench {bench.id}: round {k + 1}/{repeat}: fairstream")
        sims.append(run_fairstream(text, filename))
        clis.append(run_cli(text, bench.id))
        if with_ns3 and bench.ns3:
            if spec is None:
                spec = bench_ns3.spec_from_run(sims[0]["resolved_toml"], worker_summary(sims[0]))
            if progress:
                progress(f"bench {bench.id}: round {k + 1}/{repeat}: ns-3")
            ns3_runs.append(run_ns3(spec))
    first = sims[0]
    fs_walls = [s["wall_s"] for s in sims]
    row: dict[str, Any] = {
        "benchmark": bench.id,
        "description": bench.description,
        "duration_s": first["sim_duration_s"],
        "repeat": repeat,
        "fairstream": {
            "sim_s": _spread(fs_walls),
            "events": first["events"],
            "events_per_s": first["events"] / statistics.median(fs_walls),
            "packets": first["packets"],
            "peak_mb": max(s["peak_kib"] for s in sims) / 1024,
            "state_mb": _state_mb(first.get("rss_imported_kib"), first.get("rss_end_kib")),
            "process_s": _spread([c["wall_s"] for c in clis]),
            "process_peak_mb": max(c["peak_kib"] for c in clis) / 1024,
            "flows": first["flows"],
            "bottleneck_drops": first["bottleneck_drops"],
            "repeatable": all(s["flows"] == first["flows"] for s in sims),
        },
        "ns3": None,
        "agreement": None,
    }
    if ns3_runs:
        assert spec is not None
        n = ns3_runs[0]
        sim_s = [r["wall_s"] for r in ns3_runs]
        run_s = [r["run_s"] for r in ns3_runs]
        row["ns3"] = {
            "sim_s": _spread(sim_s),
            "setup_s": _spread([r["setup_s"] for r in ns3_runs]),
            "run_s": _spread(run_s),
            "import_s": _spread([r["import_s"] for r in ns3_runs]),
            "events": n["events"],
            "events_per_s": n["events"] / statistics.median(run_s) if statistics.median(run_s) > 0 else None,
            "process_s": _spread([r["process_wall_s"] for r in ns3_runs]),
            "process_peak_mb": max(r["process_peak_kib"] for r in ns3_runs) / 1024,
            "state_mb": _state_mb(n.get("rss_imported_kib"), n.get("rss_end_kib")),
            "flows": n["flows"],
            "bottleneck_drops": n["bottleneck_drops"],
            "version": n.get("ns3_version"),
            "settings": bench_ns3.settings(spec),
            "repeatable": all(r["flows"] == n["flows"] for r in ns3_runs),
        }
        row["speedup"] = statistics.median(sim_s) / statistics.median(fs_walls)
        row["agreement"] = agreement(
            {"flows": first["flows"], "drops": first["bottleneck_drops"]},
            {"flows": n["flows"], "drops": n["bottleneck_drops"]},
        )
    return row


def _state_mb(before_kib: int | None, after_kib: int | None) -> float | None:
    if before_kib is None or after_kib is None:
        return None
    return max(0, after_kib - before_kib) / 1024


def run_scaling(
    flows: Sequence[int] = SCALING_FLOWS,
    repeat: int = 3,
    quick: bool = False,
    duration: str | None = None,
    ns3: bool = False,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """B2's shape at each flow count in fairstream (and, with `ns3`, one ns-3 run each)."""
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    if ns3 and not bench_ns3.available():
        raise RuntimeError(f"ns-3 is not installed: {bench_ns3.INSTALL_HINT}")
    if quick and duration is None:
        duration = QUICK_DURATION
    rows: list[dict[str, Any]] = []
    try:
        _scale(rows, flows, repeat, duration, ns3, progress)
    except KeyboardInterrupt:
        raise BenchInterrupted(rows) from None
    return rows


def _scale(
    rows: list[dict[str, Any]],
    flows: Sequence[int],
    repeat: int,
    duration: str | None,
    ns3: bool,
    progress: Progress | None,
) -> None:
    """The rows of `run_scaling`, appended to `rows` as each is measured."""
    for n in flows:
        text = scaling_text(n, duration)
        if progress:
            progress(f"scaling: {n} flows, {repeat} run(s)")
        runs = [run_fairstream(text, f"B2-{n}.toml") for _ in range(repeat)]
        walls = [r["wall_s"] for r in runs]
        row: dict[str, Any] = {
            "flows": n,
            "duration_s": runs[0]["sim_duration_s"],
            "events": runs[0]["events"],
            "sim_s": _spread(walls),
            "events_per_s": runs[0]["events"] / statistics.median(walls),
            "build_s": _spread([r["build_s"] for r in runs]),
            "run_events_per_s": runs[0]["events"]
            / statistics.median(r["wall_s"] - r["build_s"] for r in runs),
            "peak_mb": max(r["peak_kib"] for r in runs) / 1024,
            "state_mb": _state_mb(runs[0].get("rss_imported_kib"), runs[0].get("rss_end_kib")),
            "ns3": None,
        }
        if ns3:
            if progress:
                progress(f"scaling: {n} flows in ns-3")
            spec = bench_ns3.spec_from_run(runs[0]["resolved_toml"], worker_summary(runs[0]))
            r = run_ns3(spec)
            row["ns3"] = {
                "sim_s": r["wall_s"],
                "run_s": r["run_s"],
                "events": r["events"],
                "events_per_s": r["events"] / r["run_s"] if r["run_s"] > 0 else None,
                "peak_mb": r["process_peak_kib"] / 1024,
                "state_mb": _state_mb(r.get("rss_imported_kib"), r.get("rss_end_kib")),
            }
        rows.append(row)
    _relate(rows)


def _relate(rows: list[dict[str, Any]]) -> None:
    """Adds to each scaling row its event rate relative to the first (smallest) row's
    (``slowdown``: the first row's events per second of the run itself, the build left out, over
    this row's; 1 when flat) and the memory each flow beyond the first row's added
    (``kib_per_flow``: the growth of what the run added, over the growth in flows)."""
    if not rows:
        return
    first = rows[0]
    for r in rows:
        rate = r["run_events_per_s"]
        r["slowdown"] = first["run_events_per_s"] / rate if rate > 0 else None
        more = r["flows"] - first["flows"]
        grew = (
            None if r["state_mb"] is None or first["state_mb"] is None else r["state_mb"] - first["state_mb"]
        )
        r["kib_per_flow"] = grew * 1024 / more if more > 0 and grew is not None else None


def measure(
    ids: Sequence[str] | None = None,
    repeat: int = 3,
    quick: bool = False,
    duration: str | None = None,
    ns3: bool | None = None,
    scaling: bool = False,
    idle_wait_s: float = 120.0,
    progress: Progress | None = None,
    scaling_flows: Sequence[int] = SCALING_FLOWS,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What `fairstream bench` does: waits for an idle machine, then runs the benchmarks (or, with
    `scaling`, the scaling row at `scaling_flows`; ns-3 there only when `ns3` is True). Returns
    (rows, meta)."""
    if quick and duration is None:
        duration = QUICK_DURATION
    installed = ns3_info()
    idle = wait_for_idle(idle_wait_s, progress=progress)
    if idle["idle"] is False and progress:
        progress(f"warning: the machine is not idle (1-min load {idle['load']:.2f}); measuring anyway")
    try:
        if scaling:
            rows = run_scaling(
                scaling_flows, repeat=repeat, duration=duration, ns3=bool(ns3), progress=progress
            )
        else:
            rows = run_benchmarks(ids, repeat=repeat, duration=duration, ns3=ns3, progress=progress)
    except BenchInterrupted as stop:
        stop.meta = _meta(idle, installed, ns3, repeat, duration, scaling, complete=False)
        raise
    return rows, _meta(idle, installed, ns3, repeat, duration, scaling, complete=True)


def _meta(
    idle: dict[str, Any],
    installed: dict[str, Any] | None,
    ns3: bool | None,
    repeat: int,
    duration: str | None,
    scaling: bool,
    complete: bool,
) -> dict[str, Any]:
    """The machine and conditions of a measurement; `complete`: False when Ctrl-C cut it short."""
    return {
        "machine": machine(),
        "idle": idle,
        "load_after": load_average(),
        "ns3": installed,
        "ns3_skipped": installed is not None and not (ns3 or (ns3 is None and not scaling)),
        "repeat": repeat,
        "duration": duration,
        "scaling": scaling,
        "tolerances": {"goodput": GOODPUT_TOLERANCE, "jain": JAIN_TOLERANCE, "drops": DROPS_TOLERANCE},
        "complete": complete,
    }


def write_json(
    path: str | os.PathLike[str], rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]
) -> None:
    """Saves the rows with the machine and conditions they were measured in."""
    doc = {**meta, "benchmarks": list(rows)}  # with meta["scaling"] true: the scaling rows
    Path(path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _get(bench_id: str) -> Benchmark:
    try:
        return BENCHMARKS[bench_id.upper()]
    except KeyError:
        raise KeyError(f"no benchmark {bench_id!r}; known: {', '.join(BENCHMARKS)}") from None
