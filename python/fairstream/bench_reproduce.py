"""``fairstream bench --reproduce``: what a reproduction costs beyond its simulations, from a cold
run cache and again unchanged.

The experiments (by default every one that only simulates: an emulated one needs root and runs in
real time) are reproduced as a user reproduces them, ``python -m fairstream reproduce -q -o DIR
IDS`` in a fresh process with a run cache of its own, on all cores; then once more, unchanged,
into a second directory, from the same cache. Reported:

- ``wall_s`` and ``cpu_s``: the cold command, start-up, planning, evaluations, figures and the
  report included (CPU: ``getrusage`` of the command and every worker it waited for);
- ``simulation_s``: the runs' own simulation time (each run's ``wall_time_s``), summed over the run
  cache's entries: each run once, however many experiments share it;
- ``ratio``: wall × cores ÷ simulation, the issue's measure (every core's time the command held,
  over the time the simulations needed: 1 would be no cost beyond them), and ``cpu_ratio``, CPU ÷
  simulation, which does not count a core left idle nor time another process took;
- ``output_mb`` and ``cache_mb``: what the cold command left in its directory and in the cache
  (the bytes ``fairstream cache info`` counts);
- ``warm_wall_s``: the second command, every run and experiment from the cache; ``identical``:
  whether its directory holds the same files as the first's, byte for byte but for the report's
  line saying when and from which directory it was written, and ``differing``, the files that
  are not.

The machine should be idle: the 1-minute load is waited for (as `fairstream bench` does) and
reported with the figures. The whole measure is made `repeat` times, each round with a cache and
directories of its own; every figure is then the median over the rounds, with ``spread`` as in
``fairstream bench --sweep``.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .bench_sweep import load_line, measure_in_rounds, timed_command
from .cache import RunCache

#: The figures of a round that vary from one to the next.
MEASURED = (
    "wall_s",
    "cpu_s",
    "simulation_s",
    "ratio",
    "cpu_ratio",
    "output_mb",
    "cache_mb",
    "warm_wall_s",
)

#: The report's line that names when and from which directory it was written: the one line two
#: reproductions of the same results may differ by.
_GENERATED = re.compile(rb'^<p class="meta">Generated .*$', re.M)


def simulated_experiments() -> list[str]:
    """The ids of the experiments that only simulate (none of their points runs the emulator)."""
    from .reproduce import EXPERIMENTS

    return [e.id for e in EXPERIMENTS.values() if not e.emulated]


def measure_reproduce(
    ids: list[str] | None = None,
    *,
    quick: bool = False,
    repeat: int = 1,
    idle_wait_s: float = 120.0,
    quiet: bool = False,
) -> dict[str, Any]:
    """Reproduces `ids` (default: `simulated_experiments`) cold, then again unchanged, `repeat`
    times, and returns the figures, each the median over the rounds (see the module's doc).
    `quick` passes ``--quick`` on: short runs, a smoke test rather than a measurement."""
    chosen = list(ids) if ids else simulated_experiments()
    row, rounds = measure_in_rounds(
        lambda say: _measure_round(chosen, quick, say),
        MEASURED,
        repeat=repeat,
        idle_wait_s=idle_wait_s,
        quiet=quiet,
    )
    row["identical"] = all(r["identical"] for r in rounds)
    row["differing"] = sorted({name for r in rounds for name in r["differing"]})
    return row


def _measure_round(ids: list[str], quick: bool, say: Callable[[str], None]) -> dict[str, Any]:
    """One round of the measure, with a cache and directories of its own."""
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="fairstream-bench-reproduce-") as tmp:
        base = Path(tmp)
        cache = base / "cache"
        env = {**os.environ, "FAIRSTREAM_CACHE": str(cache)}

        def argv(out: Path) -> list[str]:
            command = [sys.executable, "-m", "fairstream", "reproduce", "-q", "-o", str(out)]
            return command + (["--quick"] if quick else []) + ids

        # Exit code 1: an experiment failed its checks, which the measure does not judge.
        say(f"{len(ids)} experiments reproduced on {cores} cores, cold run cache")
        cold = timed_command(argv(base / "cold"), env, "the reproduction", ok=(0, 1))
        say("the same reproduction again, unchanged")
        warm = timed_command(argv(base / "warm"), env, "the reproduction again", ok=(0, 1))
        runs, simulation = simulation_time(cache)
        differing = differing_files(base / "cold", base / "warm")
        output_mb = tree_bytes(base / "cold") / 1e6
        cache_mb = RunCache(cache).info(builds=False)["bytes"] / 1e6  # as `fairstream cache info`
    return {
        "experiments": len(ids),
        "ids": ids,
        "quick": quick,
        "cores": cores,
        "runs": runs,
        "wall_s": cold["wall_s"],
        "cpu_s": cold["cpu_s"],
        "simulation_s": simulation,
        "ratio": cold["wall_s"] * cores / simulation if simulation > 0 else float("nan"),
        "cpu_ratio": cold["cpu_s"] / simulation if simulation > 0 else float("nan"),
        "output_mb": output_mb,
        "cache_mb": cache_mb,
        "warm_wall_s": warm["wall_s"],
        "identical": not differing,
        "differing": differing,
    }


def simulation_time(cache: Path) -> tuple[int, float]:
    """(runs, their simulation seconds summed) over the run entries of the cache at `cache`."""
    store = RunCache(cache)
    runs, total = 0, 0.0
    for kind, path, _ in store.entries():
        entry = store.get(path.stem) if kind == "run" else None
        if entry is not None:
            runs += 1
            total += float(entry.manifest["wall_time_s"])
    return runs, total


def differing_files(first: Path, second: Path) -> list[str]:
    """The files, relative to the directories, that one of `first` and `second` holds and the
    other does not, or that differ in content; a report (``report.html``) is compared without its
    line saying when and from which directory it was written."""

    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}

    left, right = files(first), files(second)
    differing = sorted(left ^ right)
    for name in sorted(left & right):
        a, b = (first / name).read_bytes(), (second / name).read_bytes()
        if name.endswith("report.html"):
            a, b = _GENERATED.sub(b"", a), _GENERATED.sub(b"", b)
        if a != b:
            differing.append(name)
    return sorted(differing)


def tree_bytes(root: Path) -> int:
    """Bytes of the files under `root`, each file once however many names it has (a
    reproduction's `h2h-*` experiments link one dataset's files)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for p in root.rglob("*"):
        st = p.lstat()
        if p.is_file() and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def format_reproduce(row: dict[str, Any]) -> str:
    """The figures as a few lines (medians over the rounds, with each one's range)."""
    rounds = row.get("rounds", 1)
    spread = row.get("spread", {})

    def shown(key: str, fmt: str) -> str:
        """A figure, with its range over the rounds when there were several."""
        s = spread.get(key)
        text = format(row[key], fmt)
        if rounds < 2 or s is None:
            return text
        return f"{text} [{format(s['min'], fmt)}-{format(s['max'], fmt)}]"

    same = (
        "yes"
        if row["identical"]
        else f"NO, {len(row['differing'])} files differ: " + ", ".join(row["differing"][:5])
    )
    return "\n".join(
        [
            f"reproduction of {row['experiments']} experiments ({row['runs']:,} runs) on {row['cores']} "
            "cores, cold run cache"
            + (" (--quick: a smoke test, not a measurement)" if row.get("quick") else "")
            + (f"; medians of {rounds} rounds, ranges in brackets" if rounds > 1 else ""),
            f"  cold: wall {shown('wall_s', '.1f')} s, CPU {shown('cpu_s', '.1f')} s, simulations "
            f"{shown('simulation_s', '.1f')} s: wall x cores / simulations {shown('ratio', '.3f')}, "
            f"CPU / simulations {shown('cpu_ratio', '.3f')}",
            f"  kept: output {shown('output_mb', '.1f')} MB, run cache {shown('cache_mb', '.0f')} MB",
            f"  again, unchanged: wall {shown('warm_wall_s', '.2f')} s; the same output, byte for byte "
            f"but for the report's time and directory: {same}",
            load_line(row),
        ]
    )
