"""Runs reproductions: plans every chosen experiment's points, validates them all, runs every run
of every experiment in parallel, and evaluates each experiment into ``DIR/<id>/result.json``
(with its runs' tables in the dataset ``DIR/<id>/data/``, or, with ``keep_runs``, the raw run
directories under ``DIR/<id>/runs/<point>/``). How the runs are made, looked up in the run cache,
shared between experiments and resumed, and how evaluations overlap the runs still going, is
`campaign`'s; what an experiment's evaluation is stays here (`evaluate_experiment`).

Phase replicas. In a deterministic drop-tail simulation, which flow loses a packet can hinge on
sub-microsecond phase: the order in which packets reach a nearly full queue (Floyd and Jacobson
1992). Besides its canonical run (the scenario's own seed, no perturbation), each experiment runs
`Experiment.phase_replicas` replicas (at most `QUICK_MAX_REPLICAS` in quick mode; ``replicas``
overrides both): replica r runs every point again with seed ``seed + r * REPLICA_SEED_STEP`` and
``[engine] perturb_delays = PHASE_PERTURBATION`` (in the dataset as replica r; with ``keep_runs``
into ``DIR/<id>/replicas/r<r>/<point>/``). All runs of all experiments go through one parallel
task list. Each replica is judged by the
experiment's own `evaluate`; result.json keeps the canonical numbers and verdicts as its headline
and adds beside them, per check and per numeric comparison row, the replicas' values and their
min–max spread, how many replicas pass, ``split`` when the verdict is not the same in every run,
and the verdict rule's word over them all (`fairstream.verdicts`; ``phase_sensitive`` when the
runs split beyond what the rule allows; see `phase_summary` and `judge`).

The output directory is written as one (`fairstream.output`): checked before anything runs,
staged beside it, renamed into place when every experiment is evaluated, and replacing an
earlier reproduction's directory whole.

Ctrl-C stops every run promptly (see `fairstream.interrupt`): the experiments evaluated by then
are kept, the runs that finished are in the run cache (the same command run again runs only the
others), and ``DIR/INCOMPLETE`` and ``DIR/<id>/INCOMPLETE`` (for each experiment not evaluated)
say so, which `fairstream report` shows; what ran is put in place all the same and
`fairstream.Interrupted` is raised.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..results import RunResult
from ..table import is_number
from ..verdicts import SENSITIVE, check_verdict, counts, experiment_verdict
from . import EXPERIMENTS, get
from .experiment import Check, Evaluation, Experiment, Point

if TYPE_CHECKING:
    from ..cache import RunCache

RESULT_FILE = "result.json"

#: ``[engine] perturb_delays`` of the phase replicas, as a fraction of the transmission time T of
#: a 1500-byte packet at each link's rate: each link's propagation delay grows by a fixed amount
#: drawn from [0, 0.5 T). Half a packet time is enough to reorder packets that reach a queue
#: within one transmission time of each other, which is what decides who takes a freed place in
#: a full drop-tail queue, and it changes no delay by more than the queueing delay of one packet,
#: well within what the papers leave unstated: the replica is the same experiment at another phase.
PHASE_PERTURBATION = 0.5

#: Replica r of a point with seed s runs with seed s + r * REPLICA_SEED_STEP: reproducible, and far
#: from the small seeds an experiment might sweep as points of its own.
REPLICA_SEED_STEP = 1000

#: Quick mode (tests) runs at most this many replicas per experiment, unless `replicas` is given.
QUICK_MAX_REPLICAS = 1

#: Where the runs of replica r go, under the experiment's directory.
REPLICA_DIR = "replicas"


def reproduce(
    ids: Sequence[str] | None,
    output_dir: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    quick: bool = False,
    quiet: bool = False,
    scheduler: str | None = None,
    replicas: int | None = None,
    force: bool = False,
    max_memory: int | str | None = None,
    keep_runs: bool = False,
    cache: bool | RunCache = True,
) -> list[dict[str, Any]]:
    """Runs the experiments `ids` (all when empty) into `output_dir`; returns their results.

    `output_dir` and every scenario are checked before anything runs or is written (ValueError,
    `fairstream.ScenarioError`): the directory may be absent, empty or an earlier
    reproduction's, which is replaced whole; any other non-empty directory is refused unless
    `force`.
    `quick` shortens durations and sweeps (for tests); `jobs` defaults to all cores. `replicas`
    sets the number of phase replicas of every experiment (0: canonical runs only); by default
    each experiment's `phase_replicas`, at most `QUICK_MAX_REPLICAS` in quick mode.
    `max_memory` (bytes, or a size such as ``"8GB"``) bounds each run's estimated memory; by
    default, the memory available when the runs start. `keep_runs`: also every run's directory
    (with its metrics and packet trace) beside the dataset. `cache`: as for `fairstream.run`
    (False: a run cache of this call's own, removed after it); an experiment whose runs and code
    are unchanged is not evaluated again (see `campaign`).
    """
    from .campaign import Campaign

    if replicas is not None and replicas < 0:
        raise ValueError(f"replicas must be 0 or more, not {replicas}")
    experiments = [get(i) for i in ids] if ids else list(EXPERIMENTS.values())
    campaign = Campaign(experiments, quick=quick, replicas=replicas, keep_runs=keep_runs, cache=cache)
    return campaign.run(
        output_dir, jobs=jobs, quiet=quiet, scheduler=scheduler, force=force, max_memory=max_memory
    )


def evaluate_experiment(
    exp: Experiment,
    points: list[Point],
    copies: list[list[Point]],
    run_of: Callable[[int, Point], RunResult],
    quick: bool,
    wall_s: float,
    layout: tuple[str, str] = ("runs", REPLICA_DIR),
) -> dict[str, Any]:
    """Evaluates one experiment from its runs (`run_of(replica, point)`, replica 0 the canonical
    run) into its result.json: the canonical evaluation, each phase replica's, their spread, and
    the verdict rule's verdicts (`judge`). It runs where the campaign sends it (a worker process,
    on runs read from the run cache), so it writes nothing: the caller writes result.json.
    `layout`: where, relative to the experiment's directory, result.json says the canonical runs
    and the replicas' runs are (``data`` for both with a dataset)."""
    runs = [(p, run_of(0, p)) for p in points]
    ev = exp.evaluate(runs, quick)
    evaluated = [
        _evaluate_replica(exp, r, [(p, run_of(r, p)) for p in replica], quick)
        for r, replica in enumerate(copies, start=1)
    ]
    result = _result(exp, points, ev, quick, runs[0][1].summary, wall_s, layout[0])
    result["phase"] = _phase(exp, ev, evaluated, layout[1])
    annotate_checks(result, ev, [e for _, e, _ in evaluated])
    judge(result)
    return _json_safe(result)


def skipped_result(exp: Experiment, why: str, quick: bool) -> dict[str, Any]:
    """The result.json of an experiment that could not run on this machine (an emulated one where
    the emulator cannot run): no points and no checks, ``skipped`` and the explanation saying why,
    and the annotations every reader expects (its verdict by the rule: reported)."""
    ev = Evaluation(points=[], comparison=[], checks=[], notes=[f"Not run on this machine: {why}."])
    result = _result(exp, [], ev, quick, {}, 0.0)
    result["phase"] = _phase(exp, ev, [])
    annotate_checks(result, ev, [])
    judge(result)
    result["skipped"] = why
    return _json_safe(result)


def replica_count(exp: Experiment, quick: bool, replicas: int | None = None) -> int:
    """How many phase replicas of `exp` to run: `replicas` when given, else the experiment's
    `phase_replicas`, at most `QUICK_MAX_REPLICAS` in quick mode."""
    if replicas is not None:
        return replicas
    return min(exp.phase_replicas, QUICK_MAX_REPLICAS) if quick else exp.phase_replicas


def replica_point(point: Point, replica: int) -> Point:
    """`point` for phase replica `replica` (1, 2, ...): its own seed, propagation delays perturbed.

    A scenario that sets ``[engine] perturb_delays`` itself keeps its value; ``ties`` and every
    other field are left as they are. The replica's scenario shares every table but ``engine``
    with the point's (a reproduction makes a thousand replicas: copying each whole took longer
    than writing it as TOML); neither is changed afterwards.
    """
    doc = dict(point.scenario)
    doc["seed"] = int(doc.get("seed", 1)) + replica * REPLICA_SEED_STEP
    engine = dict(doc.get("engine", {}))
    if not engine.get("perturb_delays"):
        engine["perturb_delays"] = PHASE_PERTURBATION
    doc["engine"] = engine
    return Point(point.key, point.params, doc)


#: The fields of result.json that every reader (the report, the CLI's table) relies on.
RESULT_FIELDS = ("id", "title", "paper", "figure", "checks", "comparison", "passed", "total")


def load_results(output_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every ``<id>/result.json`` under `output_dir`: registry order first, then by id.

    A file that is not such a result (not UTF-8, not JSON, fields missing) is a ValueError
    naming it.
    """
    found = {}
    for path in sorted(Path(output_dir).glob(f"*/{RESULT_FILE}")):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path}: not a fairstream result ({err})") from None
        missing = [k for k in RESULT_FIELDS if k not in result] if isinstance(result, dict) else ["all"]
        if missing:
            raise ValueError(f"{path}: not a fairstream result (no {', '.join(missing)})")
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


def task_file(exp: Experiment, where: str) -> str:
    """The filename a run's scenario errors name: the experiment's scenario file, its id and
    `where` (the point, or the replica and the point)."""
    return f"{exp.scenario_path()} [{exp.id} {where}]"


def _evaluate_replica(
    exp: Experiment, replica: int, runs: list[tuple[Point, RunResult]], quick: bool
) -> tuple[int, Evaluation | None, str | None]:
    """(replica, its evaluation, None), or (replica, None, the error) when `evaluate` raised on it:
    a replica that breaks the experiment's evaluation is reported, not fatal."""
    try:
        return replica, exp.evaluate(runs, quick), None
    except Exception as err:
        return replica, None, f"{type(err).__name__}: {err}"


def _phase(
    exp: Experiment,
    canonical: Evaluation,
    evaluated: list[tuple[int, Evaluation | None, str | None]],
    replica_dir: str = REPLICA_DIR,
) -> dict[str, Any]:
    """The ``phase`` block of result.json: how the replicas ran and what each of them found."""
    good = [e for _, e, _ in evaluated if e is not None]
    replicas = []
    for r, ev, error in evaluated:
        entry: dict[str, Any] = {
            "replica": r,
            "seed_offset": r * REPLICA_SEED_STEP,
            "dir": f"{replica_dir}/r{r}",
        }
        if ev is None:
            entry.update({"error": error, "points": None})
        else:
            entry.update(
                {
                    "points": ev.points,
                    "comparison": ev.comparison,
                    "checks": [c.to_json() for c in ev.checks],
                    "passed": sum(c.passed is True for c in ev.checks),
                    "total": sum(c.passed is not None for c in ev.checks),
                }
            )
        replicas.append(entry)
    return {
        "count": len(evaluated),
        "perturb_delays": PHASE_PERTURBATION,
        "seed_step": REPLICA_SEED_STEP,
        "replicas": replicas,
        "errors": sum(e is None for _, e, _ in evaluated),
        "notes": exp.phase_notes(canonical, good) if good else [],
    }


def annotate_checks(
    result: dict[str, Any], canonical: Evaluation, replicas: Sequence[Evaluation | None]
) -> None:
    """Adds the replicas' spread beside each canonical check and numeric comparison row of
    `result`, and the count of phase-sensitive checks (``result["phase_sensitive"]``).

    Per check, ``replicas``: the canonical value, the replicas' numeric values in replica order
    and their min and max, how many replicas were judged, passed, failed or only reported, and
    ``runs``: each replica's number, value and verdict; ``rule``, the verdict rule's word
    (`verdicts`), ``phase_sensitive`` when the rule finds the runs split, and ``split`` when the
    verdict is not the same in every run. Per comparison row,
    ``replicas``: the replicas' numeric values of ``ours``, with min and max. Replicas that failed
    to evaluate (None) are left out. A replica's check or row is matched by its description or
    quantity (at the same position first; by position alone when no name matches and the replica has
    as many checks or rows).
    """
    good = [(n, r) for n, r in enumerate(replicas, start=1) if r is not None]
    sensitive = 0
    for i, (check, row) in enumerate(zip(canonical.checks, result["checks"], strict=True)):
        others = [
            (n, _match(r.checks, i, check.description, lambda c: c.description, len(canonical.checks)))
            for n, r in good
        ]
        found = [(n, c) for n, c in others if c is not None]
        row.update(phase_summary(check, [c for _, c in found], [n for n, _ in found]))
        sensitive += row["phase_sensitive"]
    for i, row in enumerate(result["comparison"]):
        others = [
            _match(
                r.comparison, i, row.get("quantity"), lambda c: c.get("quantity"), len(result["comparison"])
            )
            for _, r in good
        ]
        row["replicas"] = _spread([c.get("ours") for c in others if c is not None])
    result["phase_sensitive"] = sensitive


def judge(result: dict[str, Any]) -> None:
    """The verdict rule (`verdicts`) over `result`'s annotated checks: the experiment's ``verdict``
    and ``verdicts`` (how many checks pass, fail, are phase-sensitive, only report; self-checks)."""
    result["verdict"] = experiment_verdict(result["checks"])
    result["verdicts"] = counts(result["checks"])


def phase_summary(
    canonical: Check, replicas: Sequence[Check], numbers: Sequence[int] | None = None
) -> dict[str, Any]:
    """The spread of one check over its replicas (see `annotate_checks`); `numbers`: the replica
    number of each (1, 2, ... by default), listed with its value and verdict under ``runs``.

    ``rule``: the verdict rule's word (`verdicts.check_verdict`); ``phase_sensitive``: the rule
    found the runs split; ``split``: the verdict is not the same in every run (a check that passes
    with 3 of 4 replicas is split, not phase-sensitive)."""
    numbers = list(numbers) if numbers is not None else list(range(1, len(replicas) + 1))
    verdicts = [c.passed for c in replicas]
    judged = {v for v in [canonical.passed, *verdicts] if v is not None}
    rule = check_verdict(canonical.passed, verdicts)
    return {
        "replicas": {
            "canonical": canonical.ours,
            **_spread([c.ours for c in replicas]),
            "count": len(replicas),
            "passed": sum(v is True for v in verdicts),
            "failed": sum(v is False for v in verdicts),
            "reported": sum(v is None for v in verdicts),
            "runs": [
                {"replica": n, "ours": c.ours, "verdict": c.verdict}
                for n, c in zip(numbers, replicas, strict=True)
            ],
        },
        "rule": rule,
        "phase_sensitive": rule == SENSITIVE,
        "split": len(judged) > 1,
    }


def _spread(values: Sequence[Any]) -> dict[str, Any]:
    """The numeric values (bools and strings skipped; NaN kept out of min and max) and their range."""
    numbers = [float(v) for v in values if is_number(v)]
    finite = [v for v in numbers if not math.isnan(v)]
    return {
        "values": numbers,
        "min": min(finite) if finite else None,
        "max": max(finite) if finite else None,
    }


def _match(items: Sequence[Any], index: int, name: Any, name_of: Any, canonical_len: int) -> Any:
    """The replica's item matching the canonical item `index` called `name`: the one at `index` if it
    has that name, else the first that has, else the one at `index` when the replica has as many
    items as the canonical run (a description that quotes a number differs from run to run)."""
    if index < len(items) and name_of(items[index]) == name:
        return items[index]
    named = next((item for item in items if name_of(item) == name), None)
    if named is None and len(items) == canonical_len:
        return items[index]
    return named


def _result(
    exp: Experiment,
    points: list[Point],
    ev: Evaluation,
    quick: bool,
    first_summary: dict[str, Any],
    wall_s: float,
    runs_dir: str = "runs",
) -> dict[str, Any]:
    from .. import __version__

    return {
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
        # The canonical run's counts over the checks with a threshold; report-only checks and
        # self-checks are counted apart (the verdict rule's counts are "verdicts", see `judge`).
        "passed": sum(c.passed is True and not c.self_check for c in ev.checks),
        "total": sum(c.passed is not None and not c.self_check for c in ev.checks),
        "reported": sum(c.passed is None and not c.self_check for c in ev.checks),
        "points": ev.points,
        "runs": {p.key: f"{runs_dir}/{p.key}" for p in points},
        "data": ev.data,
    }


def _json_safe(value: Any) -> Any:
    """Non-finite floats become the strings 'inf', '-inf', 'nan' (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
