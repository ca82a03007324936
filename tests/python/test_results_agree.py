"""summary.json and the Parquet tables say the same thing the same way: a missing value (a CBR
flow's RTT) is null in both, summary.json's flows are flow_summary.parquet's rows, a queue is
written in the scenario syntax, and a table that was not recorded still has its columns."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import fairstream
import polars as pl
import pytest
from fairstream.results import TABLES


def test_a_missing_rtt_is_null_in_parquet_and_in_summary_json(scenario: dict[str, Any]) -> None:
    scenario["duration"] = "1s"
    result = fairstream.run(scenario)
    udp = [f for f in result.summary["flows"] if f["name"] == "udp"][0]
    assert udp["mean_rtt_s"] is None
    row = result.flow_summary.filter(pl.col("name") == "udp")
    assert row["mean_rtt_s"].null_count() == 1, row
    assert not row["mean_rtt_s"].is_nan().any()
    series = result.flow_series.filter(pl.col("flow") == "udp")["rtt_mean_s"]
    assert series.null_count() == series.len() > 0, "a bin without RTT samples is null too"
    tcp = result.flow_summary.filter(pl.col("name") == "tcp")["mean_rtt_s"][0]
    assert tcp is not None and math.isfinite(tcp) and tcp > 0


def test_summary_flows_are_the_flow_summary_rows(scenario: dict[str, Any]) -> None:
    scenario["duration"] = "1s"
    result = fairstream.run(scenario)
    assert result.summary["flows"] == result.flow_summary.to_dicts()


def test_a_queue_in_summary_json_is_typed_numbers_and_words(scenario: dict[str, Any]) -> None:
    scenario["duration"] = "500ms"
    links = scenario["topology"]["link"]
    links[0]["queue"] = {"kind": "red"}
    links[1]["queue"] = {"kind": "fq", "flow_limit": 7}
    result = fairstream.run(scenario)
    shown = {link["name"]: link for link in result.summary["links"]}
    fifo, red, fq = shown["N1->N2"], shown["S1->N1"], shown["S2->N1"]
    assert (fifo["queue_kind"], fifo["queue_limit_packets"]) == ("droptail", 20)
    assert fifo["droptail_counting"] == "pfifo"
    assert fifo["queue_limit_bytes"] is None and fifo["red_w_q"] is None
    # RED's automatic parameters as resolved for its link, in the queue's units.
    assert red["queue_kind"] == "red" and red["red_queue_in_bytes"] is True
    assert 0 < red["red_w_q"] < 1 and red["red_max_th"] == pytest.approx(3 * red["red_min_th"])
    assert (fq["queue_kind"], fq["fq_flow_limit"], fq["droptail_counting"]) == ("fq", 7, None)
    # Every link row has every declared column: the same keys whatever the discipline.
    assert len({frozenset(link) for link in result.summary["links"]}) == 1


def test_tables_not_recorded_are_empty_with_their_columns(scenario: dict[str, Any], tmp_path: Path) -> None:
    scenario["duration"] = "500ms"
    bare = fairstream.run(scenario, tmp_path / "bare")
    assert not (bare.output_dir / TABLES["packets"]).exists()
    assert not (bare.output_dir / TABLES["metrics"]).exists()
    scenario["record"].update({"packets": True, "metrics": True})
    full = fairstream.run(scenario, tmp_path / "full")
    in_memory = fairstream.run(
        scenario | {"record": {**scenario["record"], "packets": False, "metrics": False}}
    )
    for name in ("packets", "metrics"):
        assert in_memory.table(name).schema == full.table(name).schema, f"{name}, handed over in memory"
        empty, recorded = bare.table(name), full.table(name)
        assert empty.is_empty() and recorded.height > 0
        assert empty.schema == recorded.schema, name
