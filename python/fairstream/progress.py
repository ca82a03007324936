"""A dependency-free progress bar on stderr, and the two bars fairstream draws with it.

On a terminal the bar redraws in place (at most ten times a second). When the stream is not a
terminal nothing is drawn while work goes on, and `finish` prints one summary line. With
``quiet`` nothing is printed at all.
"""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import TextIO

_WIDTH = 28
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
        self._drawn = False

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
        frac = min(max(done / self.total, 0.0), 1.0) if self.total > 0 else 1.0
        filled = int(frac * _WIDTH)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        label = f"{self.label} " if self.label else ""
        self.stream.write(f"\r{label}[{bar}] {frac * 100:5.1f}%  {info}\x1b[K")
        self.stream.flush()
        self._drawn = True

    def finish(self, summary: str) -> None:
        """Ends the bar: on a terminal the last state stays and `summary` follows; else one line."""
        if self.quiet:
            return
        if self._drawn:
            self.stream.write("\r\x1b[K")
        self.stream.write(summary + "\n")
        self.stream.flush()


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


class TaskProgress:
    """Progress of a batch of independent runs: completed / total."""

    def __init__(self, label: str, total: int, *, quiet: bool = False, stream: TextIO | None = None):
        self.label = label
        self.total = total
        self.done = 0
        self.bar = ProgressBar(total, label, quiet=quiet, stream=stream)
        self.bar.update(0, f"0/{total} runs", force=True)

    def advance(self, what: str = "") -> None:
        self.done += 1
        self.bar.update(self.done, f"{self.done}/{self.total} runs  {what}", force=True)

    def finish(self) -> None:
        self.bar.finish(f"{self.label}: {self.done}/{self.total} runs in {self.bar.elapsed:.1f} s")


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
