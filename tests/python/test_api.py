"""`fairstream.run` and `fairstream.validate` against the compiled core."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import fairstream
import polars as pl
import pytest
from conftest import small_scenario
from fairstream import tomlio

FLOW_SERIES_COLUMNS = {
    "flow_id",
    "flow",
    "t_start",
    "t_end",
    "packets_sent",
    "bytes_sent",
    "packets_delivered",
    "bytes_delivered",
    "goodput_bytes",
    "packets_dropped",
    "throughput_bps",
    "goodput_bps",
    "rtt_mean_s",
}


def test_same_scenario_and_seed_give_identical_tables(scenario: dict[str, Any]) -> None:
    first = fairstream.run(scenario, seed=3)
    second = fairstream.run(scenario, seed=3)
    assert first.flow_series.height > 0
    assert first.flow_series.equals(second.flow_series)
    assert first.link_series.equals(second.link_series)
    assert first.flow_summary.equals(second.flow_summary)


def test_tables_and_summary(scenario: dict[str, Any]) -> None:
    result = fairstream.run(scenario)
    assert set(result.flow_series.columns) >= FLOW_SERIES_COLUMNS
    assert set(result.flow_series["flow"].unique()) == {"tcp", "udp"}
    assert result.summary["name"] == "small"
    assert result.summary["seed"] == 7
    assert [f["name"] for f in result.summary["flows"]] == ["tcp", "udp"]
    assert result.flow_summary.height == 2
    assert "N1->N2" in result.link_summary["name"].to_list()
    assert result.link_series.height > 0
    assert result.metrics.is_empty()
    assert result.metrics.columns == ["t", "flow_id", "flow", "metric", "value"]
    assert tomlio.loads(result.resolved_toml)["name"] == "small"
    assert "small" in repr(result)


def test_flow_rows_are_the_flow_series_rows_of_one_flow(scenario: dict[str, Any]) -> None:
    result = fairstream.run(scenario)
    for flow in ("tcp", "udp"):
        rows = result.flow_rows(flow)
        assert rows.height > 0 and rows.equals(result.flow_series.filter(pl.col("flow") == flow))
    absent = result.flow_rows("nobody")
    assert absent.height == 0 and absent.columns == result.flow_series.columns


def test_metrics_are_recorded_on_request(scenario: dict[str, Any]) -> None:
    scenario["record"]["metrics"] = True
    result = fairstream.run(scenario)
    assert result.metrics.height > 0
    assert "cwnd" in set(result.metrics["metric"].unique())


def test_output_dir_is_written_and_temp_dirs_removed(tmp_path: Path, scenario: dict[str, Any]) -> None:
    out = tmp_path / "nested" / "run"
    result = fairstream.run(scenario, output_dir=out)
    assert result.output_dir == out
    for name in ("summary.json", "scenario.resolved.toml", "flow_series.parquet", "link_series.parquet"):
        assert (out / name).is_file(), name
    assert [p.name for p in out.parent.iterdir()] == ["run"]  # no staging directory left behind


def test_a_run_without_output_dir_writes_nothing_and_hands_tables_over_in_memory(
    tmp_path: Path, scenario: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario["record"]["metrics"] = True
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None  # re-read TMPDIR
    try:
        in_memory = fairstream.run(scenario)
        assert in_memory.output_dir is None
        assert list(tmp_path.iterdir()) == []
        on_disk = fairstream.run(scenario, output_dir=tmp_path / "out")
    finally:
        tempfile.tempdir = None
    for name in ("flow_series", "flow_summary", "link_series", "metrics"):
        assert in_memory.table(name).equals(on_disk.table(name), null_equal=True), name
    assert in_memory.summary["flows"] == on_disk.summary["flows"]
    assert in_memory.resolved_toml == on_disk.resolved_toml
    assert in_memory.packets.is_empty()


def test_progress_callback_sees_the_whole_run(scenario: dict[str, Any]) -> None:
    seen: list[tuple[float, float, int]] = []
    fairstream.run(scenario, progress=lambda now, duration, events: seen.append((now, duration, events)))
    assert len(seen) > 10
    assert seen[-1][0] == pytest.approx(5.0)
    assert all(d == pytest.approx(5.0) for _, d, _ in seen)
    assert [n for n, _, _ in seen] == sorted(n for n, _, _ in seen)
    assert seen[-1][2] > 0


def test_validate_returns_the_resolved_scenario(scenario: dict[str, Any]) -> None:
    resolved = tomlio.loads(fairstream.validate(scenario))
    assert resolved["name"] == "small"
    assert resolved["seed"] == 7


def test_bad_scenario_raises_and_writes_nothing(tmp_path: Path) -> None:
    bad = small_scenario()
    bad["topology"]["link"][2]["rate"] = "1.5 Mbs"
    out = tmp_path / "out"
    with pytest.raises(fairstream.ScenarioError, match="rate"):
        fairstream.run(bad, output_dir=out)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
    assert issubclass(fairstream.ScenarioError, ValueError)


def test_to_pandas_names_unknown_tables(scenario: dict[str, Any]) -> None:
    result = fairstream.run(scenario)
    with pytest.raises(KeyError, match="flow_series"):
        result.to_pandas("nope")
    assert isinstance(result.table("flow_summary"), pl.DataFrame)
