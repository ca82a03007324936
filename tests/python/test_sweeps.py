"""Sweeps: parsing --set, the grid, and a parallel sweep through the CLI and the API."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import fairstream
import polars as pl
import pytest
from conftest import small_scenario
from fairstream import tomlio
from fairstream.cli import main
from fairstream.sweeps import grid_points, parse_assignment, parse_value


def test_parse_assignment_and_values() -> None:
    assert parse_assignment("flow.1.rate=1Mbps,2Mbps") == ("flow.1.rate", ["1Mbps", "2Mbps"])
    assert parse_assignment("flow.0.window = 10, 20") == ("flow.0.window", [10, 20])
    assert parse_value("true") is True
    assert parse_value("0.5") == 0.5
    assert parse_value('"a,b"') == "a,b"
    assert parse_value("1%") == "1%"
    for bad in ("flow.0.rate", "=1", "x="):
        with pytest.raises(ValueError):
            parse_assignment(bad)


def test_grid_is_the_cartesian_product() -> None:
    points = grid_points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert len(points) == 6
    assert points[0] == {"a": 1, "b": "x"} and points[-1] == {"a": 2, "b": "z"}
    with pytest.raises(ValueError):
        grid_points({"a": []})


def test_sweep_api_runs_every_point(tmp_path: Path) -> None:
    result = fairstream.sweep(
        small_scenario(duration="2s"), {"flow.1.rate": ["0.5Mbps", "1Mbps"]}, tmp_path / "sw", jobs=2
    )
    flows = result.flows
    assert flows.height == 4  # 2 points x 2 flows
    assert set(flows["flow.1.rate"]) == {"0.5Mbps", "1Mbps"}
    udp = flows.filter(pl.col("name") == "udp").sort("point")
    assert udp["bytes_sent"][0] < udp["bytes_sent"][1]
    assert result.run(1).summary["duration_s"] == pytest.approx(2.0)


def test_sweep_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    out = tmp_path / "sw"
    argv = ["sweep", str(scenario), "--set", "flow.1.rate=0.5Mbps,1Mbps", "--set", "seed=1,2", "-o", str(out)]
    assert main([*argv, "--jobs", "2", "--quiet"]) == 0
    meta = json.loads((out / "sweep.json").read_text())
    assert len(meta["points"]) == 4
    assert all((out / p["dir"] / "summary.json").is_file() for p in meta["points"])
    assert "4 runs" in capsys.readouterr().out


def test_sweep_with_a_bad_point_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    out = tmp_path / "sw"
    assert main(["sweep", str(scenario), "--set", "flow.1.rate=1Mbps,fast", "-o", str(out), "--quiet"]) == 2
    assert "fast" in capsys.readouterr().err
    assert not out.exists()
    assert main(["sweep", str(scenario), "--set", "flow.9.rate=1Mbps", "-o", str(out), "--quiet"]) == 2
    assert not out.exists()


def test_scheduler_without_dask_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if dask were not installed
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    argv = [
        "sweep",
        str(scenario),
        "--set",
        "seed=1,2",
        "-o",
        str(tmp_path / "sw"),
        "--scheduler",
        "tcp://x:1",
    ]
    assert main(argv) == 1
    assert "dask" in capsys.readouterr().err


def test_sweep_on_a_dask_cluster(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    scenario, grid = small_scenario(duration="1s"), {"flow.1.rate": ["0.5Mbps", "1Mbps"]}
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        result = fairstream.sweep(scenario, grid, tmp_path / "sw", scheduler=cluster.scheduler_address)
    local = fairstream.sweep(scenario, grid, tmp_path / "local")
    assert result.flows.drop("point").equals(local.flows.drop("point"))
