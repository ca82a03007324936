"""A reproduction as a campaign: every run computed once, cached, resumable, and every experiment
evaluated once.

`Campaign.run` plans every run of every chosen experiment (canonical points and phase replicas),
validates them all and keys each by its resolved scenario (`fairstream.cache.run_key`): on the
workers the runs will use, started first, when this build has not planned the same scenarios
before (`fairstream.cache.PLANS` remembers them), then:

- an experiment whose runs and evaluating code are unchanged since it was last evaluated (its
  *experiment key*: the run keys of all its points, the experiment's definition, the source of the
  fairstream package and of the experiment's module, and the versions of polars, numpy and
  matplotlib) is not evaluated again: its result.json, dataset and figures come from the cache
  (``experiments/`` entries), checked against their manifest;
- the runs of the other experiments go through one `fairstream.campaign.run_specs`: a run wanted
  by several experiments (the ``h2h-*`` set shares its 320 clip runs) runs once, one the cache
  holds is not run (an interrupted reproduction resumes where it stopped), the others run on
  workers that stay up;
- experiments that share runs form one *group*, evaluated by one call (the shared runs are read
  once), as soon as the group's last run is done, on the same workers, ahead of the runs still
  queued: evaluations and figures overlap the simulations instead of following them. The groups
  with the most runs are run first, so that their evaluations have the rest to overlap with;
- an evaluation writes ``<id>/result.json``, the experiment's dataset ``<id>/data/``
  (`fairstream.dataset`: canonical points and replicas, with the points' parameters as columns;
  no metrics or packet traces unless ``keep_runs``), its figures (``figures/``, listed with their
  captions in ``<id>/figures.json``), its section of the report (``<id>/report-section.html``,
  `fairstream.report.section_html`: the page is then these stitched together), and stores them
  all as the experiment's cache entry.

Emulated experiments (issue 21: points whose parameters say ``emulate``) go the same way, with
three differences. Their emulated points run after every simulation (and every evaluation the
simulations complete) is done and the workers are gone, one at a time in this process, so that
nothing else of the reproduction competes with their real time; the experiment is evaluated, in
this process too, once its last one is done. Their runs are keyed apart from any simulation's,
and by the kernel they ran on (`fairstream.cache.run_key`'s ``emulated``): cached like the
others, so that an unchanged reproduction, or one resumed after Ctrl-C, does not measure them
again (``--no-cache`` measures anew; docs/cache.md). Where the emulator cannot run
(`fairstream.emulator_unavailable`), they are not planned at all: their result.json says
``skipped`` and why, and is not cached.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core, output
from ..campaign import RunSpec, run_specs
from ..interrupt import MARKER, BatchInterrupted, Interrupted, clear_marker, simulating, write_marker
from ..parallel import Batch, memory_per_run
from ..progress import TaskProgress
from ..results import RunResult
from .experiment import Experiment, Point
from .runner import (
    REPLICA_DIR,
    RESULT_FILE,
    _plan,
    evaluate_experiment,
    replica_count,
    replica_point,
    skipped_result,
    task_file,
)

if TYPE_CHECKING:
    from ..cache import RunCache

#: Bumped when what an experiment entry holds, or how its key is computed, changes.
FORMAT = 1
#: Where an experiment's dataset is, under its directory; its figures' list.
DATA_DIR = "data"
FIGURES_FILE = "figures.json"
FIGURE_DIR = "figures"


@dataclass(frozen=True)
class Job:
    """One run of one experiment: replica 0 is the canonical run."""

    replica: int
    index: int
    point: Point
    text: str
    filename: str
    resolved: str
    key: str
    #: The run's estimated memory, bytes (`fairstream._core.resolve`).
    memory: float

    @property
    def emulate(self) -> bool:
        """Whether the run goes through the emulator (its point's ``emulate`` parameter)."""
        return bool(self.point.params.get("emulate"))

    @property
    def where(self) -> str:
        """The point's address in the experiment's dataset (and, with ``keep_runs``, its run
        directory under the experiment's): ``<key>`` or ``r<n>/<key>``."""
        return self.point.key if not self.replica else f"r{self.replica}/{self.point.key}"


@dataclass
class Plan:
    """An experiment's runs, and its key."""

    exp: Experiment
    points: list[Point]
    copies: list[list[Point]]
    jobs: list[Job]
    key: str = ""

    @property
    def run_keys(self) -> set[str]:
        return {j.key for j in self.jobs}


@dataclass
class _Draft:
    """An experiment's points (and their replicas' `copies`) before its runs are keyed, and what
    validation returned for their scenarios (`memo`: one [text, filename, resolved, key, memory]
    per run of `every`, or None until `Campaign._resolve` has found it)."""

    exp: Experiment
    points: list[Point]
    copies: list[list[Point]]
    memo_key: str = ""
    memo: list[list[Any]] | None = None
    #: Each run's scenario dict as canonical JSON (`every`'s order): what the plan key hashes, and
    #: what tells two runs' scenarios equal.
    canonical: list[str] = field(default_factory=list)
    #: Whether `memo` was found by this process (`Campaign._resolve`) rather than remembered.
    fresh: bool = False

    @cached_property
    def every(self) -> list[tuple[int, int, Point]]:
        """Every run: (replica, index, point), the canonical points first (replica 0); made once
        (a draft's points and copies are not changed after it is made)."""
        return [
            (r, i, p) for r, replica in enumerate([self.points, *self.copies]) for i, p in enumerate(replica)
        ]


@dataclass(frozen=True)
class GroupCall:
    """The evaluation of a group of experiments that share runs (sent to a worker)."""

    plans: tuple[Plan, ...]
    out: str
    cache: RunCache
    quick: bool
    keep_runs: bool
    wall_s: float


@dataclass
class Campaign:
    """The runs and evaluations of `experiments` (see the module's doc)."""

    experiments: Sequence[Experiment]
    quick: bool = False
    replicas: int | None = None
    keep_runs: bool = False
    cache: Any = True
    plans: list[Plan] = field(default_factory=list)
    #: The emulated experiments not run on this machine, and why (`fairstream.emulator_unavailable`).
    skipped: dict[str, str] = field(default_factory=dict)
    #: Counts of the last `run`: runs (distinct), served by the cache, computed; experiments
    #: evaluated and restored.
    stats: dict[str, int] = field(default_factory=dict)

    def run(
        self,
        output_dir: str | os.PathLike[str],
        *,
        jobs: int | None = None,
        quiet: bool = False,
        scheduler: str | None = None,
        force: bool = False,
        max_memory: int | str | None = None,
    ) -> list[dict[str, Any]]:
        """Runs and evaluates every experiment into `output_dir` (see `runner.reproduce`)."""
        from ..api import _root, _run_cache, memory_limit
        from ..cache import RunCache

        limit = memory_limit(max_memory)
        store = _run_cache(self.cache)
        target = output.prepare(output_dir, "reproduce", force, cache=_root(store))
        per_run = memory_per_run(limit, jobs, 0, scheduler)
        temporary = None
        if store is None:  # no cache wanted: one of this call's own, for the evaluations to read
            import tempfile

            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = tempfile.mkdtemp(prefix=f".{target.name}.cache-", dir=target.parent)
            store = RunCache(temporary)
        batch = None
        try:
            self.skipped = _skipped(self.experiments)
            drafts = []
            todo = [exp for exp in self.experiments if exp.id not in self.skipped]
            for exp in todo:
                drafts.append(self._draft(exp, store))
                if batch is None and drafts[-1].memo is None and (len(todo) > 1 or len(drafts[-1].every) > 1):
                    # planning to do: the workers start importing while the rest is drafted
                    batch = Batch(jobs, scheduler)
                    batch.warm_up()
            batch = self._resolve(drafts, store, batch)
            self.plans = [self._plan(draft) for draft in drafts]
            self._check_memory(store, per_run)
            with output.staged(output_dir, "reproduce", force, target=target) as out:
                return self._run(out, store, per_run, jobs, quiet, scheduler, batch)
        except BaseException:
            if batch is not None:
                batch.close(killed=True)
            raise
        finally:
            if temporary is not None:
                output._rmtree(Path(temporary))

    def _draft(self, exp: Experiment, store: RunCache) -> _Draft:
        """The experiment's points and replicas, and what validation returned for their scenarios
        when this build last planned the same ones (`PLANS`), or None."""
        from ..cache import PLANS

        points = _plan(exp, self.quick)
        count = replica_count(exp, self.quick, self.replicas)
        draft = _Draft(exp, points, [[replica_point(p, r) for p in points] for r in range(1, count + 1)])
        every = draft.every
        draft.canonical = [json.dumps(point.scenario, sort_keys=True, default=str) for _, _, point in every]
        draft.memo_key = _plan_key(exp, draft.canonical)
        memo = store.get_json(PLANS, draft.memo_key)
        if memo is not None and len(memo) == len(every) and all(len(m) == 5 for m in memo):
            draft.memo = memo
        return draft

    def _resolve(self, drafts: list[_Draft], store: RunCache, batch: Batch | None) -> Batch | None:
        """Writes and resolves the scenarios of the drafts this build has not planned before, on
        the workers the runs will use (`batch`, started by `run` as soon as it drafted something
        to plan, and returned), and remembers what it found (`PLANS`). Returns None when every
        draft was remembered (no batch was started) or the work is done here."""
        from ..cache import PLANS
        from ..campaign import PLAN_CHUNK, ScenarioChunk, raise_planning_error, resolve_scenarios

        tasks = [
            (d, point.scenario, task_file(d.exp, point.key if not r else f"r{r} {point.key}"))
            for d in drafts
            if d.memo is None
            for r, _, point in d.every
        ]
        if not tasks:
            return None
        # The same scenario in the same directory (which relative traces are read from) resolves
        # to the same text, key and estimate: each is sent once (the five h2h-* experiments plan
        # the same 320 clip runs), its first occurrence's file named in its errors.
        canonical = [c for d in drafts if d.memo is None for c in d.canonical]
        first: dict[tuple[str, str], int] = {}
        which: list[int] = []  # each task's place among those sent
        sent = []
        for c, task in zip(canonical, tasks, strict=True):
            same = (c, os.path.dirname(task[2]))
            if same not in first:
                first[same] = len(sent)
                sent.append(task)
            which.append(first[same])
        chunks = [sent[i : i + PLAN_CHUNK] for i in range(0, len(sent), PLAN_CHUNK)]
        calls = [
            ScenarioChunk(tuple(doc for _, doc, _ in c), tuple(file for _, _, file in c)) for c in chunks
        ]
        if batch is None:  # a single experiment with a single scenario: planned here
            batch = Batch(1)
        try:
            resolved = [item for found in batch.map(resolve_scenarios, calls, "planning") for item in found]
            raise_planning_error(resolved)
        except BaseException:
            batch.close(killed=True)
            raise
        fresh = [d for d in drafts if d.memo is None]
        for d in fresh:
            d.memo = []
            d.fresh = True
        for (d, _, file), w in zip(tasks, which, strict=True):
            text, scenario, key, memory = resolved[w]
            d.memo.append([text, file, scenario, key, memory])
        for d in fresh:
            store.put_json(PLANS, d.memo_key, d.memo)
        return None if batch.local else batch

    def _plan(self, draft: _Draft) -> Plan:
        """The experiment's runs, each validated and keyed (`_resolve`). What validation returns
        for the same scenario dicts on the same build is remembered in the cache (`PLANS`): a
        reproduction run again neither writes its 2 769 scenarios as TOML nor validates them again
        (the memory check of a run that is to run is made later, `_check_memory`)."""
        from ..cache import run_key

        exp, points, copies, memo = draft.exp, draft.points, draft.copies, draft.memo
        every = draft.every
        assert memo is not None, "planned before its scenarios were resolved"
        # a key is remembered with its scenario unless the run reads a file (a trace), which may
        # have changed since: its key is computed again (`fairstream.cache.read_files`) unless it
        # was found just now; an emulated run's key is always computed here, apart from the
        # simulation's of the same scenario and with the kernel it runs on (`run_key`'s
        # ``emulated``)
        jobs = []
        for (r, i, point), (text, filename, resolved, key, memory) in zip(every, memo, strict=True):
            emulated = bool(point.params.get("emulate"))
            stale = "trace" in resolved and not draft.fresh
            if emulated or stale:
                key = run_key(resolved, emulated=emulated)
            if stale:  # its estimate may follow the file too
                memory = _core.resolve(text, filename)[1]
            jobs.append(Job(r, i, point, text, filename, resolved, key, memory))
        plan = Plan(exp, points, copies, jobs)
        plan.key = experiment_key(plan, self.quick, self.keep_runs)
        return plan

    def _check_memory(self, store: RunCache, per_run: int | None) -> None:
        """Refuses (`fairstream.ScenarioError`), before anything runs or is written, a run the
        cache does not hold whose estimated memory exceeds `per_run` (with the refusal
        `fairstream.validate` gives, naming the field behind the largest part)."""
        if per_run is None:
            return
        for plan in self.plans:
            for job in plan.jobs:
                if job.memory > per_run and not store.path(job.key).is_file():
                    _core.validate(job.text, job.filename, per_run)

    def _run(
        self,
        out: Path,
        store: RunCache,
        per_run: int | None,
        jobs: int | None,
        quiet: bool,
        scheduler: str | None,
        batch: Batch | None = None,
    ) -> list[dict[str, Any]]:
        started = time.perf_counter()
        results: dict[str, dict[str, Any]] = {}
        for exp in self.experiments:
            if exp.id in self.skipped:
                results[exp.id] = _write_skipped(exp, self.skipped[exp.id], out, self.quick)
        todo: list[Plan] = []
        for plan in self.plans:
            entry = store.get_dir(plan.key)
            if entry is not None and restore(entry, out):
                results[plan.exp.id] = _read_result(out / plan.exp.id)
            else:
                todo.append(plan)
        groups = _groups(todo)
        waiting = [set().union(*(p.run_keys for p in g)) for g in groups]
        group_of: dict[str, list[int]] = {}
        for gi, keys in enumerate(waiting):
            for k in keys:
                group_of.setdefault(k, []).append(gi)
        specs: list[RunSpec] = []
        for plan in [p for g in groups for p in g] + (
            [p for p in self.plans if p not in todo] if self.keep_runs else []
        ):
            for job in plan.jobs:
                keep = str(out / plan.exp.id / _run_where(job)) if self.keep_runs else None
                label = f"{plan.exp.id}/{job.where}"
                specs.append(
                    RunSpec(
                        job.text,
                        job.filename,
                        job.key,
                        max_memory=per_run,
                        keep_dir=keep,
                        label=label,
                        emulate=job.emulate,
                        family=plan.exp.id,
                    )
                )
        # The simulations first, in parallel; then the emulations, in this process, one at a time
        # with nothing else of the reproduction running (their real time is what they measure).
        # A group whose runs include emulated ones is evaluated once those are done.
        simulated = [spec for spec in specs if not spec.emulate]
        emulated = [spec for spec in specs if spec.emulate]
        specs = simulated + emulated  # BatchInterrupted's indices count in this order
        batches = [batch or Batch(jobs, scheduler, calls_hint=len(simulated) + len(groups))]
        submitted: set[int] = set()

        def submit(gi: int) -> None:
            if gi in submitted:
                return
            submitted.add(gi)
            call = GroupCall(
                tuple(groups[gi]), str(out), store, self.quick, self.keep_runs, time.perf_counter() - started
            )
            batches[-1].submit(("eval", gi), evaluate_group, call, first=True)

        def on_outcome(indices: list[int], outcome: Any) -> None:
            for gi in group_of.get(outcome.key, []):
                waiting[gi].discard(outcome.key)
                if not waiting[gi]:
                    submit(gi)

        def on_other(tag: Any, value: Any) -> None:
            for result in value:
                results[result["id"]] = result

        for gi, keys in enumerate(waiting):  # a group whose runs are all known already
            if not keys:
                submit(gi)
        progress = TaskProgress("reproduce", len(specs), quiet=quiet)
        ran = {"runs": 0, "cached": 0}

        def counted(indices: list[int], outcome: Any) -> None:
            ran["cached" if outcome.cached else "runs"] += 1
            on_outcome(indices, outcome)

        done: list[Any] = []  # the simulations' outcomes, once they are all done
        try:
            done = run_specs(
                simulated, store, progress=progress, on_outcome=counted, on_other=on_other, batch=batches[-1]
            )
            batches[-1].close()
            if emulated:
                batches.append(Batch(1))  # this process: no worker, nothing in parallel
                run_specs(
                    emulated,
                    store,
                    progress=progress,
                    on_outcome=counted,
                    on_other=on_other,
                    batch=batches[-1],
                )
                batches[-1].close()
        except BatchInterrupted as stop:
            progress.close()
            batches[-1].close(killed=True)
            if len(batches) > 1:  # in the emulations: every simulation had finished
                base = len(simulated)
                finished = {**dict(enumerate(done)), **{base + i: v for i, v in stop.finished.items()}}
                stop = BatchInterrupted(len(specs), finished, [base + i for i in stop.stopped], stop.lost)
            else:
                stop = BatchInterrupted(len(specs), stop.finished, stop.stopped, stop.lost)
            raise _keep_partial(out, self.plans, specs, stop, results) from None
        except BaseException:
            progress.close()
            batches[-1].close(killed=True)
            raise
        progress.finish()
        self.stats = {
            "runs": len({s.key for s in specs}),
            "computed": ran["runs"],
            "from_cache": ran["cached"],
            "evaluated": len(todo),
            "restored": len(self.plans) - len(todo),
            "skipped": len(self.skipped),
        }
        for plan in self.plans:
            clear_marker(out / plan.exp.id)
        if not any(out.glob(f"*/{MARKER}")):
            clear_marker(out)
        return [results[exp.id] for exp in self.experiments]


def _skipped(experiments: Sequence[Experiment]) -> dict[str, str]:
    """The emulated experiments among `experiments` that this machine cannot run, and why."""
    if not any(exp.emulated for exp in experiments):
        return {}
    from ..emulation import emulator_unavailable

    why = emulator_unavailable()
    return {exp.id: why for exp in experiments if exp.emulated and why is not None}


def _write_skipped(exp: Experiment, why: str, out: Path, quick: bool) -> dict[str, Any]:
    """Writes the result.json of an experiment not run on this machine (and an empty figure list);
    returns it. It is not cached: on a machine that can run it, it runs."""
    result = skipped_result(exp, why, quick)
    exp_dir = out / exp.id
    exp_dir.mkdir(parents=True, exist_ok=True)
    (exp_dir / RESULT_FILE).write_text(json.dumps(result, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    (exp_dir / FIGURES_FILE).write_text(json.dumps({"figures": []}, indent=2) + "\n", encoding="utf-8")
    return result


def _run_where(job: Job) -> str:
    """A job's run directory under its experiment's (``keep_runs``)."""
    return f"runs/{job.point.key}" if not job.replica else f"{REPLICA_DIR}/r{job.replica}/{job.point.key}"


def _groups(plans: list[Plan]) -> list[list[Plan]]:
    """The plans joined when they share a run, the groups with the most distinct runs first (then
    in registry order)."""
    groups: list[list[Plan]] = []
    keys: list[set[str]] = []
    for plan in plans:
        mine = plan.run_keys
        joined = [i for i, k in enumerate(keys) if k & mine]
        merged = [plan]
        for i in reversed(joined):
            merged = groups.pop(i) + merged
            mine |= keys.pop(i)
        groups.append(merged)
        keys.append(mine)
    order = sorted(range(len(groups)), key=lambda i: -len(keys[i]))
    return [sorted(groups[i], key=plans.index) for i in order]


# --------------------------------------------------------------------------- experiment keys


def code_hash(exp: Experiment) -> str:
    """A hash of the code that evaluates `exp`: every file of the fairstream package, the file of
    the experiment's class (when outside it), and the versions of polars, numpy and matplotlib."""
    import inspect

    return _code_hash(inspect.getsourcefile(type(exp)) or "")


@functools.cache
def _code_hash(source: str) -> str:
    h = hashlib.sha256(_package_hash().encode())
    if source and not Path(source).resolve().is_relative_to(_package_dir()):
        h.update(Path(source).name.encode())
        h.update(Path(source).read_bytes())
    return h.hexdigest()


def _package_dir() -> Path:
    return Path(__file__).resolve().parents[1]


@functools.cache
def _package_hash() -> str:
    """A hash of every file of the fairstream package (but its compiled ones) and the versions of
    polars, numpy and matplotlib: read once per process, whatever the number of experiments."""
    package = _package_dir()
    h = hashlib.sha256()
    files = sorted(p for p in package.rglob("*") if p.is_file() and p.suffix not in (".so", ".pyc", ".pyd"))
    for path in files:
        h.update(str(path.relative_to(package)).encode())
        h.update(path.read_bytes())
    for library in ("polars", "numpy", "matplotlib"):
        h.update(f"{library} {_library_version(library)}".encode())
    return h.hexdigest()


def _library_version(name: str) -> str:
    """A library's installed version, read from its distribution's metadata rather than by
    importing it (matplotlib takes a quarter of a second to import, and an unchanged reproduction
    draws nothing); the same in every process, whatever it imported before."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def experiment_key(plan: Plan, quick: bool, keep_runs: bool) -> str:
    """The key of an experiment's evaluation: its definition, its runs' keys (by replica and point,
    with the point's parameters), the evaluating code and whether run directories are kept."""
    from ..cache import build

    b = build()
    doc = {
        "format": FORMAT,
        "experiment": repr(plan.exp),
        "quick": quick,
        "keep_runs": keep_runs,
        "code": code_hash(plan.exp),
        "build": [b.version, b.id],
        "runs": [[j.replica, j.point.key, j.key, _params(j.point)] for j in plan.jobs],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def _plan_key(exp: Experiment, canonical: list[str]) -> str:
    """The key of an experiment's planned scenarios: the dicts themselves (`_Draft.canonical`:
    each as canonical JSON, which holds no line break), the scenario file's name (errors name
    it), and the build (whose validation is remembered)."""
    from ..cache import build

    b = build()
    doc = {"format": FORMAT, "file": str(exp.scenario_path()), "id": exp.id, "build": [b.version, b.id]}
    h = hashlib.sha256(json.dumps(doc, sort_keys=True).encode())
    for text in canonical:
        h.update(text.encode())
        h.update(b"\n")
    return h.hexdigest()


def _params(point: Point) -> str:
    return json.dumps(point.params, sort_keys=True, default=str)


def restore(entry: Path, out: Path) -> bool:
    """Puts an experiment's cached outputs into `out` (hard links where the file system allows,
    `fairstream.output.link_or_copy`); False when the entry lists none."""
    manifest = json.loads((entry / "manifest.json").read_text(encoding="utf-8"))
    files = list(manifest.get("files", {}))
    if not files:
        return False
    for name in files:
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        output.link_or_copy(entry / name, target)
    return True


def _read_result(exp_dir: Path) -> dict[str, Any]:
    return json.loads((exp_dir / RESULT_FILE).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- evaluation


def evaluate_group(call: GroupCall) -> list[dict[str, Any]]:
    """Evaluates each experiment of a group (in whichever process calls it): result.json, the
    dataset, the figures, and the experiment's cache entry. Runs shared by the group's experiments
    are read once. Ctrl-C stops it (in a worker too, as it stops a run) with `Interrupted`: the
    experiments evaluated before it are in the cache."""
    try:
        with simulating():  # in a batch's worker, SIGINT interrupts this span
            return _evaluate_group(call)
    except KeyboardInterrupt as err:
        if isinstance(err, Interrupted):
            raise
        raise Interrupted("interrupted while evaluating; not evaluated") from None


def _evaluate_group(call: GroupCall) -> list[dict[str, Any]]:
    from ..cache import RunCache
    from ..report import SECTION_FILE, section_html

    out = Path(call.out)
    store = RunCache(call.cache.root)  # reads what was just stored, also under --no-cache
    shared: dict[str, RunResult] = {}

    def run_of(plan: Plan, job: Job) -> RunResult:
        if call.keep_runs:
            return RunResult(out / plan.exp.id / _run_where(job))
        if job.key not in shared:
            entry = store.get(job.key)
            if entry is None:
                raise RuntimeError(
                    f"{plan.exp.id}: the run cache ({store.root}) does not hold run {job.where} "
                    "(on a cluster, the cache must be on a file system every worker and this "
                    "machine share)"
                )
            shared[job.key] = RunResult._of(entry)
        return shared[job.key]

    results = []
    datasets: dict[tuple[Any, ...], Path] = {}  # the same points and runs: the same dataset
    for plan in call.plans:
        by_point = {(j.replica, j.point.key): j for j in plan.jobs}
        layout = ("runs", REPLICA_DIR) if call.keep_runs else (DATA_DIR, DATA_DIR)
        result = evaluate_experiment(
            plan.exp,
            plan.points,
            plan.copies,
            lambda r, p, plan=plan, by_point=by_point: run_of(plan, by_point[(r, p.key)]),
            call.quick,
            call.wall_s,
            layout,
        )
        exp_dir = out / plan.exp.id
        exp_dir.mkdir(parents=True, exist_ok=True)
        result_text = json.dumps(result, indent=2, allow_nan=False) + "\n"
        same = tuple((j.replica, j.index, j.point.key, j.key, _params(j.point)) for j in plan.jobs)
        if same in datasets:  # the h2h-* experiments: one dataset, written once
            _copy_tree(datasets[same], exp_dir / DATA_DIR)
        else:
            runs = [(j, run_of(plan, j)) for j in plan.jobs]
            _write_dataset(plan, exp_dir / DATA_DIR, runs, call.keep_runs, call.cache.root)
            datasets[same] = exp_dir / DATA_DIR
        figures = draw(plan.exp, result, out)
        (exp_dir / FIGURES_FILE).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        # the report's section, here rather than in the parent once every experiment is done
        section = section_html(json.loads(result_text), out)  # as the report reads result.json
        (exp_dir / SECTION_FILE).write_text(section, encoding="utf-8")
        # last: an experiment has a result.json only once its evaluation is whole (an evaluation
        # stopped by Ctrl-C leaves none, and the report and `_keep_partial` go by it)
        (exp_dir / RESULT_FILE).write_text(result_text, encoding="utf-8")
        names = [
            p.relative_to(out).as_posix()
            for p in sorted(exp_dir.rglob("*"))
            if p.is_file()
            and "runs" not in p.relative_to(exp_dir).parts[:1]
            and REPLICA_DIR not in p.relative_to(exp_dir).parts[:1]
        ]
        names += [f["src"] for f in figures.get("figures", [])]
        call.cache.put_dir(plan.key, out, names, {"id": plan.exp.id})
        results.append(result)
    return results


def _copy_tree(source: Path, target: Path) -> None:
    import shutil

    shutil.copytree(source, target, dirs_exist_ok=True, copy_function=output.link_or_copy)


def _write_dataset(
    plan: Plan, directory: Path, runs: list[tuple[Job, RunResult]], keep_runs: bool, cache_root: Path
) -> None:
    from ..dataset import LARGE_TABLES, SMALL_TABLES, DatasetWriter
    from ..results import TABLES

    params: list[str] = []
    for job, _ in runs:
        params.extend(p for p in job.point.params if p not in params)
    tables = [*SMALL_TABLES, *LARGE_TABLES] if keep_runs else list(SMALL_TABLES)
    writer = DatasetWriter(directory, params, tables, replicas=True, cache=cache_root)
    for job, run in runs:
        frames = {}
        for name in tables:
            if name in TABLES:
                try:
                    frames[name] = run.table(name)
                except FileNotFoundError:
                    frames[name] = None
        source = getattr(run, "_source", None)
        text = source.summary_text() if hasattr(source, "summary_text") else None
        emu = run.emu if job.emulate else None
        info = {
            "run_key": job.key,
            "scenario": job.resolved,
            "summary_json": text,
            "emu_json": None if emu is None else json.dumps(emu, sort_keys=True),
        }
        writer.add(
            job.index, job.point.key, job.point.params, run.summary, frames, replica=job.replica, run=info
        )
    writer.close()


def draw(exp: Experiment, result: Mapping[str, Any], out: Path, who: str = "reproduce") -> dict[str, Any]:
    """Draws the experiment's figures into ``out/figures``: {"figures": [{src, caption}]}, or
    {"error": ...} when drawing failed (a broken figure must not cost the rest; `who` names the
    command in the line printed then)."""
    import sys

    from . import plots

    try:
        with plots.style():
            figures = exp.figures(result, out / exp.id, out / FIGURE_DIR)
    except Exception as err:
        print(f"{who}: figures of {exp.id} failed: {err!r}", file=sys.stderr)
        return {"error": repr(err)}
    return {
        "figures": [
            {"src": fig.path.resolve().relative_to(out.resolve()).as_posix(), "caption": fig.caption}
            for fig in figures
        ]
    }


# --------------------------------------------------------------------------- Ctrl-C


def _keep_partial(
    out: Path,
    plans: list[Plan],
    specs: Sequence[RunSpec],
    stop: BatchInterrupted,
    results: dict[str, dict[str, Any]],
) -> Interrupted:
    """Marks an interrupted reproduction: ``<id>/INCOMPLETE`` in each experiment not evaluated,
    ``INCOMPLETE`` at the top, each saying which runs finished; returns the `Interrupted` to raise.
    An experiment whose result.json was written is evaluated (`_evaluate_group` writes it last),
    though the call that evaluated its group was stopped before it returned."""
    done = {specs[i].key for i in stop.finished}
    evaluated = [p.exp.id for p in plans if p.exp.id in results or (out / p.exp.id / RESULT_FILE).is_file()]
    lines = []
    for plan in plans:
        if plan.exp.id in evaluated:
            continue
        keys = [j.key for j in plan.jobs]
        finished = sum(k in done for k in keys)
        line = (
            f"{plan.exp.id}: {finished} of {len(keys)} runs finished (kept in the run cache); not evaluated"
        )
        (out / plan.exp.id).mkdir(parents=True, exist_ok=True)
        write_marker(out / plan.exp.id, f"interrupted: {line}")
        lines.append(line)
    summary = (
        f"interrupted: {len(stop.finished)} of {stop.total} runs finished; "
        + (f"evaluated: {', '.join(evaluated)}" if evaluated else "no experiment was evaluated")
        + ". Run the same `fairstream reproduce` again to finish: the runs that finished are in "
        "the run cache and do not run again."
    )
    write_marker(out, "\n".join([summary, *lines]))
    return Interrupted(f"{summary} Results so far: {out}", str(out))
