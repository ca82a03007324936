"""The progress bar: silent off a terminal until one closing line; redraws on a terminal."""

from __future__ import annotations

import io

from fairstream.progress import ProgressBar, SimulationProgress, TaskProgress, format_rate


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_not_a_terminal_prints_only_a_summary() -> None:
    stream = io.StringIO()
    progress = SimulationProgress("run", 10.0, stream=stream)
    progress(5.0, 10.0, 1000)
    assert stream.getvalue() == ""
    progress.finish(10.0, 2000)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("run: 10.0 s simulated, 2,000 events")


def test_quiet_prints_nothing() -> None:
    stream = Terminal()
    bar = ProgressBar(10, "x", quiet=True, stream=stream)
    bar.update(5, force=True)
    bar.finish("done")
    assert stream.getvalue() == ""


def test_terminal_redraws_in_place() -> None:
    stream = Terminal()
    tasks = TaskProgress("sweep", 4, stream=stream)
    tasks.advance("a")
    tasks.advance("b")
    tasks.finish()
    out = stream.getvalue()
    assert "\r" in out and "2/4 runs" in out and " 50.0%" in out
    assert out.endswith("sweep: 2/4 runs in " + out.rsplit("runs in ", 1)[1])


def test_format_rate() -> None:
    assert format_rate(1_234_567) == "1.23 M"
    assert format_rate(999) == "999"
    assert format_rate(2.5e9) == "2.50 G"
