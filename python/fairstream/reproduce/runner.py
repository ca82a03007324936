"""Runs reproductions: plans every chosen experiment's points, validates them all, runs every run
of every experiment in parallel, then evaluates each experiment into ``DIR/<id>/result.json``
(with the raw run directories under ``DIR/<id>/runs/<point>/``)."""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import _core, tomlio
from ..parallel import Task, run_tasks
from ..progress import TaskProgress
from ..results import RunResult
from . import EXPERIMENTS, get
from .experiment import Evaluation, Experiment, Point

RESULT_FILE = "result.json"


def reproduce(
    ids: Sequence[str] | None,
    output_dir: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    quick: bool = False,
    quiet: bool = False,
    scheduler: str | None = None,
) -> list[dict[str, Any]]:
    """Runs the experiments `ids` (all when empty) into `output_dir`; returns their results.

    Every scenario is validated before anything is written (`fairstream.ScenarioError`).
    `quick` shortens durations and sweeps (for tests); `jobs` defaults to all cores.
    """
    experiments = [get(i) for i in ids] if ids else list(EXPERIMENTS.values())
    out = Path(output_dir).resolve()
    plans: list[tuple[Experiment, list[Point]]] = []
    tasks: list[Task] = []
    for exp in experiments:
        points = _plan(exp, quick)
        plans.append((exp, points))
        for point in points:
            text = tomlio.dumps(point.scenario)
            filename = f"{exp.scenario_path()} [{exp.id} {point.key}]"
            _core.validate(text, filename)
            tasks.append(
                Task(text, filename, str(_run_dir(out / exp.id, point)), label=f"{exp.id}/{point.key}")
            )
    for exp, _ in plans:  # results of an earlier reproduction of the same experiment
        shutil.rmtree(out / exp.id / "runs", ignore_errors=True)
        (out / exp.id / RESULT_FILE).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    run_tasks(tasks, jobs, scheduler, TaskProgress("reproduce", len(tasks), quiet=quiet))
    wall = time.perf_counter() - started
    results = []
    for exp, points in plans:
        exp_dir = out / exp.id
        runs = [(p, RunResult(_run_dir(exp_dir, p))) for p in points]
        result = _result(exp, points, exp.evaluate(runs, quick), quick, runs[0][1].summary, wall)
        (exp_dir / RESULT_FILE).write_text(
            json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8"
        )
        results.append(result)
    return results


def load_results(output_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every ``<id>/result.json`` under `output_dir`: registry order first, then by id."""
    found = {}
    for path in sorted(Path(output_dir).glob(f"*/{RESULT_FILE}")):
        result = json.loads(path.read_text(encoding="utf-8"))
        found[result["id"]] = result
    order = [i for i in EXPERIMENTS if i in found] + sorted(i for i in found if i not in EXPERIMENTS)
    return [found[i] for i in order]


def _plan(exp: Experiment, quick: bool) -> list[Point]:
    path = exp.scenario_path()
    _core.validate(path.read_text(encoding="utf-8"), str(path))
    points = exp.points(quick)
    keys = [p.key for p in points]
    if len(set(keys)) != len(keys):
        raise ValueError(f"experiment {exp.id} has duplicate point keys: {keys}")
    return points


def _run_dir(exp_dir: Path, point: Point) -> Path:
    return exp_dir / "runs" / point.key


def _result(
    exp: Experiment,
    points: list[Point],
    ev: Evaluation,
    quick: bool,
    first_summary: dict[str, Any],
    wall_s: float,
) -> dict[str, Any]:
    from .. import __version__

    return _json_safe(
        {
            "id": exp.id,
            "title": exp.title,
            "paper": exp.paper,
            "figure": exp.figure,
            "scenario": exp.scenario_file,
            "what_runs": exp.what_runs,
            "must_hold": exp.must_hold,
            "explanation": " ".join([exp.explanation, *ev.notes]),
            "quick": quick,
            "seed": first_summary.get("seed"),
            "fairstream_version": __version__,
            "wall_time_s": wall_s,
            "published": [asdict(p) for p in exp.published],
            "comparison": ev.comparison,
            "checks": [c.to_json() for c in ev.checks],
            "passed": sum(c.passed for c in ev.checks),
            "total": len(ev.checks),
            "points": ev.points,
            "runs": {p.key: f"runs/{p.key}" for p in points},
            "data": ev.data,
        }
    )


def _json_safe(value: Any) -> Any:
    """Non-finite floats become the strings 'inf', '-inf', 'nan' (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
