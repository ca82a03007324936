"""Flows on ATM ABR with ERICA ports through the Python surface: the port series and the VC
metrics come out as tables (documented in docs/results.md), max-min rates by progressive filling,
and the ABR reproductions' scenario transformation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fairstream import _core
from fairstream.api import run
from fairstream.reproduce.abr import ABR_SOURCE, ERICA_PORT, with_abr

DOC = (Path(__file__).resolve().parents[2] / "docs" / "results.md").read_text(encoding="utf-8")


def _on_abr(scenario: dict[str, Any]) -> dict[str, Any]:
    doc = with_abr(scenario)
    doc["record"] = {"interval": "500ms", "metrics": True}
    return doc


def test_with_abr_changes_every_port_and_flow_and_nothing_else(scenario: dict[str, Any]) -> None:
    doc = with_abr(scenario)
    assert all(link["queue"] == ERICA_PORT for link in doc["topology"]["link"])
    assert all(f["atm"] == "abr" and f["abr"] == ABR_SOURCE for f in doc["flow"])
    assert "atm" not in scenario["flow"][0]  # a copy: the plain scenario is untouched
    strip = {k: v for k, v in doc.items() if k not in ("topology", "flow")}
    assert strip == {k: v for k, v in scenario.items() if k not in ("topology", "flow")}


def test_port_series_and_vc_metrics_come_out_and_are_documented(
    scenario: dict[str, Any], tmp_path: Path
) -> None:
    result = run(_on_abr(scenario), output_dir=tmp_path / "out", progress=False)
    ports = result.port_series
    # One row per ERICA port (all 10 links) per 500 ms bin of the 5 s run.
    assert ports.height == 10 * 10
    t1 = ports.filter(pl.col("link") == "N1->N2").sort("t_end")
    assert t1["target_bps"].unique().to_list() == [pytest.approx(0.9 * 1.5e6)]
    assert t1["z"].drop_nulls().len() == t1.height and t1["fair_share_bps"].min() > 0
    # The file is written, and every column is in docs/results.md.
    schema = pl.read_parquet_schema(result.output_dir / "port_series.parquet")
    row = next(line for line in DOC.splitlines() if line.startswith("| `port_series.parquet`"))
    words = set(re.findall(r"[a-z_]+", row))
    assert [c for c in schema if c not in words] == []
    metrics = set(result.metrics["metric"].unique().to_list())
    assert {"acr", "er", "cwnd"} <= metrics
    for name in ("acr", "er", "source_discards"):
        assert f"| `{name}` |" in DOC
    # Flows keep their protocol's name; their counters count cells.
    flows = {f["name"]: f for f in result.summary["flows"]}
    assert flows["tcp"]["protocol"] == "tcp" and flows["udp"]["protocol"] == "cbr"
    assert flows["tcp"]["bytes_delivered"] % 53 == 0


def test_a_run_without_erica_has_an_empty_port_series_with_its_columns(scenario: dict[str, Any]) -> None:
    result = run(scenario, progress=False)
    assert result.port_series.height == 0
    assert "fair_share_bps" in result.port_series.columns


def test_max_min_rates_by_progressive_filling() -> None:
    inf = float("inf")
    assert _core.max_min_rates([10.0, 4.0], [[0, 1], [0], [1]], [inf] * 3) == [2.0, 8.0, 2.0]
    assert _core.max_min_rates([10.0], [[0], [0]], [1.0, inf]) == [1.0, 9.0]
    with pytest.raises(ValueError, match="within the capacities"):
        _core.max_min_rates([10.0], [[1]], [inf])
    with pytest.raises(ValueError, match="one demand per path"):
        _core.max_min_rates([10.0], [[0]], [])
