"""The progress bar (rich): silent off a terminal until one closing line; redraws on a terminal,
is cleared at the end, and gives the cursor back when the work fails."""

from __future__ import annotations

import io
import time

import pytest
from fairstream.campaign import RunSpec, run_specs
from fairstream.progress import ProgressBar, SimulationProgress, TaskProgress, format_rate

HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_not_a_terminal_prints_only_a_summary() -> None:
    stream = io.StringIO()
    progress = SimulationProgress("run", 10.0, stream=stream)
    progress(5.0, 10.0, 1000)
    assert stream.getvalue() == ""
    assert progress.bar._rich is None  # nothing drawn, rich not even started
    progress.finish(10.0, 2000)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("run: 10.0 s simulated, 2,000 events")
    assert "\x1b" not in stream.getvalue()  # no escape sequences in a log


def test_quiet_prints_nothing() -> None:
    stream = Terminal()
    bar = ProgressBar(10, "x", quiet=True, stream=stream)
    bar.update(5, force=True)
    bar.finish("done")
    assert stream.getvalue() == ""


def test_terminal_redraws_in_place_then_leaves_the_summary() -> None:
    stream = Terminal()
    tasks = TaskProgress("sweep", 4, stream=stream)
    tasks.advance("a")
    time.sleep(0.11)  # a batch's bar redraws at most ten times a second
    tasks.advance("b")
    tasks.finish()
    out = stream.getvalue()
    assert out.startswith(HIDE_CURSOR)
    assert "2/4 runs  b" in out and " 50%" in out and "━" in out  # the bar, as rich draws it
    assert "\r\x1b[2K" in out  # each redraw erases the line it drew before
    drawn, summary = out.rsplit(SHOW_CURSOR, 1)
    assert "\x1b[2K" in summary  # the bar is cleared ...
    assert summary.endswith("sweep: 2/4 runs in " + summary.rsplit("runs in ", 1)[1])  # ... for one line
    assert summary.count("\n") == 1


def test_close_clears_the_bar_without_a_summary() -> None:
    stream = Terminal()
    bar = ProgressBar(10, "x", stream=stream)
    bar.update(5, "half", force=True)
    bar.close()
    bar.close()  # twice is harmless
    out = stream.getvalue()
    assert SHOW_CURSOR in out and "half" in out
    assert "x:" not in out.rsplit(SHOW_CURSOR, 1)[1]


def test_a_failing_batch_gives_the_terminal_back() -> None:
    stream = Terminal()
    progress = TaskProgress("sweep", 1, stream=stream)
    bad = RunSpec('name = "x"\nduration = "1 s s"\n', "bad.toml")
    with pytest.raises(Exception, match="bad.toml"):
        run_specs([bad], None, jobs=1, progress=progress)
    assert progress.bar._rich is None
    out = stream.getvalue()
    assert HIDE_CURSOR in out and SHOW_CURSOR in out.rsplit(HIDE_CURSOR, 1)[1]  # the cursor is back
    assert "runs in" not in out  # and no summary claims the batch ran


def test_format_rate() -> None:
    assert format_rate(1_234_567) == "1.23 M"
    assert format_rate(999) == "999"
    assert format_rate(2.5e9) == "2.50 G"
