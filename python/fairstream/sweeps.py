"""Parameter sweeps: a grid of dotted-path overrides (``flow.0.rate = [1Mbps, 2Mbps]``) of one
scenario, every point validated first and then run in parallel.

Output: ``DIR/runs/<nnnn>/`` per point (a normal run directory), ``DIR/sweep.json`` (the grid and
each point's overrides) and ``DIR/flows.parquet`` (every flow's summary, with one column per
swept path). DIR is written as one: staged beside it and renamed into place when every run is
done, replacing an earlier sweep's DIR whole (`fairstream.output`), so no stale run remains.

Ctrl-C keeps what ran: sweep.json says ``"complete": false`` and gives each point's ``status``
(finished, stopped part-way with its results so far, or not run), ``DIR/INCOMPLETE`` says the
same in words, flows.parquet is not written, and `fairstream.Interrupted` is raised; what ran is put in place
all the same (its `.fairstream` marker says `"complete": false`).
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

from . import _core, output, tomlio
from .interrupt import BatchInterrupted, Interrupted, write_marker
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
    """One ``--set PATH=VALUE``: the dotted path and the values it takes in the sweep.

    VALUE is a TOML value (``20``, ``0.5``, ``true``, ``"a,b"``, ``{ uniform = ["0s", "1s"] }``)
    or a bare word, taken as a string (``1Mbps``). A TOML array gives several values, one point
    each: ``flow.0.rate=["1Mbps", "2Mbps"]``; to set a field to a list, nest it
    (``record.pcap=[["N1->N2"]]``). Commas only separate values inside an array, so a string
    holding one is quoted. ValueError, with the form to use, for anything else.
    """
    path, sep, raw = arg.partition("=")
    path, raw = path.strip(), raw.strip()
    if not sep or not path or not raw:
        raise ValueError(f"`{arg}` is not PATH=VALUE, e.g. flow.0.rate=1Mbps or seed=[1, 2]")
    value = parse_value(raw)
    if not isinstance(value, list):
        return path, [value]
    if not value:
        raise ValueError(f"`{arg}`: an empty array gives the sweep no value")
    return path, value


def parse_value(raw: str) -> Any:
    """A TOML value when the text is one (``20``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``), else
    the bare word as a string (``1Mbps``, ``10 Mbps``).

    Text that cannot be a bare word is a ValueError saying how to write it: one holding a comma
    (quote it, or make it an array of quoted strings) or one starting like an array, inline
    table or string that does not parse.
    """
    raw = raw.strip()
    try:
        return tomlio.loads(f"v = {raw}")["v"]
    except tomlio.TOMLDecodeError as err:
        reason = str(err).split(" (at ", 1)[0]  # its line and column are of our wrapper, not of `raw`
    if "," in raw:
        array = "[" + ", ".join(_toml_word(w) for w in raw.strip("[]").split(",")) + "]"
        if raw.startswith("["):
            raise ValueError(f"`{raw}` is not a TOML array: quote its strings, {array}")
        raise ValueError(
            f"`{raw}` is not a TOML value: write several values as a TOML array, {array}, "
            f"or quote one string that holds a comma, {_toml_word(raw)}"
        )
    if raw[:1] in "[{\"'":
        raise ValueError(f"`{raw}` is not a TOML value: {reason}")
    return raw


def _toml_word(word: str) -> str:
    """`word` as a TOML value: itself when it is one (``2``, ``true``), else a quoted string."""
    word = word.strip()
    try:
        tomlio.loads(f"v = {word}")
        return word
    except tomlio.TOMLDecodeError:
        return tomlio.dumps({"v": word}).split("=", 1)[1].strip()


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
    force: bool = False,
    max_memory: int | str | None = None,
) -> SweepResult:
    """Runs every point of `grid` over `scenario` into `output_dir`.

    `output_dir` and every point are checked before anything runs or is written (ValueError,
    `fairstream.ScenarioError`): it may be absent, empty or an earlier sweep's directory, which
    is replaced whole; any other non-empty directory is refused unless `force`. `jobs`: worker
    processes (all cores by default); `scheduler`: a Dask scheduler address (the output's
    parent directory must be on a file system the workers share). `max_memory` (bytes, or a
    size such as ``"8GB"``) bounds each run's estimated memory; by default, the memory
    available when the runs start.
    """
    from .api import check_seed, memory_limit

    check_seed(seed)
    limit = memory_limit(max_memory)
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    target = output.prepare(output_dir, "sweep", force)
    base_text, filename = load(scenario)
    _core.validate(base_text, filename)
    base = tomlio.loads(base_text)
    points = grid_points(grid)
    per_run = memory_per_run(limit, jobs, len(points), scheduler)
    checked = []
    for overrides in points:
        text = tomlio.dumps(with_overrides(base, overrides))
        label = ", ".join(f"{k}={v}" for k, v in overrides.items())
        point_file = f"{filename} with {label}"
        _core.validate(text, point_file, per_run)  # and the memory its run needs
        checked.append((text, point_file, label))
    meta = [
        {"index": i, "dir": f"runs/{i:04d}", "overrides": overrides} for i, overrides in enumerate(points)
    ]
    doc = {"scenario": filename, "grid": {k: list(v) for k, v in grid.items()}, "points": meta}
    with output.staged(output_dir, "sweep", force, target=target) as tmp:
        tasks = [
            Task(text, point_file, str(tmp / point["dir"]), seed, label, per_run)
            for (text, point_file, label), point in zip(checked, meta, strict=True)
        ]
        try:
            summaries = run_tasks(tasks, jobs, scheduler, TaskProgress("sweep", len(tasks), quiet=quiet))
        except BatchInterrupted as stop:
            raise _keep_partial(tmp, doc, stop) from None
        _write_json(tmp / "sweep.json", {**doc, "complete": True})
        _flow_table(points, summaries).write_parquet(tmp / "flows.parquet")
    return SweepResult(Path(output_dir), meta)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _keep_partial(out: Path, doc: dict[str, Any], stop: BatchInterrupted) -> Interrupted:
    """Marks an interrupted sweep's directory incomplete (sweep.json with each point's status,
    and the INCOMPLETE file); returns the `Interrupted` to raise. flows.parquet is not written
    (reading the runs would delay the exit); that of an earlier sweep is removed."""
    for point in doc["points"]:
        i = point["index"]
        point["status"] = "finished" if i in stop.finished else "stopped" if i in stop.stopped else "not run"
    _write_json(out / "sweep.json", {**doc, "complete": False})
    (out / "flows.parquet").unlink(missing_ok=True)
    text = (
        f"interrupted: {len(stop.finished)} of {stop.total} runs of this sweep finished and "
        f"{len(stop.stopped)} stopped part-way (their results so far, each marked INCOMPLETE); the "
        "rest did not run. sweep.json gives each point's status; flows.parquet was not written."
    )
    write_marker(out, text)
    return Interrupted(f"{text} Results: {out}", str(out))


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
