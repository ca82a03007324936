"""The Python entry points: `run` a scenario and get its tables back, `validate` a scenario.

Also the two steps every driver shares (the CLI, sweeps, reproductions): `advance` a simulation to
its end in chunks so progress can be shown, and `write_results`, which makes an output directory
appear only complete and replaces only what the rules of `fairstream.output` allow.

Ctrl-C during a run (see `fairstream.interrupt`): the run ends where it got to, its results so
far are written to the output directory marked incomplete, and `Interrupted` is raised.

A run is looked up in the run cache before it starts and stored there once it ends
(`fairstream.cache`): the same scenario and seed, on the same build, is computed once.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from . import _core, output
from .interrupt import Interrupted, catching, raise_if_signalled
from .progress import SimulationProgress
from .results import RunResult
from .scenario import ScenarioLike, load

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from .cache import RunCache

#: A progress callback: (simulated seconds so far, duration in seconds, events processed).
ProgressCallback = Callable[[float, float, int], None]

#: How many chunks a run is advanced in (each releases the GIL while it runs).
STEPS = 200


def validate(scenario: ScenarioLike) -> str:
    """Checks a scenario (path, TOML text or dict); returns it resolved, every default filled in.

    Raises `fairstream.ScenarioError` naming file, line, field and the expected form.
    """
    text, filename = load(scenario)
    return _core.validate(text, filename)


#: The largest seed a scenario holds (its TOML integer is signed 64-bit).
MAX_SEED = 2**63 - 1


def check_seed(seed: int | None) -> int | None:
    """`seed` if it is None or a whole number from 0 to `MAX_SEED`; ValueError saying so otherwise."""
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED
    ):
        raise ValueError(f"a seed is a whole number from 0 to {MAX_SEED}, not {seed!r}")
    return seed


def memory_limit(value: int | str | None) -> int | None:
    """Bytes of a memory limit given as a number of bytes or a size such as ``"8GB"`` or
    ``"512MiB"``; None stays None (the memory available when the run starts). ValueError
    saying what was expected otherwise."""
    if value is None:
        return None
    if isinstance(value, str):
        return _core.parse_memory(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"a memory limit is a number of bytes (at least 1) or a size such as '8GB', not {value!r}"
        )
    return value


def run(
    scenario: ScenarioLike,
    output_dir: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    progress: bool | ProgressCallback = False,
    force: bool = False,
    max_memory: int | str | None = None,
    cache: bool | RunCache = True,
) -> RunResult:
    """Runs a scenario (path, TOML text or dict) and returns its results.

    `output_dir`: where the tables are written (it appears only once the run succeeded); when
    None nothing is written: the result's tables come from memory (``output_dir`` is None). It
    is checked before the run (`fairstream.output.prepare`, a ValueError): it may be absent,
    empty or an earlier run's results (replaced whole); any other non-empty directory is refused
    unless `force`. `seed` overrides the scenario's seed. `progress`: True draws a bar on stderr;
    a callable gets (simulated s, duration s, events) after each chunk. `max_memory` (bytes, or
    a size such as ``"8GB"``): a run whose estimated memory exceeds it, or by default the memory
    available, is refused before it starts (`fairstream.ScenarioError` naming what dominates
    the estimate).

    `cache`: True (the default) looks the run up in the run cache first (`fairstream.cache`: the
    same resolved scenario, seed and build) and stores it there after; False neither; a
    `fairstream.cache.RunCache` uses that one (``RunCache(refresh=True)`` computes again and
    stores). A run served from the cache has the summary, tables and wall time of the run that
    computed it.

    Ctrl-C (KeyboardInterrupt) stops the run within milliseconds and raises
    `fairstream.Interrupted`, after writing the results so far into `output_dir`, marked
    incomplete; without `output_dir` they are dropped.
    """
    text, filename = load(scenario)
    limit = memory_limit(max_memory)
    store = _run_cache(cache)
    target = (  # before the run
        None if output_dir is None else output.prepare(output_dir, "run", force, cache=_root(store))
    )
    with captures_in(_capture_dir(output_dir)) as capture:
        sim = _core.Simulation(text, filename, check_seed(seed), limit, capture)
        name = getattr(sim, "name", None) or Path(filename).stem
        key = None
        if store is not None:
            from .cache import run_key

            key = run_key(sim.resolved_toml())
            entry = store.get(key, pin=output_dir is None)  # a result read later reads what was checked
            if entry is not None:
                if progress is True:
                    SimulationProgress(name, sim.duration_s).bar.finish(
                        f"{name}: from the run cache ({entry.path})"
                    )
                if output_dir is None:
                    return RunResult._of(entry)
                entry.materialize(output_dir, force=force, target=target)
                return RunResult(output_dir)
        bar = SimulationProgress(name, sim.duration_s) if progress is True else None
        try:
            advance(sim, bar or (progress if callable(progress) else None))
        except KeyboardInterrupt:
            if bar is not None:
                bar.finish(sim.now_s, sim.events)
            raise keep_partial(sim, output_dir, force=force, target=target) from None
        finally:
            if bar is not None:
                bar.close()  # on an error or Ctrl-C too: the terminal gets its cursor back
        if bar is not None:
            bar.finish(sim.now_s, sim.events)
        if output_dir is None:
            result = RunResult._in_memory(sim)  # tables handed over as Arrow data: nothing written
            _store(store, key, sim, seed, None)
            return result
        result = RunResult(write_results(sim, output_dir, force=force, target=target))
        _store(store, key, sim, seed, Path(output_dir))
        return result


def _run_cache(cache: bool | RunCache) -> RunCache | None:
    if cache is False or cache is None:
        return None
    if cache is True:
        from .cache import RunCache

        return RunCache()
    return cache


def _root(store: RunCache | None) -> Path | None:
    """Where `store` keeps its entries (None without a cache): what an output directory may not
    be or hold (`fairstream.output.prepare`)."""
    return None if store is None else store.root


def _store(store: RunCache | None, key: str | None, sim: Any, seed: int | None, run_dir: Path | None) -> None:
    """Stores a finished run in the cache: from the run directory `run_dir` just written (its files
    as they are), or from memory. A run without a directory that captured links to pcap files is
    not stored (the captures are not at hand): an entry is always a whole run. A cache that cannot
    be written costs a warning, not the run."""
    if store is None or key is None:
        return
    from .cache import RunRecord
    from .campaign import records_pcap

    if run_dir is None and records_pcap(sim.resolved_toml()):
        return
    record = RunRecord.of(sim) if run_dir is None else RunRecord.of_dir(sim, run_dir)
    store.put_or_warn(key, record, {"seed": seed})


def keep_partial(
    sim: Any, output_dir: str | os.PathLike[str] | None, *, force: bool = False, target: Path | None = None
) -> Interrupted:
    """Ends an interrupted run where it got to and writes its results so far into `output_dir`
    (marked incomplete); returns the `Interrupted` to raise, which says where they went."""
    sim.stop()
    where = f"at {sim.now_s:g} s of {sim.duration_s:g} s simulated"
    if sim.complete:  # the signal came as the run ended: its results are whole
        where = f"as the run ended ({sim.duration_s:g} s simulated, complete)"
    if output_dir is None:
        return Interrupted(f"interrupted {where}; no output directory, nothing written")
    try:
        out = write_results(sim, output_dir, force=force, target=target)
    except OSError as err:
        return Interrupted(f"interrupted {where}; the results so far could not be written: {err}")
    return Interrupted(
        f"interrupted {where}; the results so far are in {out}, marked incomplete ({out / 'INCOMPLETE'})",
        str(out),
    )


def _capture_dir(output_dir: str | os.PathLike[str] | None) -> str | None:
    """Where a run writes its pcap captures as it goes: a directory of this process beside
    `output_dir` when that directory's parent exists (``.NAME.capture-PID@HOST``: the results
    then take them by a link, not a copy), else the temporary directory (None). The run makes
    it when it captures a link; `captures_in` removes it after the run, and if the process is
    killed, the next command writing beside it does (`fairstream.output.remove_stale_siblings`)."""
    if output_dir is None:
        return None
    path = Path(output_dir).resolve()
    return str(path.parent / output.sibling_name(path.name, "capture")) if path.parent.is_dir() else None


@contextlib.contextmanager
def captures_in(capture_dir: str | None) -> Iterator[str | None]:
    """`capture_dir`, for a run's pcap captures, removed with what is left in it once the block
    ends however it ends (the results written hold links of their own to the captures)."""
    try:
        yield capture_dir
    finally:
        if capture_dir is not None and os.path.isdir(capture_dir):
            output._rmtree(Path(capture_dir))


def advance(sim: Any, callback: ProgressCallback | None = None, steps: int = STEPS) -> None:
    """Advances `sim` to the end of its run in `steps` chunks, calling `callback` after each.

    Ctrl-C raises KeyboardInterrupt within milliseconds (the core checks for signals as it runs),
    also when the signal's own exception was dropped by a finalizer that ran between two chunks
    (`fairstream.interrupt.catching`): the run is then stopped at the next chunk or at its end.
    """
    duration = sim.duration_s
    with catching():
        for k in range(1, steps + 1):
            raise_if_signalled()
            done = sim.advance(duration if k == steps else duration * k / steps)
            if callback is not None:
                callback(sim.now_s, duration, sim.events)
            if done:
                break
        raise_if_signalled()


def write_results(
    sim: Any, output_dir: str | os.PathLike[str], *, force: bool = False, target: Path | None = None
) -> Path:
    """Writes a run's results into `output_dir`; returns the path given.

    The files are staged beside the directory and renamed into place complete, with the marker
    that lets a later run replace them (`fairstream.output.staged`), which says whether the run
    was (an interrupted one's says ``"complete": false``). `target`: what `output.prepare`
    returned before the run.
    """
    with output.staged(output_dir, "run", force, target=target, complete=bool(sim.complete)) as tmp:
        sim.write_results(str(tmp))
    return Path(output_dir)
