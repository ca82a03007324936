"""Ctrl-C: how fairstream stops within a fraction of a second and keeps what ran.

A simulation notices Ctrl-C by itself: `fairstream._core.Simulation.advance` runs Python's signal
handlers every few milliseconds of wall time, so KeyboardInterrupt reaches the driver promptly
however long the run. The driver then ends the run where it got to and writes its results so far,
marked incomplete (``"complete": false`` and ``stopped_at_s`` in summary.json, and a file named
`MARKER` beside it), and raises `Interrupted`, a KeyboardInterrupt saying where they are. The CLI
exits with `EXIT_CODE`.

In the worker processes of a parallel batch (`fairstream.parallel`), which start with SIGINT held
(`sigint_held`), `init_worker` installs a SIGINT handler that interrupts a simulation in
progress, and only that: a worker between runs
(waiting for work, or writing a finished run) just remembers the signal and starts no further
run, so no worker prints a traceback and no finished run is lost. The parent forwards its own
SIGINT to the workers, so the batch stops whether the signal came from a terminal (which signals
every process of the group) or only to the parent.

A Ctrl-C is never lost. Python runs a signal's handler at the next bytecode it executes in the
main thread, whatever that is; when it is a finalizer (a ``__del__`` or ``weakref`` callback that
the garbage collector runs between two chunks of a run), the KeyboardInterrupt raised there is
printed as "Exception ignored" and dropped, and the run would go on to its end as if nothing had
happened. So while a simulation runs (`catching`, in the main thread of any process, and
`init_worker`'s handler in a worker) the signal is also recorded, and the driver checks that
record between chunks and once the run is done (`raise_if_signalled`): a signal whose exception
was dropped still stops the run.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

#: The exit code of an interrupted command (128 + SIGINT, as shells report it).
EXIT_CODE = 130

#: The file that marks a result directory (a run, a sweep, a reproduction or one experiment of
#: it) whose work was interrupted; its text says what the directory holds.
MARKER = "INCOMPLETE"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the work. `partial`: the directory holding the results so far, marked
    incomplete, or None when nothing was written."""

    def __init__(self, message: str = "interrupted", partial: str | None = None):
        super().__init__(message, partial)
        self.message = message
        self.partial = partial

    def __str__(self) -> str:
        return self.message

    def relocate(self, old: os.PathLike[str] | str, new: os.PathLike[str] | str) -> None:
        """The results so far moved from `old` to `new` (a staging directory put in place): the
        message and `partial` name where they are now."""
        self.message = self.message.replace(str(old), str(new))
        if self.partial is not None:
            self.partial = self.partial.replace(str(old), str(new))


class BatchInterrupted(Interrupted):
    """Ctrl-C stopped a batch of calls (`fairstream.parallel.Batch`).

    `finished`: the results of the calls that went to their end, by tag; `stopped`: the tags of
    the calls stopped part-way, whose results so far were kept; `done_in`: by tag, what a call
    that runs several points (a chunk) had finished before it was stopped; `lost`: calls in
    progress that did not answer. Every other call did not start.
    """

    def __init__(
        self,
        total: int,
        finished: dict[Any, Any],
        stopped: Sequence[Any],
        lost: int = 0,
        done_in: dict[Any, Any] | None = None,
    ):
        super().__init__(
            f"interrupted: {len(finished)} of {total} runs finished, {len(stopped)} stopped part-way"
        )
        self.total = total
        self.finished = finished
        self.stopped = list(stopped)
        self.lost = lost
        self.done_in = done_in or {}


class ChunkInterrupted(Interrupted):
    """Ctrl-C stopped a call that runs several points: `done` holds what it finished before, and
    `ran` says whether a run was under way (stopped part-way) rather than not yet started."""

    def __init__(
        self, message: str, partial: str | None = None, done: list[Any] | None = None, ran: bool = False
    ):
        super().__init__(message, partial)
        self.done = done or []
        self.ran = ran
        self.args = (message, partial, self.done, ran)  # so that it crosses processes whole


def write_marker(directory: str | os.PathLike[str], text: str) -> Path:
    """Writes `MARKER` into `directory` (which must exist) with `text`; returns its path."""
    path = Path(directory) / MARKER
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path


def clear_marker(directory: str | os.PathLike[str]) -> None:
    """Removes `MARKER` from `directory` if there: its work has now been done whole."""
    (Path(directory) / MARKER).unlink(missing_ok=True)


def read_marker(directory: str | os.PathLike[str]) -> str | None:
    """The text of `directory`'s `MARKER`, or None when the directory is not marked incomplete."""
    try:
        return (Path(directory) / MARKER).read_text(encoding="utf-8", errors="replace").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


# --------------------------------------------------------------------------- worker processes

_worker = False
_simulating = False
_signalled = False
#: A SIGINT arrived in this process's main thread while `catching` watched (see the module's doc).
_caught = False


def init_worker() -> None:
    """The initializer of a batch's worker process: SIGINT interrupts only a simulation. The
    worker started with SIGINT held (`sigint_held`); one that came meanwhile is handled now."""
    global _worker
    _worker = True
    signal.signal(signal.SIGINT, _on_sigint)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def sigint_held() -> Iterator[None]:
    """Holds SIGINT back from this thread (where the platform can) while worker processes and
    threads are started, then lets a held one through.

    What starts meanwhile inherits the mask: a worker process starts with SIGINT held until
    `init_worker` has installed its handler (a Ctrl-C at start-up would otherwise end it with a
    traceback), and the pool's helper threads keep it held for good, so that the signal always
    reaches the main thread, which handles it.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _on_sigint(signum: int, frame: object) -> None:
    global _signalled
    first = not _signalled
    _signalled = True
    if first and _simulating:
        raise KeyboardInterrupt


def check_worker() -> None:
    """In a worker that has been signalled: raises `Interrupted` (no run is started after Ctrl-C)."""
    if _worker and _signalled:
        raise Interrupted("interrupted before the run started")


@contextmanager
def simulating() -> Iterator[None]:
    """Marks a simulation in progress: in a worker, the span in which SIGINT interrupts. (In any
    other process Python's own handler raises KeyboardInterrupt anywhere, as usual.)"""
    global _simulating
    check_worker()
    _simulating = True
    try:
        yield
    finally:
        _simulating = False


def _record_sigint(signum: int, frame: object) -> None:
    """SIGINT while a simulation runs in the main thread: recorded, then raised as usual."""
    global _caught
    _caught = True
    raise KeyboardInterrupt


@contextmanager
def catching() -> Iterator[None]:
    """Around a simulation driven from this process's main thread: every SIGINT is recorded as
    well as raised (`raise_if_signalled` finds one whose KeyboardInterrupt was dropped). Only
    Python's default handler is replaced, and only for the span: an ignored SIGINT stays ignored,
    a handler of the application's or of a worker (`init_worker`) stays in place, and so does
    everything in a thread other than the main one."""
    global _caught
    import threading

    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    _caught = False
    signal.signal(signal.SIGINT, _record_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def raise_if_signalled() -> None:
    """Raises KeyboardInterrupt when a SIGINT arrived during the span `catching` (or, in a worker,
    during `simulating`) whose exception did not reach the driver: it was raised in a finalizer
    and dropped."""
    global _caught
    if _caught:
        _caught = False
        raise KeyboardInterrupt
    if _worker and _signalled and _simulating:
        raise KeyboardInterrupt


def signal_processes(pids: Sequence[int]) -> None:
    """Sends SIGINT to each of `pids` that still runs."""
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT)
