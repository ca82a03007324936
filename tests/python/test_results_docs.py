"""docs/results.md names every column of every table a run writes, and every summary.json key:
the tables are declared where they are written (crates/results), and the page must follow."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
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
