"""Measurements the reproductions take from a run: delivered throughput over a window, cumulative
bytes per flow, a link's rate by name."""

from __future__ import annotations

import polars as pl

from ..results import RunResult


def delivered_bps(run: RunResult, flow: str, since_s: float = 0.0) -> float:
    """Bit/s of wire bytes delivered to `flow`'s receiver from `since_s` to the end of the run.

    A flow absent from the run (e.g. a UDP source at zero load that was left out) delivers 0.
    """
    span = run.summary["duration_s"] - since_s
    if span <= 0:
        raise ValueError(f"warm-up {since_s} s is not shorter than the run ({run.summary['duration_s']} s)")
    rows = run.flow_series.filter((pl.col("flow") == flow) & (pl.col("t_start") >= since_s - 1e-9))
    return float(rows["bytes_delivered"].sum()) * 8.0 / span


def delivered_bytes(run: RunResult, flow: str) -> int:
    """Wire bytes delivered to `flow`'s receiver over the whole run."""
    return int(run.flow_series.filter(pl.col("flow") == flow)["bytes_delivered"].sum())


def cumulative_bytes(run: RunResult) -> dict[str, tuple[list[float], list[int]]]:
    """Per flow: (bin end times, wire bytes delivered up to each)."""
    out: dict[str, tuple[list[float], list[int]]] = {}
    series = run.flow_series.sort("flow_id", "t_end")
    for (flow,), rows in series.group_by("flow", maintain_order=True):
        out[str(flow)] = (rows["t_end"].to_list(), rows["bytes_delivered"].cum_sum().to_list())
    return out


def link_rate_bps(run: RunResult, name: str) -> float:
    """The configured rate of the link called `name` (e.g. ``"N1->N2"``)."""
    for link in run.summary["links"]:
        if link["name"] == name:
            return float(link["rate_bps"])
    raise KeyError(f"run {run.output_dir} has no link {name!r}")
