"""Independent runs in parallel: on all local cores through a process pool, or on a Dask cluster.

Sweeps and reproductions hand over a list of `Task`s (scenario text plus output directory); each
task runs in a worker and writes its own output directory; the summaries come back in order.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from .progress import TaskProgress


@dataclass(frozen=True)
class Task:
    """One run: scenario text (with the filename errors should name) into `output_dir`."""

    text: str
    filename: str
    output_dir: str
    seed: int | None = None
    label: str = ""
    #: Bytes the run may use (None: its share of the memory available when the tasks start).
    max_memory: int | None = None


def execute(task: Task) -> dict[str, Any]:
    """Runs one task (in whichever process calls it); returns the run's summary."""
    from .api import run_to_directory

    return run_to_directory(task.text, task.filename, task.output_dir, task.seed, task.max_memory)


def default_jobs() -> int:
    """All cores."""
    return os.cpu_count() or 1


def run_tasks(
    tasks: Sequence[Task],
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: TaskProgress | None = None,
) -> list[dict[str, Any]]:
    """Runs `tasks` (in parallel unless `jobs` is 1) and returns their summaries in task order.

    `scheduler`: a Dask scheduler address; the tasks then run on that cluster (the output
    directories must be on a file system the workers share). The first failure cancels the rest
    and is raised.
    """
    jobs = jobs or default_jobs()
    if scheduler is not None:
        client = _dask_client(scheduler)
        try:
            summaries = _run_on(client.get_executor(), tasks, progress)
        finally:
            client.close()
    elif jobs <= 1 or len(tasks) <= 1:
        summaries = [_tick(progress, t, execute(t)) for t in tasks]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context) as pool:
            summaries = _run_on(pool, tasks, progress)
    if progress is not None:
        progress.finish()
    return summaries


def memory_per_run(limit: int | None, jobs: int | None, tasks: int, scheduler: str | None) -> int | None:
    """Bytes each of `tasks` runs may use: `limit` when given; else, on this machine, an equal
    share of the memory available now among the runs going on at once (so that runs side by side
    cannot together exhaust it); None on a Dask cluster, whose workers check their own."""
    if limit is not None or scheduler is not None:
        return limit
    from . import _core

    workers = max(1, min(jobs or default_jobs(), tasks))
    return max(1, _core.available_memory()[0] // workers)


def _run_on(executor: Executor, tasks: Sequence[Task], progress: TaskProgress | None) -> list[dict[str, Any]]:
    from concurrent.futures import as_completed

    futures: dict[Future, int] = {executor.submit(execute, t): i for i, t in enumerate(tasks)}
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    try:
        for future in as_completed(futures):
            i = futures[future]
            results[i] = _tick(progress, tasks[i], future.result())
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    return [r for r in results if r is not None]


def _tick(progress: TaskProgress | None, task: Task, summary: dict[str, Any]) -> dict[str, Any]:
    if progress is not None:
        progress.advance(task.label)
    return summary


def _dask_client(address: str) -> Any:
    try:
        from dask.distributed import Client
    except ImportError as err:
        raise RuntimeError(
            "running on a Dask scheduler needs dask.distributed: pip install 'fairstream[dask]'"
        ) from err
    return Client(address)
