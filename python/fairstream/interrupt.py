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
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

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
    """Ctrl-C stopped a batch of runs (`fairstream.parallel.run_tasks`).

    `finished`: the summaries of the runs that went to their end, by task index; `stopped`: the
    indices of the runs stopped part-way, whose results so far were written and marked
    incomplete. Every other run did not start (or was lost, see `lost`).
    """

    def __init__(self, total: int, finished: dict[int, dict], stopped: Sequence[int], lost: int = 0):
        super().__init__(
            f"interrupted: {len(finished)} of {total} runs finished, {len(stopped)} stopped part-way"
        )
        self.total = total
        self.finished = finished
        self.stopped = sorted(stopped)
        self.lost = lost


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


def signal_processes(pids: Sequence[int]) -> None:
    """Sends SIGINT to each of `pids` that still runs."""
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGINT)
