"""Independent runs in parallel: on all local cores through a process pool, or on a Dask cluster.

Sweeps and reproductions hand over a list of `Task`s (scenario text plus output directory); each
task runs in a worker and writes its own output directory; the summaries come back in order.

Ctrl-C stops a local batch within a fraction of a second (see `fairstream.interrupt`): no further
run starts, each run in progress ends where it got to and writes its results so far (marked
incomplete), and `BatchInterrupted` says which runs finished and which were stopped part-way. On
a Dask cluster the runs not yet started are cancelled; those in progress there cannot be reached.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .interrupt import BatchInterrupted, Interrupted, init_worker, sigint_held, signal_processes

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
    #: Run through the emulator (`fairstream.emulate`), in real time, rather than simulate.
    emulate: bool = False


def execute(task: Task) -> dict[str, Any]:
    """Runs one task (in whichever process calls it); returns the run's summary. Ctrl-C raises
    `Interrupted` (with `partial` set when the run's results so far were written)."""
    if task.emulate:
        from .emulation import emulate_to_directory

        return emulate_to_directory(task.text, task.filename, task.output_dir, task.seed)
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
    and is raised; Ctrl-C raises `BatchInterrupted`.
    """
    jobs = jobs or default_jobs()
    try:
        if scheduler is not None:
            client = _dask_client(scheduler)
            try:
                summaries = _run_on(client.get_executor(), tasks, progress)
            finally:
                client.close()
        elif jobs <= 1 or len(tasks) <= 1:
            summaries = _run_here(tasks, progress)
        else:
            summaries = _run_in_pool(tasks, min(jobs, len(tasks)), progress)
    except BaseException:
        if progress is not None:
            progress.close()  # a failed or interrupted batch: clear the bar, give the cursor back
        raise
    if progress is not None:
        progress.finish()
    return summaries


def _run_here(tasks: Sequence[Task], progress: TaskProgress | None) -> list[dict[str, Any]]:
    """The tasks one after the other in this process."""
    finished: dict[int, dict[str, Any]] = {}
    for i, task in enumerate(tasks):
        try:
            finished[i] = _tick(progress, task, execute(task))
        except Interrupted as err:
            raise BatchInterrupted(len(tasks), finished, [i] if err.partial else []) from None
        except KeyboardInterrupt:
            raise BatchInterrupted(len(tasks), finished, []) from None
    return [finished[i] for i in range(len(tasks))]


def memory_per_run(limit: int | None, jobs: int | None, tasks: int, scheduler: str | None) -> int | None:
    """Bytes each of `tasks` runs may use: `limit` when given; else, on this machine, the memory
    available now; None on a Dask cluster, whose workers check their own.

    Not shared out among the runs going on at once: the estimate is an upper bound that can be
    far above what a run uses (an adaptive flow is counted at twice its bottleneck's rate, so a
    loss-limited TCP with a packet trace is estimated at gigabytes and uses tens of megabytes:
    `tcp-pftk-grid`), and dividing it by the workers refused runs that fit many times over.
    `jobs` and `tasks` are kept for callers that share a given limit themselves."""
    del jobs, tasks
    if limit is not None or scheduler is not None:
        return limit
    from . import _core

    return max(1, _core.available_memory()[0])


#: The longest this process waits for its workers without waking. A signal sent to the process
#: may reach one of the pool's helper threads rather than the main thread, and then only marks
#: itself pending: the main thread handles it (raises KeyboardInterrupt) when it next wakes.
WAKE_S = 0.02

#: After Ctrl-C, how long the runs in progress get to write their results so far before their
#: workers are killed (a run notices the signal within milliseconds; writing takes what it takes).
STOP_GRACE_S = 10.0


def _run_in_pool(tasks: Sequence[Task], workers: int, progress: TaskProgress | None) -> list[dict[str, Any]]:
    """The tasks on a pool of `workers` fresh processes; on any failure no worker is left running."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=init_worker)
    try:
        return _run_on(pool, tasks, progress)
    except KeyboardInterrupt:
        # The runs in progress have written what they had (see `_stop`), or overran its grace
        # period, or this is a second Ctrl-C: no worker is waited for any longer.
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            if process.is_alive():
                process.kill()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run_on(executor: Executor, tasks: Sequence[Task], progress: TaskProgress | None) -> list[dict[str, Any]]:
    from concurrent.futures import FIRST_COMPLETED, wait

    futures: dict[Future, int] = {}
    finished: dict[int, dict[str, Any]] = {}
    try:
        with sigint_held():  # the workers start in here: see `sigint_held`
            for i, task in enumerate(tasks):
                futures[executor.submit(execute, task)] = i
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=WAKE_S, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=futures.__getitem__):
                i = futures[future]
                finished[i] = _tick(progress, tasks[i], future.result())
    except KeyboardInterrupt:  # Ctrl-C here, or a run in a worker that the terminal signalled
        stopped, lost = _stop(executor, futures, finished)
        raise BatchInterrupted(len(tasks), finished, stopped, lost) from None
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    return [finished[i] for i in range(len(tasks))]


def _stop(
    executor: Executor, futures: dict[Future, int], finished: dict[int, dict[str, Any]]
) -> tuple[list[int], int]:
    """After Ctrl-C: cancels the runs not started, signals the local workers so their runs in
    progress stop and write what they have, and waits (up to `STOP_GRACE_S`) for those; returns
    the indices of the runs stopped part-way and how many runs in progress did not answer."""
    for future in futures:
        future.cancel()
    processes = getattr(executor, "_processes", None)
    if processes is None:  # a Dask cluster: its runs in progress cannot be reached
        return [], sum(f.running() for f in futures)
    signal_processes([p.pid for p in list(processes.values()) if p.pid is not None])
    deadline = time.monotonic() + STOP_GRACE_S
    stopped: list[int] = []
    lost = 0
    for future, i in futures.items():
        if future.cancelled() or i in finished:
            continue
        try:
            finished[i] = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except Interrupted as err:
            if err.partial:
                stopped.append(i)
        except Exception:
            lost += 1
    return stopped, lost


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
