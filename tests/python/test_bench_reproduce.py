"""`fairstream bench --reproduce`: what a reproduction costs beyond its runs, cold and again
unchanged, and how two outputs are compared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fairstream.bench_reproduce import (
    MEASURED,
    differing_files,
    format_reproduce,
    measure_reproduce,
    simulated_experiments,
    tree_bytes,
)
from fairstream.cli import main

REPORT = (
    "<html>\n<h1>fairstream</h1>\n"
    '<p class="meta">Generated {when} from <code>{where}</code>; fairstream 0.1.0.</p>\n'
    "<p>{body}</p>\n</html>\n"
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_two_outputs_differ_only_where_a_byte_differs_but_for_the_reports_time_and_place(
    tmp_path: Path,
) -> None:
    same = {"a/result.json": "{}\n", "a/figure.png": "png"}
    report = REPORT.format(when="10:00", where="/x", body="b")
    first = _write(tmp_path / "one", {**same, "report.html": report})
    report = REPORT.format(when="11:00", where="/y", body="b")
    second = _write(tmp_path / "two", {**same, "report.html": report})
    assert differing_files(first, second) == []
    (second / "report.html").write_text(REPORT.format(when="11:00", where="/y", body="c"), encoding="utf-8")
    (second / "a/figure.png").write_text("pnG", encoding="utf-8")
    (second / "a/extra.json").write_text("{}", encoding="utf-8")
    (first / "a/result.json").unlink()
    assert differing_files(first, second) == ["a/extra.json", "a/figure.png", "a/result.json", "report.html"]


def test_a_file_with_two_names_is_counted_once(tmp_path: Path) -> None:
    (tmp_path / "bundle").write_bytes(b"x" * 1000)
    os.link(tmp_path / "bundle", tmp_path / "run")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other").write_bytes(b"y" * 10)
    assert tree_bytes(tmp_path) == 1010


def test_the_figures_say_whether_the_output_came_back_the_same() -> None:
    row = {key: 1.0 for key in MEASURED} | {
        "experiments": 2,
        "runs": 1234,
        "cores": 2,
        "quick": False,
        "identical": False,
        "differing": ["x/result.json"],
        "rounds": 1,
        "load_before": {"load": 0.25, "idle": True},
        "load_after": None,
    }
    text = format_reproduce(row)
    assert "2 experiments (1,234 runs) on 2 cores" in text
    assert "NO, 1 files differ: x/result.json" in text and "before 0.25, after unknown (idle)" in text
    assert "byte for byte but for the report's time and directory: yes" in format_reproduce(
        {**row, "identical": True, "differing": []}
    )


def test_a_small_reproduction_is_measured_cold_and_again_unchanged() -> None:
    row = measure_reproduce(["tfrc-equation"], quick=True, repeat=1, idle_wait_s=0.0, quiet=True)
    assert row["experiments"] == 1 and row["rounds"] == 1 and row["runs"] > 0
    assert row["simulation_s"] > 0 and row["output_mb"] > 0 and row["cache_mb"] > 0
    assert row["ratio"] == pytest.approx(row["wall_s"] * row["cores"] / row["simulation_s"])
    assert row["identical"], row["differing"]
    with pytest.raises(ValueError, match="at least 1"):
        measure_reproduce(["tfrc-equation"], repeat=0, idle_wait_s=0.0, quiet=True)


def test_the_default_is_every_experiment_that_only_simulates() -> None:
    from fairstream.reproduce import EXPERIMENTS

    ids = simulated_experiments()
    assert "collapse" in ids and "h2h-share" in ids
    emulated = [e.id for e in EXPERIMENTS.values() if e.emulated]
    assert emulated and not set(emulated) & set(ids)


def test_unknown_experiments_and_other_measures_are_refused() -> None:
    for argv in (
        ["bench", "--reproduce", "no-such-experiment"],
        ["bench", "--reproduce", "--sweep"],
        ["bench", "--reproduce", "--scaling-flows", "8,64"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2


def test_a_command_that_fails_is_named_with_its_errors_and_accepted_codes_pass() -> None:
    import sys

    from fairstream.bench_sweep import timed_command

    fail = [sys.executable, "-c", "import sys; sys.stderr.write('broken'); sys.exit(3)"]
    with pytest.raises(RuntimeError, match=r"the thing failed \(3\): broken"):
        timed_command(fail, dict(os.environ), "the thing")
    timed = timed_command(fail, dict(os.environ), "the thing", ok=(0, 3))
    assert timed["wall_s"] > 0 and timed["cpu_s"] >= 0
