"""Progress on stderr, drawn by rich, and the two bars fairstream shows with it.

On a terminal a rich progress bar redraws in place (at most ten times a second) and is cleared
when the work ends, leaving one summary line. When the stream is not a terminal (a pipe, a file,
CI's log) nothing is drawn while work goes on, rich is not even imported, and `finish` prints
the same summary line. With ``quiet`` nothing is printed at all. A bar that is not finished
(an exception, Ctrl-C) must be `close`d, which gives the terminal its cursor back.
"""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any, TextIO

_REDRAW_S = 0.1


class ProgressBar:
    """A bar for `total` units of work; `update(done, info)` redraws, `finish(line)` ends it."""

    def __init__(self, total: float, label: str = "", *, quiet: bool = False, stream: TextIO | None = None):
        self.total = float(total)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.live = not quiet and _isatty(self.stream)
        self.started = time.perf_counter()
        self._last_draw = 0.0
        self._rich: Any = None  # the rich Progress while the bar is on screen
        self._task: Any = None

    @property
    def elapsed(self) -> float:
        """Wall seconds since the bar was made."""
        return time.perf_counter() - self.started

    def update(self, done: float, info: str = "", *, force: bool = False) -> None:
        """Shows `done` of `total`, with `info` after the percentage."""
        if not self.live:
            return
        now = time.perf_counter()
        if not force and now - self._last_draw < _REDRAW_S:
            return
        self._last_draw = now
        if self._rich is None:
            self._start()
        self._rich.update(self._task, completed=min(max(done, 0.0), self.total), info=info)
        self._rich.refresh()

    def finish(self, summary: str) -> None:
        """Ends the bar: it is cleared from the terminal and `summary` is printed as one line."""
        self.close()
        if self.quiet:
            return
        self.stream.write(summary + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Clears the bar from the terminal, if it is there; prints nothing. Safe to call twice."""
        if self._rich is not None:
            rich, self._rich = self._rich, None
            rich.stop()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        # `live` already established that the stream is a terminal (rich would also believe
        # FORCE_COLOR, and make a CI log a terminal).
        console = Console(file=self.stream, force_terminal=True)
        self._rich = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=28),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            console=console,
            transient=True,  # the summary line replaces the bar
            auto_refresh=False,  # no drawing thread: `update` redraws
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task = self._rich.add_task(self.label, total=self.total, info="")
        self._rich.start()


class SimulationProgress:
    """Progress of one simulation run: simulated time / duration, percent, events per second."""

    def __init__(self, name: str, duration_s: float, *, quiet: bool = False, stream: TextIO | None = None):
        self.name = name
        self.bar = ProgressBar(duration_s, name, quiet=quiet, stream=stream)

    def __call__(self, now_s: float, duration_s: float, events: int) -> None:
        rate = events / self.bar.elapsed if self.bar.elapsed > 0 else 0.0
        self.bar.update(now_s, f"{now_s:.1f}/{duration_s:.1f} s  {format_rate(rate)} events/s")

    def finish(self, now_s: float, events: int) -> None:
        wall = self.bar.elapsed
        rate = events / wall if wall > 0 else 0.0
        self.bar.finish(
            f"{self.name}: {now_s:.1f} s simulated, {events:,} events in {wall:.2f} s "
            f"({format_rate(rate)} events/s)"
        )

    def close(self) -> None:
        """Clears the bar without a summary (the run did not finish)."""
        self.bar.close()


class TaskProgress:
    """Progress of a batch of independent runs: completed / total."""

    def __init__(self, label: str, total: int, *, quiet: bool = False, stream: TextIO | None = None):
        self.label = label
        self.total = total
        self.done = 0
        self.cached = 0
        self.bar = ProgressBar(total, label, quiet=quiet, stream=stream)
        self.bar.update(0, f"0/{total} runs", force=True)

    def advance(self, what: str = "", *, cached: bool = False, runs: int = 1) -> None:
        """`runs` more runs done (several points answered by one run count each), `cached` when
        they came from the run cache."""
        self.done += runs
        self.cached += runs if cached else 0
        self.bar.update(self.done, f"{self.done}/{self.total} runs  {what}")

    def finish(self) -> None:
        cached = f" ({self.cached} from the cache)" if self.cached else ""
        self.bar.finish(f"{self.label}: {self.done}/{self.total} runs{cached} in {self.bar.elapsed:.1f} s")

    def close(self) -> None:
        """Clears the bar without a summary (the batch did not finish)."""
        self.bar.close()


def format_rate(per_s: float) -> str:
    """1234567 -> '1.23 M'; small values stay plain."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if per_s >= factor:
            return f"{per_s / factor:.2f} {suffix}"
    return f"{per_s:.0f}"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
