"""Campaigns: many runs, each computed once. What ``sweep`` and ``reproduce`` (and, for one run,
``run``) share.

Every run is a `RunSpec`: its scenario text, the key the run cache knows it by
(`fairstream.cache.run_key`), and what the caller wants back. `run_specs` runs a list of them:

1. runs with the same key are one run (the ``h2h-*`` experiments of a reproduction share their
   320 clip runs; a sweep over a field the scenario does not read shares all its points);
2. each key is looked up in the cache; an entry found is served (checked whole first, see
   `fairstream.cache`), which is also how an interrupted campaign resumes: what finished before
   is in the cache, and only the missing runs run;
3. the others go to worker processes that stay up for the whole batch (`fairstream.parallel`),
   several runs per call when runs are short (`Chunker`: about `CALL_S` of work per call), so that
   a one-second run costs no process start and no round trip of its own;
4. a worker runs each point, stores it in the cache (atomically) and hands back, as Arrow data
   (polars frames, which cross the process boundary as Arrow IPC), the tables the caller asked
   for, with the run's summary, wall time and events: `Outcome`, the one record of each run's
   cost that datasets keep (their ``runs`` table) and ``fairstream bench --sweep`` reads.

A spec with `RunSpec.emulate` runs through the emulator instead, in real time (`_emulate`); its
key is an emulated run's, apart from any simulation's (`fairstream.cache.run_key`). Which process
runs it, and alone, is the caller's choice: a reproduction runs them in its own process, one at a
time, after every simulation (`fairstream.reproduce.campaign`).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .interrupt import BatchInterrupted, ChunkInterrupted, Interrupted, check_worker, simulating

if TYPE_CHECKING:
    from .cache import RunCache
    from .parallel import Batch
    from .progress import TaskProgress


@dataclass(frozen=True)
class RunSpec:
    """One run to make: scenario text (with the filename errors should name), its cache key (None:
    not cached), the seed override and memory bound, `keep_dir` (also write the run directory
    there, as ``fairstream run -o`` does), and the tables to hand back (`hand_back`)."""

    text: str
    filename: str
    key: str | None = None
    seed: int | None = None
    max_memory: int | None = None
    keep_dir: str | None = None
    hand_back: tuple[str, ...] = ()
    label: str = ""
    #: Run through the emulator (`fairstream.emulate`), in real time, rather than simulate. Its
    #: `key` must be an emulated run's (`fairstream.cache.run_key`'s ``emulated``), and its
    #: caller runs it alone (`fairstream.reproduce.campaign`: after the simulations, one at a time).
    emulate: bool = False
    #: Runs of one family cost about the same (a reproduction's: one experiment's): `Chunker`
    #: learns each family's cost and puts only runs of one family in a call.
    family: str = ""


@dataclass
class Outcome:
    """A finished run, as the caller gets it: its summary (summary.json's text; `summary` parses
    it where it is read, not in the worker), the tables it asked for, its wall time (simulation
    only) and events, whether it came from the cache, and `cost_s`: the whole time the worker
    spent on it (build, simulation, storing)."""

    key: str | None
    #: The summary's JSON text, as summary.json holds it (what a dataset keeps of it).
    summary_json: str
    #: Table name -> its bytes (an Arrow IPC stream or a Parquet file: `fairstream.cache.read_table`).
    tables: dict[str, bytes] = field(default_factory=dict)
    wall_time_s: float = 0.0
    events: int = 0
    cached: bool = False
    cost_s: float = 0.0

    @cached_property
    def summary(self) -> dict[str, Any]:
        """summary.json as a dict."""
        return json.loads(self.summary_json)

    def run_info(self, scenario: str | None = None) -> dict[str, Any]:
        """What a dataset's runs table records of this run."""
        return {
            "run_key": self.key,
            "cached": self.cached,
            "events": self.events,
            "wall_time_s": self.wall_time_s,
            "scenario": scenario,
            "summary_json": self.summary_json,
        }


@dataclass(frozen=True)
class Chunk:
    """Runs one worker makes in one call, and the cache they go to."""

    specs: tuple[RunSpec, ...]
    cache: RunCache | None


# --------------------------------------------------------------------------- in the worker


def execute_chunk(chunk: Chunk) -> list[Outcome]:
    """Runs the chunk's points one after the other (in whichever process calls it), their small
    runs stored as one bundle when the chunk ends (`RunCache.bundling`). Ctrl-C raises
    `ChunkInterrupted` holding the outcomes finished before it, which are stored before it is
    raised."""
    done: list[Outcome] = []
    with chunk.cache.bundling() if chunk.cache is not None else contextlib.nullcontext():
        for spec in chunk.specs:
            try:
                done.append(execute(spec, chunk.cache))
            except Interrupted as err:
                raise ChunkInterrupted(err.message, err.partial, done, getattr(err, "ran", False)) from None
            except KeyboardInterrupt:
                raise ChunkInterrupted("interrupted", None, done) from None
    return done


def execute(spec: RunSpec, cache: RunCache | None) -> Outcome:
    """Runs one point: the simulation (in one call: it checks for Ctrl-C every few ms), its run
    directory when asked, its cache entry, and the tables asked for, handed over as bytes (Arrow
    IPC streams from the core, compressed for a run that recorded metrics or a packet trace:
    compact where tables are large). Ctrl-C raises `Interrupted` (with `partial` set when a run
    directory was asked for and its results so far were written there). In a batch's worker no
    run starts after Ctrl-C."""
    from .api import _capture_dir, captures_in

    started = time.perf_counter()
    check_worker()
    if spec.emulate:
        return _emulate(spec, cache, started)
    capture = _capture_dir(spec.keep_dir)
    if capture is None and cache is not None:
        capture = str(_scratch(cache, "capture"))
    with captures_in(capture):
        return _simulate(spec, cache, capture, started)


def _simulate(spec: RunSpec, cache: RunCache | None, capture: str | None, started: float) -> Outcome:
    """`execute` of a simulated run, its pcap captures written into `capture`."""
    from . import _core
    from .api import advance, check_seed, keep_partial, write_results
    from .cache import RunRecord
    from .output import _rmtree

    with warnings.catch_warnings():  # the planning that validated the point has shown them
        warnings.simplefilter("ignore", _core.ScenarioWarning)
        sim = _core.Simulation(spec.text, spec.filename, check_seed(spec.seed), spec.max_memory, capture)
    try:
        with simulating():
            advance(sim, steps=1)
    except KeyboardInterrupt:
        stop = keep_partial(sim, spec.keep_dir)
        stop.ran = True  # stopped part-way, not refused before it started
        raise stop from None
    scratch = None
    run_dir = None
    record = None
    if spec.keep_dir is not None:
        run_dir = write_results(sim, spec.keep_dir)
    elif cache is not None:
        if not records_pcap(sim.resolved_toml()):
            large = _large(sim)
            record = RunRecord.of(sim, compact=large)
            if not large and sum(len(t) for t in record.tables.values()) > IPC_MAX_BYTES:
                record = RunRecord.of(sim, compact=True)  # long series: compressed instead
        if record is None:  # the capture's files are named into a run directory, not copied
            scratch = _scratch(cache, "run")
            run_dir = scratch / "run"
            _rmtree(run_dir)  # one this thread left, had removing it failed
            sim.write_results(str(run_dir))
    try:
        if record is None:
            record = RunRecord.of(sim) if run_dir is None else RunRecord.of_dir(sim, run_dir)
        return _kept(spec, cache, record, record.events, started)
    finally:
        if scratch is not None:
            _rmtree(scratch)


def _kept(
    spec: RunSpec, cache: RunCache | None, record: Any, events: int, started: float, **inputs: Any
) -> Outcome:
    """A finished run's `Outcome`: its `record` stored in `cache` under the spec's key (with the
    seed and any further `inputs`), the tables the spec asked for handed back as bytes."""
    if cache is not None and spec.key is not None:
        cache.put_or_warn(spec.key, record, {"seed": spec.seed, **inputs})
    tables: dict[str, bytes] = {}
    for name in spec.hand_back:
        data = record.tables.get(name)
        if data is not None:
            tables[name] = data.read_bytes() if isinstance(data, Path) else data
    return Outcome(
        spec.key,
        record.summary_json,
        tables,
        record.wall_time_s,
        events,
        cost_s=time.perf_counter() - started,
    )


def _emulate(spec: RunSpec, cache: RunCache | None, started: float) -> Outcome:
    """Runs one point through the emulator (`execute` for a spec with `emulate`): in real time, in
    this process, which must be able to emulate (`fairstream.emulator_unavailable`). The run is
    written as a run directory (`keep_dir`, or a scratch one), from which its cache entry is made
    with its ``emu.json``. Ctrl-C stops it with `Interrupted`, what ran written to `keep_dir`
    (marked incomplete) when given; a stopped emulation is never stored."""
    from . import _core
    from .api import check_seed
    from .cache import RunRecord
    from .output import _rmtree
    from .realnet import _finish

    with simulating():
        run = _core.emulate(spec.text, spec.filename, check_seed(spec.seed), None)
    if not run.complete:
        try:
            _finish(run, spec.keep_dir, "emulate", False, None)
        except Interrupted as stop:
            stop.ran = True  # stopped part-way, not refused before it started
            raise
    scratch = None
    if spec.keep_dir is not None:
        _finish(run, spec.keep_dir, "emulate", False, None)
        run_dir = Path(spec.keep_dir)
    else:
        import tempfile

        scratch = _scratch(cache, "emu") if cache is not None else Path(tempfile.mkdtemp(prefix="emu."))
        run_dir = scratch / "run"
        _rmtree(run_dir)  # one this thread left, had removing it failed
        run.write_results(str(run_dir))
    try:
        return _kept(spec, cache, RunRecord.of_emulation(run, run_dir), 0, started, emulated=True)
    finally:
        if scratch is not None:
            _rmtree(scratch)


#: A run whose tables take more than this as Arrow IPC streams is stored compressed (zstd,
#: several times smaller for long series; `fairstream.cache.RunRecord.of`'s ``compact``).
IPC_MAX_BYTES = 256 << 10


def _large(sim: Any) -> bool:
    """Whether a run recorded metrics or a packet trace (by its estimate): its tables are then
    stored compressed."""
    parts = sim.estimate.get("parts", {})
    return bool(parts.get("metrics") or parts.get("trace"))


def _scratch(cache: RunCache, name: str) -> Path:
    """This thread's scratch directory `name` in the cache's staging directory (on its file
    system: a capture moved from there into an entry is not copied across file systems), not
    made; named so that `fairstream.cache.clear_staging` removes it once this process is gone
    (killed, say). A cache that cannot be written: a new one in the temporary directory, as the
    run goes on without the cache."""
    try:
        return cache.staging(name)
    except OSError:
        import tempfile

        return Path(tempfile.mkdtemp(prefix=f"fairstream-{name}-"))


def records_pcap(resolved: str) -> bool:
    """Whether a resolved scenario captures any link to pcap (``[record] pcap`` not empty)."""
    import re

    return re.search(r"^pcap\s*=\s*\[\s*[^\]\s]", resolved, flags=re.M) is not None


def warm(_: Any = None) -> None:
    """A worker's first call: the modules every run needs, imported while the parent plans."""
    from . import _core, api, cache  # noqa: F401


@dataclass(frozen=True)
class PlanChunk:
    """Points of a sweep to write as TOML and validate: the base scenario, each point's overrides
    and filename, and the memory a run may use."""

    base: dict[str, Any]
    overrides: tuple[dict[str, Any], ...]
    files: tuple[str, ...]
    max_memory: int | None


def plan_chunk(chunk: PlanChunk) -> list[tuple[str, str] | tuple[str, str, str]]:
    """Each point's (TOML text, resolved scenario), or ("error", kind, message) when it does not
    validate (kind: the exception's class name)."""
    from . import _core, tomlio
    from .scenario import with_overrides_shared

    out: list[tuple[str, str] | tuple[str, str, str]] = []
    memo: dict[int, tuple[Any, str]] = {}  # the tables the points share, written once
    for overrides, file in zip(chunk.overrides, chunk.files, strict=True):
        try:
            text = tomlio.dumps_shared(with_overrides_shared(chunk.base, overrides), memo)
            out.append((text, _core.validate(text, file, chunk.max_memory)))
        except (ValueError, TypeError) as err:
            out.append(("error", type(err).__name__, str(err)))
    return out


#: Scenarios per call when a reproduction plans on its workers (about 40 ms of work).
PLAN_CHUNK = 64


@dataclass(frozen=True)
class ScenarioChunk:
    """Scenarios to write as TOML and resolve (on a worker, while others are planned): each as
    its dict and the filename its errors name."""

    docs: tuple[dict[str, Any], ...]
    files: tuple[str, ...]


def resolve_scenarios(chunk: ScenarioChunk) -> list[Any]:
    """Each scenario's (TOML text, resolved scenario, run key, estimated memory in bytes): what a
    campaign plans of a run before it knows whether to run it; or ("error", kind, message) for a
    scenario that does not resolve (`raise_planning_error` raises it where it is read)."""
    from . import _core, tomlio
    from .cache import run_key

    out: list[Any] = []
    for doc, file in zip(chunk.docs, chunk.files, strict=True):
        try:
            text = tomlio.dumps(doc)
            resolved, memory = _core.resolve(text, file)
        except (ValueError, TypeError) as err:
            out.append(("error", type(err).__name__, str(err)))
            continue
        out.append((text, resolved, run_key(resolved), memory))
    return out


def raise_planning_error(planned: Sequence[Sequence[Any]]) -> None:
    """Raises the first ("error", kind, message) among `planned` (what `plan_chunk` and
    `resolve_scenarios` return: a worker's exception, which may not cross the process boundary,
    as its class name and message) as that exception (`fairstream.ScenarioError`, TypeError or
    ValueError)."""
    from . import _core

    for item in planned:
        if len(item) == 3 and item[0] == "error":
            kind = {"ScenarioError": _core.ScenarioError, "TypeError": TypeError}.get(item[1], ValueError)
            raise kind(item[2])


def plan_points(
    base: dict[str, Any],
    points: Sequence[dict[str, Any]],
    scenario_file: str,
    labels: Sequence[str],
    max_memory: int | None,
    shown: Sequence[str] = (),
) -> list[tuple[str, str, str]]:
    """Every point's (TOML text, resolved scenario, the name it goes by), written and validated
    here (while a batch's workers start: `fairstream.parallel.Batch.warm_up`), each under the name
    ``SCENARIO_FILE with LABEL`` (`point_file`); the first point (in grid order) that does not
    validate is raised (`fairstream.ScenarioError`, or the ValueError or TypeError of a value),
    before anything runs.

    A scenario warning is shown once for all the points it concerns (`warn_once`), not once per
    point, and not at all where it is one of `shown` (the base scenario's, as `where_in` gives
    them)."""
    from . import _core

    files = [point_file(scenario_file, label) for label in labels]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", _core.ScenarioWarning)
        planned: list[Any] = plan_chunk(PlanChunk(base, tuple(points), tuple(files), max_memory))
    raise_planning_error(planned)
    warn_once(caught, scenario_file, labels, shown)
    return [(text, resolved, file) for (text, resolved), file in zip(planned, files, strict=True)]


def point_file(scenario_file: str, label: str) -> str:
    """The name a sweep's point goes by in its errors: ``s.toml with flow.0.rate=1 Mbit/s``."""
    return f"{scenario_file} with {label}"


def where_in(message: str, file: str) -> str | None:
    """A scenario error's or warning's text after its ``FILE:LINE:COLUMN: `` (the field and
    what is wrong), for a message about `file`; None otherwise."""
    found = located(message, file)
    return found[1] if found is not None and not found[0] else None


def located(message: str, prefix: str) -> tuple[str, str] | None:
    """A scenario error or warning about a file whose name starts with `prefix`, split at its
    ``:LINE:COLUMN: ``: (the rest of the file's name, the text after it); None for another
    message. A sweep's points go by ``point_file(SCENARIO, "")`` followed by their label."""
    match = re.match(re.escape(prefix) + r"(.*?):\d+:\d+: (.*)", message, re.S)
    return (match[1], match[2]) if match else None


def warn_once(
    caught: Sequence[warnings.WarningMessage], scenario_file: str, labels: Sequence[str], shown: Sequence[str]
) -> None:
    """Shows the scenario warnings `caught` while the points `labels` of `scenario_file` were
    validated, each once: ``FILE: field `X`: what (N of M points: LABEL; ...)``, without a line,
    which would be one of the point's own TOML, not of the user's file. Other warnings are shown
    as they came."""
    from . import _core

    of_a_point = point_file(scenario_file, "")
    known = set(labels)
    groups: dict[str, list[str]] = {}
    for w in caught:
        found = located(str(w.message), of_a_point) if issubclass(w.category, _core.ScenarioWarning) else None
        if found is None or found[0] not in known:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif found[1] not in shown:
            groups.setdefault(found[1], []).append(found[0])
    for rest, where in groups.items():
        some = "; ".join(where[:3]) + ("; ..." if len(where) > 3 else "")
        warnings.warn(
            _core.ScenarioWarning(f"{scenario_file}: {rest} ({len(where)} of {len(labels)} points: {some})"),
            stacklevel=3,
        )


# --------------------------------------------------------------------------- in the parent


def outcome_of(entry: Any, hand_back: Sequence[str] = ()) -> Outcome:
    """The outcome of a run the cache holds (a `fairstream.cache.RunEntry`)."""
    tables = entry.tables_bytes(hand_back)
    manifest = entry.manifest
    text = entry.summary_text()
    return Outcome(
        entry.key, text, tables, manifest.get("wall_time_s", 0.0), manifest.get("events", 0), cached=True
    )


#: What one call to a worker should take, about: shorter runs go several to a call. Each call
#: costs its worker about 1-2 ms beyond its runs (the call and its outcomes through the pipes,
#: the bundle it stores): at 50 ms a cold reproduction made 1 600-1 700 calls, and the gaps
#: between one worker's calls summed to 1.65-2.02 s; at 200 ms (each call of one family,
#: `Chunker`) 700 calls, and 0.95-1.11 s.
CALL_S = 0.2
#: The most runs in one call.
MAX_CHUNK = 64


class Chunker:
    """Cuts a queue of runs into calls of about `CALL_S` of work each. A call holds runs of one
    `RunSpec.family` (consecutive in the queue), as many as the family's mean cost so far allows:
    one run per call until the family's first call answers."""

    def __init__(self, specs: Sequence[RunSpec], cache: RunCache | None):
        self.queue: deque[RunSpec] = deque(specs)
        self.cache = cache
        #: family -> (seconds, runs) of the runs answered so far
        self.costs: dict[str, tuple[float, int]] = {}

    def learn(self, specs: Sequence[RunSpec], outcomes: Sequence[Outcome]) -> None:
        for spec, o in zip(specs, outcomes, strict=True):
            cost, runs = self.costs.get(spec.family, (0.0, 0))
            self.costs[spec.family] = (cost + o.cost_s, runs + 1)

    def size(self, family: str) -> int:
        cost, runs = self.costs.get(family, (0.0, 0))
        if not runs:
            return 1
        return max(1, min(MAX_CHUNK, int(CALL_S / max(cost / runs, 1e-6))))

    def next(self) -> Chunk | None:
        if not self.queue:
            return None
        family = self.queue[0].family
        n = self.size(family)
        specs = [self.queue.popleft()]
        while len(specs) < n and self.queue and self.queue[0].family == family:
            specs.append(self.queue.popleft())
        return Chunk(tuple(specs), self.cache)


def run_specs(
    specs: Sequence[RunSpec],
    cache: RunCache | None,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: TaskProgress | None = None,
    on_outcome: Callable[[list[int], Outcome], None] | None = None,
    batch: Batch | None = None,
    on_other: Callable[[Any, Any], None] | None = None,
) -> list[Outcome]:
    """Runs `specs` (see the module's doc) and returns their outcomes in spec order; `on_outcome`
    gets (the indices of the specs a run answers, its outcome) as each is known, cache hits first.
    `batch`: run on this `fairstream.parallel.Batch` (its owner may submit other calls to it, whose
    results go to `on_other` as (tag, result)); by default one of this call's own.

    A run that fails cancels the rest and its error is raised; Ctrl-C raises `BatchInterrupted`
    whose `finished` holds the outcomes by spec index (each of them is in the cache) and whose
    `stopped` the indices of the runs stopped part-way.
    Either way `progress` is closed (its bar cleared, the cursor given back).
    """
    from .parallel import Batch

    key_of = {id(spec): spec.key if spec.key is not None else ("unkeyed", i) for i, spec in enumerate(specs)}
    by_key: dict[Any, list[int]] = {}
    for i, spec in enumerate(specs):
        by_key.setdefault(key_of[id(spec)], []).append(i)
    outcomes: dict[int, Outcome] = {}

    def record(indices: list[int], outcome: Outcome) -> None:
        for i in indices:
            outcomes[i] = outcome
        if progress is not None:
            progress.advance(specs[indices[0]].label, cached=outcome.cached, runs=len(indices))
        if on_outcome is not None:
            on_outcome(indices, outcome)

    todo: list[RunSpec] = []
    waiting: dict[Any, list[int]] = {}
    for key, indices in by_key.items():
        spec = specs[indices[0]]
        entry = cache.get(spec.key) if cache is not None and spec.key is not None else None
        if entry is not None and spec.keep_dir is None:
            record(indices, outcome_of(entry, spec.hand_back))
            continue
        if entry is not None:  # a run directory is wanted: from the entry, no run
            entry.materialize(spec.keep_dir)
            record(indices, outcome_of(entry, spec.hand_back))
            for i in indices[1:]:
                if specs[i].keep_dir and specs[i].keep_dir != spec.keep_dir:
                    entry.materialize(specs[i].keep_dir)
            continue
        todo.append(spec)
        waiting[key] = indices
    if cache is not None and todo:
        cache.check_writable()  # a cache that cannot store is said here, once, not by each worker
    chunker = Chunker(todo, cache)
    own = batch is None
    batch = batch or Batch(jobs, scheduler, calls_hint=len(todo))
    tag_specs: dict[Any, tuple[RunSpec, ...]] = {}

    def feed() -> None:
        while batch.pending < batch.window:
            chunk = chunker.next()
            if chunk is None:
                return
            tag = ("runs", len(tag_specs))
            tag_specs[tag] = chunk.specs
            batch.submit(tag, execute_chunk, chunk)

    def answer(spec: RunSpec, outcome: Outcome) -> None:
        indices = waiting.pop(key_of[id(spec)])
        record(indices, outcome)
        others = [specs[i].keep_dir for i in indices[1:]]  # the same run wanted elsewhere too
        others = [d for d in others if d and d != spec.keep_dir]
        if others and cache is not None and spec.key:
            from .cache import RunCache

            # The entry just stored, read under --no-cache too (which serves no older one).
            entry = RunCache(cache.root).get(spec.key)
            if entry is not None:
                for other in others:
                    entry.materialize(other)

    try:
        batch.feeder = feed
        for tag, value in batch.results():
            if tag not in tag_specs:
                if on_other is not None:
                    on_other(tag, value)
                continue
            chunker.learn(tag_specs[tag], value)
            for spec, outcome in zip(tag_specs[tag], value, strict=True):
                answer(spec, outcome)
    except BatchInterrupted as stop:
        stopped: list[int] = []
        for tag, value in stop.finished.items():
            if tag in tag_specs:
                for spec, outcome in zip(tag_specs[tag], value, strict=True):
                    if key_of[id(spec)] in waiting:
                        answer(spec, outcome)
            elif on_other is not None:
                on_other(tag, value)
        for tag, done in stop.done_in.items():
            for spec, outcome in zip(tag_specs.get(tag, ()), done, strict=False):
                if key_of[id(spec)] in waiting:
                    answer(spec, outcome)
        for tag in stop.stopped:
            specs_of = tag_specs.get(tag, ())
            n_done = len(stop.done_in.get(tag, ()))
            if n_done < len(specs_of):
                stopped.extend(waiting.get(key_of[id(specs_of[n_done])], []))
        if own:
            batch.close(killed=True)
        if progress is not None:
            progress.close()
        raise BatchInterrupted(len(specs), outcomes, stopped, stop.lost) from None
    except BaseException:
        if own:
            batch.close(killed=True)
        if progress is not None:
            progress.close()  # a failed or interrupted batch: clear the bar, give the cursor back
        raise
    finally:
        batch.feeder = None
    if own:
        batch.close()
    return [outcomes[i] for i in range(len(specs))]
