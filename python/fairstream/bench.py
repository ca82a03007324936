"""`fairstream bench`: the benchmarks B1-B3 against their ns-3.48 reference numbers.

Each repeat runs in a fresh child process (`fairstream.bench_worker`, which imports only
`fairstream._core` and writes no Parquet); the child reports the run's wall time, event count and
(on Linux) its peak resident memory from /proc (VmHWM); elsewhere the parent takes the child's
ru_maxrss from ``os.wait4``. Scenarios live in ``fairstream/scenarios/bench/``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import tomlio
from .scenario import packaged, with_overrides
from .table import format_table

#: Simulated duration of every benchmark under ``--quick`` (a smoke test, not a measurement).
QUICK_DURATION = "2s"


@dataclass(frozen=True)
class Benchmark:
    """A benchmark scenario and the ns-3.48 numbers it is compared with."""

    id: str
    description: str
    ns3_wall_s: float
    ns3_mb: float

    def path(self) -> Path:
        return packaged("bench", f"{self.id}.toml")


BENCHMARKS: dict[str, Benchmark] = {
    b.id: b
    for b in (
        Benchmark("B1", "dumbbell, 2 NewReno flows, 11 Mbps / 1 ms bottleneck, 300 s", 5.29, 19.0),
        Benchmark("B2", "dumbbell, 64 NewReno flows, 100 Mbps / 10 ms bottleneck, 60 s", 22.7, 93.0),
        Benchmark("B3", "20 Mbps UDP CBR into a 10 Mbps / 10 ms bottleneck, 300 s", 2.95, 16.5),
    )
}

HEADERS = ("benchmark", "wall s (median)", "events/s", "peak MB", "ns-3 wall s", "speed-up ×", "ns-3 MB")


def run_once(bench: Benchmark, quick: bool = False) -> dict[str, Any]:
    """One run of `bench` in a fresh child process: the child's report plus ``peak_kib``."""
    text = bench.path().read_text(encoding="utf-8")
    if quick:
        text = tomlio.dumps(with_overrides(tomlio.loads(text), {"duration": QUICK_DURATION}))
    package_root = str(Path(__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p),
    }
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fairstream.bench_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps({"text": text, "filename": str(bench.path())}).encode())
            proc.stdin.close()
        except BrokenPipeError:  # the child died early; its exit status tells why
            pass
        out = proc.stdout.read()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            errors.seek(0)
            message = errors.read().decode(errors="replace")
            raise RuntimeError(f"benchmark {bench.id} failed (exit {proc.returncode}):\n{message}")
    report = json.loads(out)
    # ru_maxrss is in KiB on Linux, in bytes on macOS; on Linux it also holds the parent's
    # high-water mark from before exec, so the child's own VmHWM is preferred.
    report["ru_maxrss_kib"] = usage.ru_maxrss / 1024 if sys.platform == "darwin" else usage.ru_maxrss
    report["peak_kib"] = report.get("vmhwm_kib") or report["ru_maxrss_kib"]
    return report


def run_benchmarks(
    ids: list[str] | None = None, repeat: int = 3, quick: bool = False
) -> list[dict[str, Any]]:
    """Runs each benchmark `repeat` times; one row per benchmark (median wall, max peak memory)."""
    chosen = [_get(i) for i in ids] if ids else list(BENCHMARKS.values())
    if repeat < 1:
        raise ValueError("--repeat must be at least 1")
    rows = []
    for bench in chosen:
        runs = [run_once(bench, quick) for _ in range(repeat)]
        wall = statistics.median(r["wall_s"] for r in runs)
        peak_mb = max(r["peak_kib"] for r in runs) / 1024
        rows.append(
            {
                "benchmark": bench.id,
                "description": bench.description,
                "quick": quick,
                "repeat": repeat,
                "wall_s": wall,
                "wall_s_all": [r["wall_s"] for r in runs],
                "events": runs[0]["events"],
                "packets": runs[0]["packets"],
                "sim_duration_s": runs[0]["sim_duration_s"],
                "events_per_s": runs[0]["events"] / wall if wall > 0 else None,
                "peak_mb": peak_mb,
                "ns3_wall_s": bench.ns3_wall_s,
                "speedup": None if quick or wall <= 0 else bench.ns3_wall_s / wall,
                "ns3_mb": bench.ns3_mb,
            }
        )
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    """The results table; speed-up is left out (—) in quick mode, where durations differ from ns-3's."""
    return format_table(
        HEADERS,
        [
            [
                r["benchmark"],
                r["wall_s"],
                round(r["events_per_s"]) if r["events_per_s"] is not None else None,
                r["peak_mb"],
                r["ns3_wall_s"],
                r["speedup"],
                r["ns3_mb"],
            ]
            for r in rows
        ],
    )


def write_json(path: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    """Saves the rows with the machine they ran on."""
    doc = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "benchmarks": rows,
    }
    Path(path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _get(bench_id: str) -> Benchmark:
    try:
        return BENCHMARKS[bench_id.upper()]
    except KeyError:
        raise KeyError(f"no benchmark {bench_id!r}; known: {', '.join(BENCHMARKS)}") from None
