"""Parameter sweeps: a grid of dotted-path overrides (``flow.0.rate = [1Mbps, 2Mbps]``) of one
scenario, every point validated first and then run in parallel (`fairstream.campaign`: each point
looked up in the run cache first, the others on workers that stay up, their tables handed back as
Arrow data).

Output: ``DIR/data/``, one dataset of every point (`fairstream.dataset`: a Parquet file per
table, the swept paths as columns), and ``DIR/sweep.json`` (the grid, each point's overrides and
run key); ``DIR/runs/<nnnn>/`` per point (a normal run directory) only with ``keep_runs`` or when
the scenario captures pcap files. DIR is written as one: staged beside it and renamed into place
when every run is done, replacing an earlier sweep's DIR whole (`fairstream.output`), so no
stale run remains.

Ctrl-C keeps what ran: sweep.json says ``"complete": false`` and gives each point's ``status``
(finished, stopped part-way, or not run), ``DIR/INCOMPLETE`` says the same in words (no dataset
is written: that would delay the exit), and `fairstream.Interrupted` is raised; what ran is put
in place all the same (its `.fairstream` marker says `"complete": false`). Every finished point
is in the run cache: the same sweep run again runs only the others.
"""

from __future__ import annotations

import itertools
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core, output, tomlio
from .dataset import LARGE_TABLES, SMALL_TABLES, Dataset
from .interrupt import BatchInterrupted, Interrupted, write_marker
from .parallel import memory_per_run
from .progress import TaskProgress
from .results import RunResult
from .scenario import ScenarioLike, load, map_traces

if TYPE_CHECKING:
    import polars as pl

    from .cache import RunCache
    from .campaign import Outcome

#: Where a sweep keeps its dataset, and, when asked, its run directories.
DATA_DIR, RUNS_DIR = "data", "runs"


@dataclass
class SweepResult:
    """A finished sweep: its directory, points and dataset (`fairstream.dataset.Dataset`)."""

    output_dir: Path
    points: list[dict[str, Any]]

    @cached_property
    def dataset(self) -> Dataset:
        """Every point's tables, one Parquet file per table (``DIR/data``)."""
        return Dataset(self.output_dir / DATA_DIR)

    @cached_property
    def flows(self) -> pl.DataFrame:
        """Every flow of every run (the flow summaries), with the point's swept values as columns."""
        return self.dataset.frame("flow_summary")

    def frame(self, table: str = "flow_summary") -> pl.DataFrame:
        """Table `table` of every point, tidy: one column per swept path."""
        return self.dataset.frame(table)

    def to_xarray(self, table: str = "flow_summary", variables: Sequence[str] | None = None) -> Any:
        """Table `table` as an xarray Dataset over the grid (see `fairstream.dataset.Dataset.to_xarray`)."""
        return self.dataset.to_xarray(table, variables)

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
        value = tomlio.loads(f"v = {raw}")["v"]
    except tomlio.TOMLDecodeError as err:
        reason = str(err).split(" (at ", 1)[0]  # its line and column are of our wrapper, not of `raw`
    else:
        _check_scenario_value(value, raw)
        return value
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


def _check_scenario_value(value: Any, raw: str) -> None:
    """A ValueError for a TOML value no scenario can hold: what the TOML writer refuses (a date
    or time, which TOML reads and scenarios never use; an integer beyond 64 bits)."""
    try:
        tomlio.dumps({"value": value})
    except TypeError as err:
        import re

        why = re.sub(r" at value\S*", "", str(err)).removesuffix(" as TOML")
        raise ValueError(f"`{raw}` is no scenario's value ({why}); quote it if a string was meant") from None


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
    fields = {p: tuple(str(int(part)) if part.isdigit() else part for part in p.split(".")) for p in paths}
    for a, b in itertools.combinations(paths, 2):
        fa, fb = fields[a], fields[b]
        if fa == fb:
            raise ValueError(f"`{a}` and `{b}` name the same field; give its values once")
        inner, outer = (a, b) if len(fa) > len(fb) else (b, a)
        if fields[inner][: len(fields[outer])] == fields[outer]:
            raise ValueError(
                f"`{inner}` lies inside `{outer}`, which the sweep sets whole; sweep one or the other"
            )
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
    keep_runs: bool = False,
    cache: bool | RunCache = True,
) -> SweepResult:
    """Runs every point of `grid` over `scenario` into `output_dir`.

    `output_dir` and every point are checked before anything runs or is written (ValueError,
    `fairstream.ScenarioError`): it may be absent, empty or an earlier sweep's directory, which
    is replaced whole; any other non-empty directory is refused unless `force`. `jobs`: worker
    processes (all cores by default); `scheduler`: a Dask scheduler address (the output's
    parent directory and the run cache must be on a file system the workers share). `max_memory`
    (bytes, or a size such as ``"8GB"``) bounds each run's estimated memory; by default, the
    memory available when the runs start. `keep_runs`: also a run directory per point
    (``runs/<nnnn>/``, as ``fairstream run`` writes it), as a scenario capturing pcap files gets
    anyway. `cache`: as for `fairstream.run`; a point found in the run cache is not run again,
    which is how a sweep interrupted (Ctrl-C, ``kill -9``, a lost worker) resumes.
    """
    from .api import _root, _run_cache, check_seed, memory_limit
    from .campaign import plan_points, where_in
    from .parallel import Batch

    check_seed(seed)
    limit = memory_limit(max_memory)
    store = _run_cache(cache)
    target = output.prepare(output_dir, "sweep", force, cache=_root(store))
    base_text, filename = load(scenario)
    base_error = None
    with warnings.catch_warnings(record=True) as caught:  # shown below, once, as they came
        warnings.simplefilter("always", _core.ScenarioWarning)
        try:
            _core.validate(base_text, filename)
        except _core.ScenarioError as err:  # the points decide: each may set what is wrong here
            base_error = err
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    shown = [rest for w in caught if (rest := where_in(str(w.message), filename)) is not None]
    # A relative trace is taken from the scenario file's directory; each point's "file" below is
    # a label ("s.toml with flow.0.rate=1 Mbit/s") whose directory is no such thing.
    home = os.path.dirname(os.path.abspath(filename))
    try:
        base = _absolute_traces(tomlio.loads(base_text), home)
    except ValueError:
        if base_error is not None:  # not TOML: the core's error says where
            raise base_error from None
        raise
    points = grid_points(grid)
    located = [{path: _absolute_traces(value, home, path) for path, value in p.items()} for p in points]
    per_run = memory_per_run(limit, jobs, len(points), scheduler)
    batch = Batch(jobs, scheduler, calls_hint=len(points))
    try:
        batch.warm_up()  # the workers start while the points are planned
        labels = [", ".join(f"{k}={v}" for k, v in overrides.items()) for overrides in points]
        try:
            planned = plan_points(base, located, filename, labels, per_run, shown)  # all valid, or none runs
        except ValueError as err:
            if base_error is not None and _same_problem(err, base_error, filename, labels):
                raise base_error from None  # named where it is in the user's file
            raise
        checked = [
            _Point(i, overrides, text, file, label, resolved)
            for i, (overrides, (text, resolved, file), label) in enumerate(
                zip(points, planned, labels, strict=True)
            )
        ]
        doc = {"scenario": filename, "grid": {k: list(v) for k, v in grid.items()}}
        result = _run(output_dir, target, force, doc, checked, store, batch, seed, per_run, keep_runs, quiet)
    except BaseException:
        batch.close(killed=True)
        raise
    batch.close()
    return result


def _same_problem(
    point_error: Exception, base_error: Exception, filename: str, labels: Sequence[str]
) -> bool:
    """Whether a point's refusal is the scenario file's own (the same field, the same fault), which
    the file's error names at its line rather than at one of the point's own TOML."""
    from .campaign import located, point_file, where_in

    base = where_in(str(base_error), filename)
    found = located(str(point_error), point_file(filename, ""))
    return base is not None and found is not None and found[0] in labels and found[1] == base


def _absolute_traces(node: Any, home: str, path: str = "") -> Any:
    """`node` (a scenario, or the value set at `path` in one) with every relative trace file
    made absolute from `home`."""

    def absolute(file: str) -> str:
        return os.path.join(home, file) if file and not os.path.isabs(file) else file

    return map_traces(node, absolute, path)


@dataclass(frozen=True)
class _Point:
    """A sweep's point, planned: its overrides, TOML text, filename, label and resolved scenario."""

    index: int
    overrides: dict[str, Any]
    text: str
    file: str
    label: str
    resolved: str


def _run(
    output_dir: str | os.PathLike[str],
    target: Path,
    force: bool,
    doc: dict[str, Any],
    checked: list[_Point],
    store: RunCache | None,
    batch: Any,
    seed: int | None,
    per_run: int | None,
    keep_runs: bool,
    quiet: bool,
) -> SweepResult:
    """Runs the planned points into the staged output directory (see `sweep`)."""
    from .cache import run_key
    from .campaign import RunSpec, records_pcap, run_specs
    from .dataset import DatasetWriter
    from .results import TABLES

    keep = [keep_runs or records_pcap(p.resolved) for p in checked]
    meta = [
        {
            "index": p.index,
            "dir": f"{RUNS_DIR if keep[p.index] else DATA_DIR}/{p.index:04d}",
            "overrides": p.overrides,
            "run_key": run_key(p.resolved) if store is not None else None,
        }
        for p in checked
    ]
    doc = {**doc, "points": meta}
    with output.staged(output_dir, "sweep", force, target=target) as tmp:
        specs = [
            RunSpec(
                p.text,
                p.file,
                point["run_key"],
                seed,
                per_run,
                str(tmp / point["dir"]) if keep[p.index] else None,
                tuple(TABLES),
                p.label,
            )
            for p, point in zip(checked, meta, strict=True)
        ]
        writer = DatasetWriter(
            tmp / DATA_DIR,
            list(doc["grid"]),
            tables=[*SMALL_TABLES, *LARGE_TABLES],
            cache=None if store is None else store.root,
        )

        def add(indices: list[int], outcome: Outcome) -> None:
            for i in indices:
                info = outcome.run_info(checked[i].resolved)
                writer.add(i, f"{i:04d}", checked[i].overrides, outcome.summary, outcome.tables, run=info)

        progress = TaskProgress("sweep", len(specs), quiet=quiet)
        try:
            run_specs(specs, store, progress=progress, on_outcome=add, batch=batch)
        except BatchInterrupted as stop:
            progress.close()
            raise _keep_partial(tmp, doc, stop) from None
        except BaseException:
            progress.close()
            raise
        progress.finish()
        writer.close()
        _write_json(tmp / "sweep.json", {**doc, "complete": True})
    return SweepResult(Path(output_dir), meta)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _keep_partial(out: Path, doc: dict[str, Any], stop: BatchInterrupted) -> Interrupted:
    """Marks an interrupted sweep's directory incomplete (sweep.json with each point's status,
    and the INCOMPLETE file); returns the `Interrupted` to raise. No dataset is written (that
    would delay the exit): the finished points are in the run cache, and the same sweep run again
    runs only the others and writes it."""
    for point in doc["points"]:
        i = point["index"]
        point["status"] = "finished" if i in stop.finished else "stopped" if i in stop.stopped else "not run"
    _write_json(out / "sweep.json", {**doc, "complete": False})
    text = (
        f"interrupted: {len(stop.finished)} of {stop.total} runs of this sweep finished (they are in the "
        f"run cache) and {len(stop.stopped)} were stopped part-way; the rest did not run. "
        "sweep.json gives each point's status. Run the same sweep again to finish it: only the "
        "points not finished run."
    )
    write_marker(out, text)
    return Interrupted(f"{text} Results: {out}", str(out))
