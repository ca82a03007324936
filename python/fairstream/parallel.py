"""Independent calls in parallel: on worker processes that stay up for the whole batch (one per
core by default), on a Dask cluster, or one after the other in this process.

A `Batch` takes calls (a top-level function and its argument, with a tag) and yields their
results as they complete. Calls are handed to the workers a few at a time (`Batch.window` in
flight), so a call submitted later, such as the evaluation of an experiment whose runs are all
done, starts as soon as a worker is free rather than after every run already queued
(`Batch.submit(..., first=True)`). Campaigns (`fairstream.campaign`) send runs to the workers in
chunks of several points per call, so a worker runs many points without a start-up or a round trip
each.

Ctrl-C stops a local batch within a fraction of a second (see `fairstream.interrupt`): no further
call starts, each run in progress ends where it got to, and `BatchInterrupted` says which calls
finished and which were stopped part-way. On a Dask cluster the calls not yet started are
cancelled; those in progress there cannot be reached.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .interrupt import (
    BatchInterrupted,
    Interrupted,
    catching,
    init_worker,
    raise_if_signalled,
    sigint_held,
    signal_processes,
)

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future


def _init_worker(parent: int) -> None:
    """The initializer of a batch's worker process: SIGINT as `init_worker` sets it, polars on
    one thread unless `POLARS_MAX_THREADS` says otherwise (set before the worker imports polars),
    fairstream's own warnings one line each (`fairstream.plainwarnings`), an end of its own
    once `parent` (the process that started it) is gone, the garbage
    collector's `WORKER_GC_THRESHOLDS`, and an exit without the interpreter's teardown
    (`_exit_without_teardown`).

    The workers are already one per core, and their queries are small ones (an experiment's
    evaluation makes thousands, of under a millisecond each): polars' pool of a thread per core
    only adds wake-ups and contention between the workers. Evaluating the 38 simulated
    experiments from their cached runs took 6–9 % less CPU on one thread (docs/PERFORMANCE.md).
    """
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    init_worker()
    from .plainwarnings import fairstreams, show_plainly

    show_plainly(fairstreams())
    import atexit
    import gc
    import threading

    gc.set_threshold(*WORKER_GC_THRESHOLDS)

    threading.Thread(target=_exit_with_parent, args=(parent,), name="parent-watch", daemon=True).start()
    atexit.register(_exit_without_teardown)


def _exit_without_teardown() -> None:
    """A worker's exit handler, registered by the pool's initializer: ends the process once its
    output is flushed, without the interpreter's teardown of modules. Every handler registered
    after it (what the calls' imports and the calls register) runs before it. The two registered
    before it at the worker's start are skipped: multiprocessing's `_exit_function`, which the
    process's bootstrap has already run when the pool's loop ends, and logging's `shutdown`,
    which flushes logging handlers, none of which a worker configures.
    With polars and matplotlib loaded (a reproduction's evaluations) that teardown took about
    0.25 s, which `Batch.close` waited for with every core idle, at the end of every
    reproduction; a sweep's workers, which import neither, took 30–65 ms, now 5–10 ms. The
    calls' results are in the parent by then. The status is 0: the pool reads none (a worker
    that dies while working breaks the pool by its ending, whatever its status)."""
    import contextlib
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(0)


#: A worker's cyclic garbage collector: a young collection every 50 000 net allocations (Python's
#: default is 700), and one of each older generation every 20 of the younger's. An evaluation
#: makes millions of short-lived objects (polars results, matplotlib's artists) beside the
#: hundreds of thousands that its imports keep alive, and each older collection walked all of
#: them: evaluating the 38 simulated experiments in one process spent 1.8–2.0 s of its 24–28 s
#: in the collector with the defaults, 0.5–0.6 s with these, its peak memory 3 % higher
#: (docs/PERFORMANCE.md). Cycles are still collected, later; reference counting frees everything
#: else at once, as before.
WORKER_GC_THRESHOLDS = (50_000, 20, 20)

#: How often a worker checks that the process that started it is still there.
PARENT_CHECK_S = 0.5


def _exit_with_parent(parent: int) -> None:
    """Ends this worker once its parent is gone (killed with SIGKILL, which no handler sees, the
    worker would be left waiting for calls that never come): it is then another process's
    child (init's, or a subreaper's). `parent` is the pid the parent gave, not the worker's
    parent when it starts: a parent killed while the worker was starting is gone already."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)


def default_jobs() -> int:
    """All cores."""
    return os.cpu_count() or 1


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

#: Calls in flight per worker: enough that a worker never waits for the next, few enough that a
#: call submitted with ``first=True`` starts soon.
IN_FLIGHT_PER_WORKER = 2


class Batch:
    """Calls run by `workers` processes (or, with `scheduler`, a Dask cluster; with one worker,
    in this process). Use as a context manager: leaving it shuts the workers down (killing any
    still busy after an interruption)."""

    def __init__(self, jobs: int | None = None, scheduler: str | None = None, calls_hint: int | None = None):
        self.jobs = jobs or default_jobs()
        self.scheduler = scheduler
        self.local = scheduler is None and (self.jobs <= 1 or (calls_hint is not None and calls_hint <= 1))
        self.workers = 1 if self.local else self.jobs
        self.window = max(2, self.workers * IN_FLIGHT_PER_WORKER)
        self._queue: deque[tuple[Hashable, Callable[[Any], Any], Any]] = deque()
        self._executor: Executor | None = None
        self._client: Any = None
        self._futures: dict[Future, Hashable] = {}
        self._done: Any = None  # the queue of completed futures
        self.finished: dict[Hashable, Any] = {}
        #: Called whenever the batch could take more calls (a caller that submits lazily).
        self.feeder: Callable[[], None] | None = None
        self._warming: set[Hashable] = set()  # `warm_up`'s calls, not the caller's

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(killed=exc[0] is not None and issubclass(exc[0], KeyboardInterrupt))

    def submit(self, tag: Hashable, fn: Callable[[Any], Any], arg: Any, *, first: bool = False) -> None:
        """Queues `fn(arg)`; its result is yielded by `results` with `tag`. `first`: ahead of
        every call not yet started."""
        if first:
            self._queue.appendleft((tag, fn, arg))
        else:
            self._queue.append((tag, fn, arg))

    def warm_up(self) -> None:
        """Starts the worker processes now, each importing what a run needs, so that they are ready
        by the time the caller has planned what to run (nothing to do in this process). What these
        calls return is not among `results`."""
        if self.local:
            return
        from .campaign import warm

        for i in range(self.workers):
            self._warming.add(("warm", i))
            self.submit(("warm", i), warm, None)
        if self._executor is None:
            self._start()
        self._fill()

    def map(self, fn: Callable[[Any], Any], args: Sequence[Any], what: str = "working") -> list[Any]:
        """`fn(arg)` for each of `args`, in parallel, their results in the order of `args`: work
        the caller needs whole before it goes on (planning a campaign while its workers start),
        submitted when no other call is pending. The calls are left out of `finished` (what an
        interruption of later calls reports). A call that raises cancels the rest and its
        exception is raised; Ctrl-C raises `Interrupted` ("interrupted while `what`; nothing
        ran")."""
        tags = [("map", n) for n in range(len(args))]
        for tag, arg in zip(tags, args, strict=True):
            self.submit(tag, fn, arg)
        try:
            found = dict(self.results())
        except BatchInterrupted:
            raise Interrupted(f"interrupted while {what}; nothing ran") from None
        finally:
            for tag in tags:
                self.finished.pop(tag, None)
        return [found[tag] for tag in tags]

    @property
    def pending(self) -> int:
        """Calls queued or in flight."""
        return len(self._queue) + len(self._futures)

    def results(self) -> Iterator[tuple[Hashable, Any]]:
        """(tag, result) of each call as it completes, until none is queued or in flight (more may
        be submitted meanwhile). A call that raises cancels the rest and its exception is raised;
        Ctrl-C raises `BatchInterrupted`."""
        try:
            with catching():  # a Ctrl-C whose exception a finalizer dropped still stops the batch
                if self.local:
                    yield from self._run_here()
                else:
                    yield from self._run_on_workers()
        except BatchInterrupted:
            raise
        except KeyboardInterrupt:  # Ctrl-C here, or a run in a worker that the terminal signalled
            stopped, partial, lost = self._stop()
            raise BatchInterrupted(self.pending_total, self.finished, stopped, lost, partial) from None
        except BaseException:
            for future in self._futures:
                future.cancel()
            self._queue.clear()
            raise

    @property
    def pending_total(self) -> int:
        return len(self.finished) + len(self._queue) + len(self._futures)

    def _feed(self) -> None:
        if self.feeder is not None:
            self.feeder()

    def _run_here(self) -> Iterator[tuple[Hashable, Any]]:
        self._feed()
        while self._queue:
            tag, fn, arg = self._queue.popleft()
            try:
                value = fn(arg)
            except Interrupted as err:
                self._queue.appendleft((tag, fn, arg))
                stopped = [tag] if err.partial or getattr(err, "ran", False) else []
                partial = {tag: err.done} if getattr(err, "done", None) else {}
                raise BatchInterrupted(self.pending_total, self.finished, stopped, 0, partial) from None
            self.finished[tag] = value
            yield tag, value
            self._feed()

    def _start(self) -> None:
        import queue

        self._done = queue.SimpleQueue()
        if self.scheduler is not None:
            self._client = _dask_client(self.scheduler)
            self._executor = self._client.get_executor()
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")
        self._executor = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),)
        )

    def _fill(self) -> None:
        assert self._executor is not None
        with sigint_held():  # workers start in here: see `sigint_held`
            while self._queue and len(self._futures) < self.window:
                tag, fn, arg = self._queue.popleft()
                future = self._executor.submit(fn, arg)
                self._futures[future] = tag
                future.add_done_callback(self._done.put)

    def _run_on_workers(self) -> Iterator[tuple[Hashable, Any]]:
        import queue

        if self._executor is None:
            self._start()
        self._feed()
        while self._queue or self._futures:
            self._fill()
            try:
                future = self._done.get(timeout=WAKE_S)
            except queue.Empty:
                raise_if_signalled()
                continue
            tag = self._futures.pop(future)
            value = future.result()
            if tag in self._warming:
                continue
            self.finished[tag] = value
            yield tag, value
            self._feed()

    def _stop(self) -> tuple[list[Hashable], dict[Hashable, Any], int]:
        """After Ctrl-C: cancels the calls not started, signals the local workers so their runs in
        progress stop (and write what they have), and waits (up to `STOP_GRACE_S`) for those;
        returns the tags of the calls stopped part-way, what each had finished (a chunk of runs),
        and how many calls in progress did not answer."""
        self._queue.clear()
        for future in self._futures:
            future.cancel()
        processes = getattr(self._executor, "_processes", None)
        if processes is None:  # a Dask cluster (or nothing started): its calls in progress cannot be reached
            return [], {}, sum(f.running() for f in self._futures)
        signal_processes([p.pid for p in list(processes.values()) if p.pid is not None])
        deadline = time.monotonic() + STOP_GRACE_S
        stopped: list[Hashable] = []
        partial: dict[Hashable, Any] = {}
        lost = 0
        for future, tag in list(self._futures.items()):
            if future.cancelled() or tag in self._warming:
                continue
            try:
                self.finished[tag] = future.result(timeout=max(0.0, deadline - time.monotonic()))
            except Interrupted as err:
                if err.partial or getattr(err, "ran", False):
                    stopped.append(tag)
                if getattr(err, "done", None):
                    partial[tag] = err.done
            except Exception:
                lost += 1
        self._futures.clear()
        return stopped, partial, lost

    def close(self, killed: bool = False) -> None:
        """Shuts the workers down; with `killed` (an interruption) any still busy is killed first."""
        executor, self._executor = self._executor, None
        if executor is not None and self._client is None:
            if killed:
                for process in list((getattr(executor, "_processes", None) or {}).values()):
                    if process.is_alive():
                        process.kill()
            executor.shutdown(wait=True, cancel_futures=True)
        if self._client is not None:
            client, self._client = self._client, None
            client.close()


def _dask_client(address: str) -> Any:
    try:
        from dask.distributed import Client
    except ImportError as err:
        raise RuntimeError(
            "running on a Dask scheduler needs dask.distributed: pip install 'fairstream[dask]'"
        ) from err
    try:
        return Client(address)
    except OSError as err:  # refused, timed out, no such host: before anything ran
        raise ValueError(
            f"cannot reach the Dask scheduler at {address} ({err}); is it running? `dask scheduler` "
            "prints the address to give"
        ) from None
