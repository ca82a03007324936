"""`fairstream bench --quick`: each benchmark runs in a child process and the table is printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fairstream.bench import BENCHMARKS, run_once
from fairstream.cli import main


def test_bench_quick_prints_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--repeat", "1", "--quiet", "--json", str(out)]) == 0
    table = capsys.readouterr().out
    header = table.splitlines()[0]
    for column in ("benchmark", "wall s", "events/s", "peak MB", "ns-3 wall s", "speed-up", "ns-3 MB"):
        assert column in header
    for bench_id in BENCHMARKS:
        assert any(line.startswith(bench_id) for line in table.splitlines())
    rows = json.loads(out.read_text())["benchmarks"]
    assert [r["benchmark"] for r in rows] == list(BENCHMARKS)
    assert all(r["events"] > 0 and r["peak_mb"] > 0 and r["speedup"] is None for r in rows)


def test_child_reports_a_finished_run() -> None:
    report = run_once(BENCHMARKS["B3"], quick=True)
    assert report["finished"] is True
    assert report["sim_duration_s"] == pytest.approx(2.0)
    assert report["packets"] > 0
    assert report["peak_kib"] > 1000


def test_unknown_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "B9", "--quick"])
    assert exit_info.value.code == 2
