"""Measurements the reproductions take from a run: delivered throughput over a window or per bin,
cumulative bytes per flow, a link's utilisation and its rate by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import on_first_use
from ..results import RunResult

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")


def window_bps(
    run: RunResult,
    flow: str,
    since_s: float = 0.0,
    until_s: float | None = None,
    column: str = "bytes_delivered",
) -> float:
    """Bit/s of `flow`'s `column` (wire bytes delivered, or ``bytes_sent``) over the bins that
    start in [since_s, until_s) (until the end of the run by default).

    A flow absent from the run (e.g. a UDP source at zero load that was left out) gives 0.
    """
    end = float(run.summary["duration_s"]) if until_s is None else until_s
    if end <= since_s:
        raise ValueError(
            f"the window [{since_s} s, {end} s) is empty (the run lasts {run.summary['duration_s']} s)"
        )
    rows = run.flow_rows(flow)
    starts = rows["t_start"]  # Series operations: no query planned per call, as a frame's filter is
    inside = (starts >= since_s - 1e-9) & (starts < end - 1e-9)
    return float(rows[column].filter(inside).sum()) * 8.0 / (end - since_s)


def binned_bps(run: RunResult, flow: str, column: str = "bytes_delivered") -> list[float]:
    """Bit/s of `flow`'s `column` in each bin of the interval series (``[record] interval``), in
    time order; empty for a flow absent from the run."""
    rows = run.flow_rows(flow)
    if not rows["t_start"].is_sorted():
        rows = rows.sort("t_start")
    return (rows[column].cast(pl.Float64) * 8.0 / (rows["t_end"] - rows["t_start"])).to_list()


def delivered_bps(run: RunResult, flow: str, since_s: float = 0.0) -> float:
    """Bit/s of wire bytes delivered to `flow`'s receiver from `since_s` to the end of the run."""
    return window_bps(run, flow, since_s)


def delivered_bytes(run: RunResult, flow: str) -> int:
    """Wire bytes delivered to `flow`'s receiver over the whole run."""
    return int(run.flow_rows(flow)["bytes_delivered"].sum())


def cumulative_bytes(run: RunResult) -> dict[str, tuple[list[float], list[int]]]:
    """Per flow: (bin end times, wire bytes delivered up to each)."""
    out: dict[str, tuple[list[float], list[int]]] = {}
    series = run.flow_series.sort("flow_id", "t_end")
    for (flow,), rows in series.group_by("flow", maintain_order=True):
        out[str(flow)] = (rows["t_end"].to_list(), rows["bytes_delivered"].cum_sum().to_list())
    return out


def link_utilisation(run: RunResult, link: str, since_s: float = 0.0) -> float:
    """Fraction of `link`'s capacity its transmitter was busy from `since_s` to the end of the run
    (packets later corrupted by the loss model count: they used the link)."""
    s = run.link_series.filter((pl.col("link") == link) & (pl.col("t_start") >= since_s - 1e-9))
    span = float((s["t_end"] - s["t_start"]).sum())
    return float(s["bytes_forwarded"].sum()) * 8 / span / link_rate_bps(run, link)


def link_rate_bps(run: RunResult, name: str) -> float:
    """The configured rate of the link called `name` (e.g. ``"N1->N2"``)."""
    for link in run.summary["links"]:
        if link["name"] == name:
            return float(link["rate_bps"])
    raise KeyError(f"run {run.output_dir} has no link {name!r}")
