"""Parameter sweeps: a grid of dotted-path overrides (``flow.0.rate = [1Mbps, 2Mbps]``) of one
scenario, every point validated first and then run in parallel.

Output: ``DIR/runs/<nnnn>/`` per point (a normal run directory), ``DIR/sweep.json`` (the grid and
each point's overrides) and ``DIR/flows.parquet`` (every flow's summary, with one column per
swept path).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core, tomlio
from .parallel import Task, memory_per_run, run_tasks
from .progress import TaskProgress
from .results import RunResult
from .scenario import ScenarioLike, load, with_overrides

if TYPE_CHECKING:
    import polars as pl


@dataclass
class SweepResult:
    """A finished sweep: its directory, points and the flow summaries of every run."""

    output_dir: Path
    points: list[dict[str, Any]]

    @cached_property
    def flows(self) -> pl.DataFrame:
        """Every flow of every run, with the point's swept values as columns."""
        import polars as pl

        return pl.read_parquet(self.output_dir / "flows.parquet")

    def run(self, index: int) -> RunResult:
        """The results of point `index`."""
        return RunResult(self.output_dir / self.points[index]["dir"])


def parse_assignment(arg: str) -> tuple[str, list[Any]]:
    """``"flow.0.rate=1Mbps,2Mbps"`` -> ``("flow.0.rate", ["1Mbps", "2Mbps"])``.

    Values are parsed as in `parse_value`.
    """
    path, sep, values = arg.partition("=")
    path = path.strip()
    if not sep or not path or not values.strip():
        raise ValueError(f"`{arg}` is not PATH=VALUE[,VALUE...], e.g. flow.0.rate=1Mbps,2Mbps")
    return path, [parse_value(v) for v in values.split(",")]


def parse_value(raw: str) -> Any:
    """A TOML value when the text is one (``20``, ``0.5``, ``true``, ``"x"``), else the bare string."""
    raw = raw.strip()
    try:
        return tomlio.loads(f"v = {raw}")["v"]
    except tomlio.TOMLDecodeError:
        return raw


def grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The cartesian product of the grid, the last path varying fastest."""
    for path, values in grid.items():
        if isinstance(values, str) or not isinstance(values, Sequence) or len(values) == 0:
            raise ValueError(f"sweep values of `{path}` must be a non-empty list")
    paths = list(grid)
    return [dict(zip(paths, combo, strict=True)) for combo in itertools.product(*(grid[p] for p in paths))]


def sweep(
    scenario: ScenarioLike,
    grid: Mapping[str, Sequence[Any]],
    output_dir: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    seed: int | None = None,
    quiet: bool = True,
    max_memory: int | str | None = None,
) -> SweepResult:
    """Runs every point of `grid` over `scenario` into `output_dir`.

    Every point is validated before anything runs or is written (`fairstream.ScenarioError`).
    `jobs`: worker processes (all cores by default); `scheduler`: a Dask scheduler address.
    `max_memory` (bytes, or a size such as ``"8GB"``) bounds each run's estimated memory; by
    default each of the runs going on at once gets an equal share of the memory available.
    """
    from .api import check_seed, memory_limit

    check_seed(seed)
    limit = memory_limit(max_memory)
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    base_text, filename = load(scenario)
    _core.validate(base_text, filename)
    base = tomlio.loads(base_text)
    points = grid_points(grid)
    per_run = memory_per_run(limit, jobs, len(points), scheduler)
    out = Path(output_dir).resolve()
    tasks = []
    for i, overrides in enumerate(points):
        text = tomlio.dumps(with_overrides(base, overrides))
        label = ", ".join(f"{k}={v}" for k, v in overrides.items())
        point_file = f"{filename} with {label}"
        _core.validate(text, point_file, per_run)  # and the memory its run needs
        tasks.append(Task(text, point_file, str(out / "runs" / f"{i:04d}"), seed, label, per_run))
    out.mkdir(parents=True, exist_ok=True)
    summaries = run_tasks(tasks, jobs, scheduler, TaskProgress("sweep", len(tasks), quiet=quiet))
    meta = [
        {"index": i, "dir": f"runs/{i:04d}", "overrides": overrides} for i, overrides in enumerate(points)
    ]
    (out / "sweep.json").write_text(
        json.dumps(
            {"scenario": filename, "grid": {k: list(v) for k, v in grid.items()}, "points": meta}, indent=2
        )
        + "\n",
        encoding="utf-8",
    )
    _flow_table(points, summaries).write_parquet(out / "flows.parquet")
    return SweepResult(out, meta)


def _flow_table(points: list[dict[str, Any]], summaries: list[dict[str, Any]]) -> pl.DataFrame:
    """Flow summaries of all runs with the swept values; a path whose values mix types becomes text."""
    import polars as pl

    paths = list(points[0]) if points else []
    mixed = {p for p in paths if len({type(pt[p]) for pt in points}) > 1}
    rows = []
    for i, (overrides, summary) in enumerate(zip(points, summaries, strict=True)):
        params = {p: str(v) if p in mixed else v for p, v in overrides.items()}
        for flow in summary.get("flows", []):
            rows.append({"point": i, **params, **flow})
    return pl.DataFrame(rows, infer_schema_length=None)
