"""docs/results.md names every column of every table a run writes, and every summary.json key:
the tables are declared where they are written (crates/results), and the page must follow."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
from fairstream import _core
from fairstream.api import run

DOC = (Path(__file__).resolve().parents[2] / "docs" / "results.md").read_text(encoding="utf-8")


def _row(file: str) -> str:
    """The docs table row of `file` (the line that starts with its name)."""
    for line in DOC.splitlines():
        if line.startswith(f"| `{file}`"):
            return line
    raise AssertionError(f"docs/results.md has no row for {file}")


def test_every_column_and_summary_key_is_documented(scenario: dict[str, Any], tmp_path: Path) -> None:
    scenario["record"] = {"interval": "500ms", "metrics": True, "packets": True}
    result = run(scenario, output_dir=tmp_path / "out", progress=False)
    tables = sorted(result.output_dir.glob("*.parquet"))
    assert {t.name for t in tables} >= {"flow_summary.parquet", "flow_series.parquet", "packets.parquet"}
    for table in tables:
        row = _row(table.name)
        words = set(re.findall(r"[a-z_]+", row))
        missing = [c for c in pl.read_parquet_schema(table) if c not in words]
        assert not missing, f"{table.name}: columns not in docs/results.md: {missing}"
    summary = json.loads((result.output_dir / "summary.json").read_text(encoding="utf-8"))
    row = _row("summary.json")
    words = set(re.findall(r"[a-z_]+", row))
    top = [k for k in summary if k not in words]
    links = [k for k in summary["links"][0] if k not in words and k != "link_id"]
    assert not top, f"summary.json keys not in docs/results.md: {top}"
    assert not links, f"summary.json link keys not in docs/results.md: {links}"


def _metric_rows() -> dict[str, str]:
    """Each metric name of docs/results.md's "Metric names" table, with its row."""
    section = DOC.split("## Metric names", 1)[1]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            for name in re.findall(r"`([a-z_]+)`", first):
                rows[name] = line
    return rows


def test_every_declared_metric_and_column_is_documented() -> None:
    """What the protocols and queue disciplines declare (their metrics, the flow-summary columns
    their metrics fold into, the link summary's queue parameters) is on the page: a protocol that
    adds a metric documents it, or this fails."""
    schema = _core.schema()
    rows = _metric_rows()
    missing = [m["name"] for m in schema["metrics"] if m["name"] not in rows]
    assert not missing, f"metrics not in docs/results.md's table: {missing}"
    flow_words = set(re.findall(r"[a-z_]+", _row("flow_summary.parquet")))
    summary_words = set(re.findall(r"[a-z_]+", _row("summary.json")))
    columns = [c["name"] for c in schema["summary_columns"] if c["name"] not in flow_words]
    assert not columns, f"summary columns not in docs/results.md: {columns}"
    queue = [c["name"] for c in schema["queue_columns"] if c["name"] not in summary_words]
    assert not queue, f"queue parameters not in docs/results.md: {queue}"
    assert all(m["unit"] and m["meaning"] for m in schema["metrics"]), "a metric without unit or meaning"
    for table, cols in schema["queue_series"].items():
        words = set(re.findall(r"[a-z_]+", _row(f"{table}.parquet")))
        assert not [c["name"] for c in cols if c["name"] not in words], f"{table}: columns not documented"
