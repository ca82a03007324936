"""``fairstream bench --sweep``: what a sweep costs beyond its simulations.

A sweep of N one-second B3 runs (B3's scenario, ``duration = "1s"``, ``seed`` swept over 0..N-1,
so that every point is a run of its own) is run as a user runs it, ``python -m fairstream sweep``
in a fresh process with a cold run cache of its own, on all cores; then again, unchanged, when
every point comes from the cache. Reported:

- ``wall_s``: the whole command, interpreter start-up, worker start-up and the dataset included;
- ``sweep_wall_s``: the `fairstream.sweep` call alone, in a fresh process with fairstream
  imported (its workers' start-up, planning, runs and dataset included; the interpreter's and the
  command line's start-up not);
- ``simulation_s``: the runs' own simulation time, summed (the ``wall_time_s`` the dataset's runs
  table records of each run);
- ``overhead_per_point_ms``: (sweep wall × cores − simulation) / N, the issue's measure: every
  core's time the sweep used that no simulation did, shared out over the points; and
  ``command_overhead_per_point_ms``, the same of the whole command;
- ``cpu_overhead_per_point_ms`` (the command) and ``sweep_cpu_overhead_per_point_ms`` (the
  call): the same from the CPU time used (``getrusage`` of the process and its workers) rather
  than wall × cores: it does not count a core left idle, nor time another process took from this
  one, so it means something on a busy machine too;
- ``warm_wall_s``: the second, unchanged command, every point from the cache.

The machine should be idle: the 1-minute load is waited for (as `fairstream bench` does) and
reported with the figures. The whole measure is made `repeat` times (``--repeat``), each round
with caches of its own: every figure is then the median over the rounds, and ``spread`` holds the
median, least, greatest and every value of each, since one round on a shared machine can be
a fifth off the next.

The rounds (`measure_in_rounds`), their summary and the timed command are shared with
``fairstream bench --reproduce`` (`fairstream.bench_reproduce`).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .bench import BENCHMARKS, load_average, machine, wait_for_idle


def measure_sweep(
    points: int = 1000, *, repeat: int = 1, idle_wait_s: float = 120.0, quiet: bool = False
) -> dict[str, Any]:
    """Runs the sweep (cold, then warm, then as a call) `repeat` times and returns its figures,
    each the median over the rounds (see the module's doc)."""
    row, _ = measure_in_rounds(
        lambda say: _measure_round(points, say), MEASURED, repeat=repeat, idle_wait_s=idle_wait_s, quiet=quiet
    )
    return row


def measure_in_rounds(
    measure_round: Callable[[Callable[[str], None]], dict[str, Any]],
    measured: Sequence[str],
    *,
    repeat: int,
    idle_wait_s: float,
    quiet: bool,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Waits up to `idle_wait_s` for an idle machine, then makes `measure_round` (given a
    function that prints a progress line unless `quiet`) `repeat` times. Returns the rounds'
    figures summarised by `summarise_rounds` (the `measured` ones the medians), with the load
    before and after and the machine, and each round's figures."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")

    def say(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr, flush=True)

    idle = wait_for_idle(idle_wait_s, progress=say)
    rounds = []
    for n in range(1, repeat + 1):
        if repeat > 1:
            say(f"round {n} of {repeat}")
        rounds.append(measure_round(say))
    row = {
        **summarise_rounds(rounds, measured),
        "load_before": idle,
        "load_after": load_average(),
        "machine": machine(),
    }
    return row, rounds


#: The figures of a round that vary from one to the next (the others are the same in every round).
MEASURED = (
    "wall_s",
    "cpu_s",
    "simulation_s",
    "sweep_wall_s",
    "sweep_cpu_s",
    "sweep_simulation_s",
    "sweep_cpu_overhead_per_point_ms",
    "overhead_per_point_ms",
    "command_overhead_per_point_ms",
    "cpu_overhead_per_point_ms",
    "warm_wall_s",
)


def summarise_rounds(rounds: list[dict[str, Any]], measured: Sequence[str] = MEASURED) -> dict[str, Any]:
    """One row of the rounds' figures: each `measured` figure the median over the rounds, the
    others the first round's, with ``rounds`` (how many) and ``spread`` (each measured figure's
    median, least, greatest and every value, in round order)."""
    spread = {
        key: {
            "median": statistics.median(r[key] for r in rounds),
            "min": min(r[key] for r in rounds),
            "max": max(r[key] for r in rounds),
            "all": [r[key] for r in rounds],
        }
        for key in measured
    }
    medians = {key: s["median"] for key, s in spread.items()}
    return {**rounds[0], **medians, "rounds": len(rounds), "spread": spread}


def _measure_round(points: int, say: Callable[[str], None]) -> dict[str, Any]:
    """One round of the measure, with caches of its own."""
    import polars as pl

    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="fairstream-bench-sweep-") as tmp:
        base = Path(tmp)
        scenario = base / "B3.toml"
        scenario.write_text(BENCHMARKS["B3"].path().read_text(encoding="utf-8"), encoding="utf-8")
        out = base / "sweep"
        seeds = "[" + ", ".join(str(i) for i in range(points)) + "]"
        argv = [sys.executable, "-m", "fairstream", "sweep", str(scenario), "--set", "duration=1s"]
        argv += ["--set", f"seed={seeds}", "-o", str(out), "-q", "--force"]
        env = {**os.environ, "FAIRSTREAM_CACHE": str(base / "cache")}
        say(f"sweep of {points} one-second B3 runs on {cores} cores, cold cache, as a command")
        cold = timed_command(argv, env, "the sweep")
        runs = pl.read_parquet(out / "data" / "runs.parquet")
        simulation = float(runs["wall_time_s"].sum())
        events = int(runs["events"].sum())
        say("the same sweep again, every point from the cache")
        warm = timed_command(argv, env, "the sweep again")
        cached = int(pl.read_parquet(out / "data" / "runs.parquet")["cached"].sum())
        say("the fairstream.sweep call alone, cold cache")
        api_env = {**env, "FAIRSTREAM_CACHE": str(base / "cache-api")}
        script = _API.format(scenario=str(scenario), points=points, out=str(base / "api"))
        proc = subprocess.run([sys.executable, "-c", script], env=api_env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"the sweep failed: {proc.stderr.strip()}")
        sweep_wall, sweep_cpu = (float(x) for x in proc.stdout.strip().splitlines()[-1].split())
        api_runs = pl.read_parquet(base / "api" / "data" / "runs.parquet")
        api_simulation = float(api_runs["wall_time_s"].sum())
    return {
        "points": points,
        "cores": cores,
        "wall_s": cold["wall_s"],
        "cpu_s": cold["cpu_s"],
        "simulation_s": simulation,
        "events": events,
        "sweep_wall_s": sweep_wall,
        "sweep_cpu_s": sweep_cpu,
        "sweep_simulation_s": api_simulation,
        "sweep_cpu_overhead_per_point_ms": 1000 * (sweep_cpu - api_simulation) / points,
        "overhead_per_point_ms": 1000 * (sweep_wall * cores - api_simulation) / points,
        "command_overhead_per_point_ms": 1000 * (cold["wall_s"] * cores - simulation) / points,
        "cpu_overhead_per_point_ms": 1000 * (cold["cpu_s"] - simulation) / points,
        "warm_wall_s": warm["wall_s"],
        "warm_from_cache": cached,
    }


_API = """
import resource, time, fairstream
def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
grid = {{"duration": ["1s"], "seed": list(range({points}))}}
started, used = time.perf_counter(), cpu()
fairstream.sweep({scenario!r}, grid, {out!r}, force=True)
print(time.perf_counter() - started, cpu() - used)
"""


def timed_command(
    argv: list[str], env: dict[str, str], what: str, ok: Sequence[int] = (0,)
) -> dict[str, float]:
    """Wall and CPU seconds (the process and every child it waited for) of one command; an exit
    code not in `ok` is a RuntimeError naming `what` failed, with its error output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def format_sweep(row: dict[str, Any]) -> str:
    """The figures as a few lines (medians over the rounds, with each overhead's range)."""
    rounds = row.get("rounds", 1)
    spread = row.get("spread", {})

    def ms(key: str) -> str:
        """A per-point figure, with its range over the rounds when there were several."""
        s = spread.get(key)
        shown = f"{row[key]:.2f} ms"
        return shown if rounds < 2 or s is None else f"{shown} [{s['min']:.2f}-{s['max']:.2f}]"

    return "\n".join(
        [
            f"sweep of {row['points']} one-second B3 runs on {row['cores']} cores ({row['events']:,} events)"
            + (f"; medians of {rounds} rounds, ranges in brackets" if rounds > 1 else ""),
            f"  fairstream.sweep: wall {row['sweep_wall_s']:.2f} s, CPU {row['sweep_cpu_s']:.2f} s, "
            f"simulation {row['sweep_simulation_s']:.3f} s: overhead per point "
            f"{ms('overhead_per_point_ms')} (wall x cores - simulation), "
            f"{ms('sweep_cpu_overhead_per_point_ms')} (CPU - simulation)",
            f"  the command: wall {row['wall_s']:.2f} s, CPU {row['cpu_s']:.2f} s, simulation "
            f"{row['simulation_s']:.3f} s: overhead per point {ms('command_overhead_per_point_ms')} "
            f"(wall x cores - simulation), {ms('cpu_overhead_per_point_ms')} (CPU - simulation)",
            f"  again, every point from the cache ({row['warm_from_cache']}): {row['warm_wall_s']:.2f} s",
            load_line(row),
        ]
    )


def load_line(row: dict[str, Any]) -> str:
    """The line saying how busy the machine was before and after a measure, and whether it was
    idle."""

    def shown(load: float | None) -> str:
        return "unknown" if load is None else f"{load:.2f}"

    before = row["load_before"]
    idle = "idle" if before.get("idle") else "NOT idle: the wall-clock figures are inflated"
    return f"  1-min load before {shown(before.get('load'))}, after {shown(row['load_after'])} ({idle})"
