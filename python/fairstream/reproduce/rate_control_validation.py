"""Validation of the simulator's TFRC against its own throughput equation (``tfrc-equation``).

One TFRC flow (RFC 5348) runs under independent (Bernoulli) packet loss on a path that is not a
bottleneck (100 Mbps, 72 ms RTT), at PER 0.5 / 1 / 2 / 5 %, from
``scenarios/papers/validation-tfrc-equation.toml``. Its mean sending rate must lie within ±20 %
of the RFC 5348 equation evaluated at the run's own measured loss event rate and RTT.

Also the home of `tfrc_equation` and of the time-weighted metric average the rate-control
reproductions (papers 002 and 004) share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..lazy import on_first_use
from ..results import RunResult
from ..scenario import with_overrides
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")


def tfrc_equation(s: float, rtt: float, p: float, t_rto: float | None = None) -> float:
    """TFRC's allowed rate in bytes per second (RFC 5348 §3.1, b = 1):
    X = s / (R·√(2p/3) + t_RTO·3·√(3p/8)·p·(1 + 32p²)), with t_RTO = 4R unless given.

    `s`: segment bytes (headers excluded), `rtt` and `t_rto` in seconds, `p` the loss event rate;
    infinite for p = 0. The simulator's own function is used when the extension exports it.
    """
    if t_rto is None:
        t_rto = 4.0 * rtt
    if hasattr(_core, "tfrc_equation"):
        return float(_core.tfrc_equation(s, rtt, p, t_rto))
    if p <= 0:
        return math.inf
    denom = rtt * math.sqrt(2 * p / 3) + t_rto * 3 * math.sqrt(3 * p / 8) * p * (1 + 32 * p * p)
    return s / denom


def metric_series(run: RunResult, flow: str, metric: str) -> tuple[list[float], list[float]]:
    """(times, values) of one metric of one flow, in time order (empty when it recorded none)."""
    return metric_series_by_flow(run, (metric,)).get((flow, metric), ([], []))


def metric_series_by_flow(
    run: RunResult, metrics: Sequence[str]
) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    """`metric_series` of every (flow, metric) among `metrics` that the run recorded, from one pass
    over its metric records rather than a filter of the whole table for each."""
    rows = run.metrics.filter(pl.col("metric").is_in(list(metrics)))
    out = {}
    for (flow, metric), part in rows.partition_by("flow", "metric", as_dict=True).items():
        if not part["t"].is_sorted():  # records come in time order: a sort is seldom needed
            part = part.sort("t")
        out[(str(flow), str(metric))] = (part["t"].to_list(), part["value"].to_list())
    return out


def time_average(times: Sequence[float], values: Sequence[float], t0: float, t1: float) -> float:
    """Time-weighted mean over [t0, t1) of a step function that takes `values[i]` from `times[i]`
    until the next record; before the first record in the window the previous record's value holds
    (NaN when nothing was recorded before t1)."""
    if t1 <= t0:
        raise ValueError(f"empty window [{t0}, {t1})")
    total, covered = 0.0, 0.0
    for i, (t, v) in enumerate(zip(times, values, strict=True)):
        end = times[i + 1] if i + 1 < len(times) else t1
        lo, hi = max(t, t0), min(end, t1)
        if hi > lo:
            total += v * (hi - lo)
            covered += hi - lo
    return total / covered if covered > 0 else math.nan


def flow_summary(run: RunResult, name: str) -> Mapping[str, Any]:
    """The summary row of flow `name` of `run` (summary.json's ``flows``)."""
    return next(f for f in run.summary["flows"] if f["name"] == name)


#: The protocols whose data packets are TFRC's.
TFRC_PROTOCOLS = ("tfrc", "tfrc-wireless", "multfrc")


def tfrc_packet(runs: Sequence[tuple[Any, RunResult]]) -> tuple[int, int]:
    """(size on the wire, segment s) of a TFRC data packet, bytes, as the first TFRC flow of
    `runs` sent it (its flow summary's ``packet_size_bytes`` and ``payload_bytes``)."""
    for _, run in runs:
        for f in run.summary["flows"]:
            if f["protocol"] in TFRC_PROTOCOLS:
                return int(f["packet_size_bytes"]), int(f["payload_bytes"])
    raise ValueError("no TFRC flow in these runs")


@dataclass(frozen=True)
class TfrcEquation(Experiment):
    """TFRC's mean sending rate under Bernoulli loss against RFC 5348's equation at the measured
    loss event rate (time average of the reported p) and RTT (mean of the RTT samples)."""

    loss_rates: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05)
    tolerance: float = 0.20
    warmup_s: float = 20.0
    quick_duration: str = "60s"
    quick_warmup_s: float = 10.0

    def points(self, quick: bool) -> list[Point]:
        base = with_overrides(self.base_scenario(), {"duration": self.quick_duration} if quick else {})
        out = []
        for per in self.loss_rates:
            doc = with_overrides(base, {})
            link = next(lk for lk in doc["topology"]["link"] if lk.get("from") == "a")
            link["loss"] = {"kind": "bernoulli", "per": per}
            out.append(Point(f"per-{per:g}", {"per": per}, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        warmup = self.quick_warmup_s if quick else self.warmup_s
        rows = []
        for point, run in runs:
            name = point.scenario["flow"][0]["name"]
            summary = flow_summary(run, name)
            size, s = summary["packet_size_bytes"], summary["payload_bytes"]
            end = float(run.summary["duration_s"])
            series = run.flow_series.filter((pl.col("flow") == name) & (pl.col("t_start") >= warmup - 1e-9))
            span = float((series["t_end"] - series["t_start"]).sum())
            # Sending rate: wire bytes sent after the warm-up, scaled to segment bytes (s / size).
            sent = float(series["bytes_sent"].sum()) / span * s / size
            p = time_average(*metric_series(run, name, "p"), warmup, end)
            rtt_t, rtt_v = metric_series(run, name, "rtt")
            rtts = [v for t, v in zip(rtt_t, rtt_v, strict=True) if t >= warmup]
            rtt = sum(rtts) / len(rtts) if rtts else math.nan
            allowed = time_average(*metric_series(run, name, "rate"), warmup, end) / 8
            model = tfrc_equation(s, rtt, p)
            rows.append(
                {
                    "per": point.params["per"],
                    "loss_event_rate": p,
                    "rtt_s": rtt,
                    "sent_Bps": sent,
                    "allowed_rate_Bps": allowed,
                    "equation_Bps": model,
                    "ratio": sent / model if model > 0 else math.nan,
                    "allowed_ratio": allowed / model if model > 0 else math.nan,
                }
            )
        worst = max(abs(r["ratio"] - 1) for r in rows)
        comparison = [
            {
                "quantity": f"sending rate / equation at PER {r['per']:g}",
                "ours": r["ratio"],
                "published": f"1 ± {self.tolerance:g}",
            }
            for r in rows
        ] + [
            {
                "quantity": f"loss event rate p at PER {r['per']:g}",
                "ours": r["loss_event_rate"],
                "published": f"≤ {r['per']:g} (losses within one RTT are one event)",
            }
            for r in rows
        ]
        checks = [
            Check(
                f"PER {r['per']:g}: mean sending rate within ±{self.tolerance * 100:g} % of the equation",
                r["ratio"],
                f"1 ± {self.tolerance:g}",
                abs(r["ratio"] - 1) <= self.tolerance,
            )
            for r in rows
        ]
        notes = [
            f"Worst deviation from the equation: {worst:.3f}. The allowed rate X (time average of the "
            'metric "rate") is '
            + ", ".join(f"{r['allowed_ratio']:.3f}" for r in rows)
            + " × the equation at PER "
            + " / ".join(f"{r['per']:g}" for r in rows)
            + "; the loss event rates measured are "
            + ", ".join(f"{r['loss_event_rate']:.4f}" for r in rows)
            + "."
        ]
        return Evaluation(rows, comparison, checks, {"warmup_s": warmup, "worst": worst}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        rows = result["points"]
        fig, ax = plt.subplots(figsize=(6.0, 4.0))
        x = [r["loss_event_rate"] for r in rows]
        ax.plot(x, [r["sent_Bps"] * 8 / 1e6 for r in rows], "o-", label="fairstream TFRC: sending rate")
        ax.plot(x, [r["allowed_rate_Bps"] * 8 / 1e6 for r in rows], "^:", label="allowed rate X (mean)")
        ax.plot(x, [r["equation_Bps"] * 8 / 1e6 for r in rows], "s--", label="RFC 5348 at measured p, RTT")
        plots.log_log(
            ax,
            xlabel="loss event rate p (time average)",
            ylabel="segment rate (Mbit/s)",
            title=f"{self.id}: TFRC vs its equation",
        )
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "Mean sending rate of one TFRC flow under Bernoulli loss (0.5, 1, 2, 5 %) beside RFC 5348's "
                "equation at the run's time-averaged loss event rate and mean RTT sample, t_RTO = 4R.",
            )
        ]


TFRC_EQUATION = TfrcEquation(
    id="tfrc-equation",
    title="TFRC under random loss sends at its equation's rate",
    paper="validation",
    figure="—",
    scenario_file="validation-tfrc-equation.toml",
    what_runs=(
        "one TFRC flow (RFC 5348, 1000-byte packets, s = 948 B: the 52 B of IPv4, UDP, frame and TFRC "
        "headers off), Bernoulli loss 0.5 / 1 / 2 / 5 %, "
        "100 Mbps, 72 ms RTT, 300 s (quick mode: 60 s)"
    ),
    must_hold=(
        "mean sending rate within ±20 % of X = s / (R·√(2p/3) + 4R·3·√(3p/8)·p·(1 + 32p²)) at the "
        "run's measured loss event rate p and RTT R"
    ),
    explanation=(
        "After a 20 s warm-up (quick mode: 10 s; chosen): the sending rate is the wire bytes sent, "
        "scaled to segment bytes (s of every packet's bytes, both from the run's flow summary: "
        "payload_bytes and packet_size_bytes); p is the time-weighted average of the loss "
        "event rate the receiver reports, not its last value, because the rate the sender holds at any "
        "moment follows the p of that moment, and a single report of the 8-interval average is a noisy "
        "sample (a long loss interval entering or leaving the window moves it by tens of per cent); R "
        "is the mean of the sender's RTT samples, t_RTO = 4R as RFC 5348 recommends. The equation is "
        "convex in p, so a p that varies over the run makes the mean rate exceed the rate at the mean "
        "p (Jensen's inequality): a mean sending rate a little above the equation's is expected."
    ),
    published=(Published("mean sending rate / equation", "1 ± 0.2", "RFC 5348 §3.1 (validation target)"),),
)

EXPERIMENTS: tuple[Experiment, ...] = (TFRC_EQUATION,)
