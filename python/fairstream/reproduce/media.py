"""Playout and quality of media flows, for the reproductions and the report: the playout summary
of a run's media flows (the media columns of its flow summary, docs/results.md) and a figure of
each media flow's encoded rate over time (the ``encoded_rate`` metric of the streamer).

A reproduction of paper 000 (``h2h-*``) calls `level_figure` from its ``figures`` and puts
`playout_rows` in its points; the report shows, for every experiment whose runs hold a streamer,
the playout summary of its runs (`report_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import _core
from ..results import RunResult

#: The flow summary's media columns, in order (null for flows that are not media flows): the
#: summary columns the media protocols' metrics declare (`_core.schema`).
PLAYOUT_COLUMNS = tuple(c["name"] for c in _core.schema()["summary_columns"])


def playout_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per flow of `summary` (summary.json as a dict) with a player (a streamer): its name,
    protocol and media columns."""
    return [
        {"flow": f["name"], "protocol": f["protocol"], **{c: f.get(c) for c in PLAYOUT_COLUMNS}}
        for f in summary.get("flows", [])
        if f.get("frames_delivered") is not None
    ]


def report_rows(run_dirs: Sequence[Path], limit: int = 20) -> tuple[list[dict[str, Any]], int]:
    """The playout rows of the runs in `run_dirs` (a ``run`` column naming each), at most `limit`
    of them, and how many more there were."""
    summaries = ((d.name, RunResult(d).summary) for d in run_dirs if (d / "summary.json").is_file())
    return report_rows_of(summaries, limit)


def report_rows_of(
    summaries: Iterable[tuple[str, Mapping[str, Any]]], limit: int = 20
) -> tuple[list[dict[str, Any]], int]:
    """`report_rows` of runs given as (name, summary)."""
    rows: list[dict[str, Any]] = []
    for name, summary in summaries:
        rows.extend({"run": name, **r} for r in playout_rows(summary))
    return rows[:limit], max(0, len(rows) - limit)


def dataset_report_rows(data_dir: Path, limit: int = 20) -> tuple[list[dict[str, Any]], int]:
    """`report_rows` of the canonical points of a dataset (`fairstream.dataset`), by point key,
    read from its flow summary table: the same rows as from each point's summary, without parsing
    thousands of them (the ``h2h-*`` experiments have 330 points each)."""
    import polars as pl

    table = data_dir / "flow_summary.parquet"
    if not table.is_file():  # no point of the dataset had a flow
        return [], 0
    columns = ["flow", "protocol", *PLAYOUT_COLUMNS]
    flows = (
        pl.scan_parquet(table)
        .filter((pl.col("replica") == 0) & pl.col("frames_delivered").is_not_null())
        .sort("key", maintain_order=True)
        .select(pl.col("key").alias("run"), pl.col("name").alias("flow"), *columns[1:])
        .collect()
    )
    return flows.head(limit).to_dicts(), max(0, flows.height - limit)


def level_figure(run: RunResult, path: Path, *, title: str, bottleneck_kbps: float | None = None) -> Path:
    """Each streamer flow's encoded rate over time (kbit/s, a step per level change), with the
    bottleneck's rate as a line when given; written to `path`."""
    from .plots import plt, save

    m = run.metrics
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    if len(m):
        import polars as pl

        rates = m.filter(pl.col("metric") == "encoded_rate").sort("t")
        for flow in rates["flow"].unique(maintain_order=True).to_list():
            r = rates.filter(pl.col("flow") == flow)
            ax.step(r["t"].to_list(), [v / 1000 for v in r["value"].to_list()], where="post", label=flow)
    if bottleneck_kbps is not None:
        ax.axhline(bottleneck_kbps, color="grey", linestyle=":", label="bottleneck")
    ax.set_xlabel("time (s)", fontsize="small")
    ax.set_ylabel("encoded rate (kbit/s)", fontsize="small")
    ax.set_title(title, fontsize="small")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="x-small")
    return save(fig, path)
