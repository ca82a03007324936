"""Binomial congestion control beside TCP (``binomial-friendliness``): IIAD and SQRT, the
TCP-friendly streaming controls paper 002 names, each sharing a dumbbell with one NewReno flow,
through a drop-tail and through a RED bottleneck, over several seeds
(``scenarios/papers/validation-binomial.toml``).

Two properties the binomial paper claims: a control with k + l = 1 takes about TCP's share
(we accept 0.5× to 2× NewReno's throughput, averaged over seeds), and it is smoother, so its send
rate varies less from one round-trip time to the next than NewReno's. Smoothness here is the
coefficient of variation of the bytes sent per 50 ms bin (about one RTT) after the warm-up.
TCP-compatibility is derived for losses that strike each flow in proportion to its rate, as RED's
random early drops do; a drop-tail queue drops whoever sends into it while it is full, and the
notes give how the losses split between the two flows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..results import RunResult
from ..scenario import with_overrides
from ..table import fmt
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published

#: Seeds each control runs with (full, quick).
SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1, 2)
#: Binomial controls compared with NewReno.
CONTROLS = ("iiad", "sqrt")
#: Bottleneck queues by name: the scenario's drop-tail, and RED (ns-2 defaults, same limit).
QUEUES: dict[str, dict[str, Any] | None] = {"droptail": None, "red": {"kind": "red", "limit": "40 packets"}}
#: Accepted range of the binomial flow's throughput over NewReno's, mean over seeds (the issue's).
FRIENDLY = (0.5, 2.0)
WARMUP_S = 20.0
QUICK_DURATION = "40s"
QUICK_WARMUP_S = 10.0


def _sent_per_bin(run: RunResult, flow: str, since_s: float) -> list[float]:
    import polars as pl

    rows = run.flow_series.filter((pl.col("flow") == flow) & (pl.col("t_start") >= since_s - 1e-9))
    return [float(b) for b in rows["bytes_sent"]]


def variation(values: Sequence[float]) -> float:
    """Coefficient of variation (population standard deviation over mean); NaN for an empty or
    all-zero series."""
    if not values or statistics.fmean(values) == 0:
        return math.nan
    return statistics.pstdev(values) / statistics.fmean(values)


@dataclass(frozen=True)
class BinomialFriendliness(Experiment):
    """IIAD and SQRT each against one NewReno flow, through drop-tail and RED: share, smoothness."""

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        if quick:
            base = with_overrides(base, {"duration": QUICK_DURATION})
        out = []
        for queue, config in QUEUES.items():
            for control in CONTROLS:
                for seed in QUICK_SEEDS if quick else SEEDS:
                    doc = with_overrides(base, {"seed": seed})
                    next(f for f in doc["flow"] if f["name"] == "binomial")["control"] = control
                    if config is not None:
                        doc["topology"]["bottleneck"]["queue"] = dict(config)
                    params = {"queue": queue, "control": control, "seed": seed}
                    out.append(Point(f"{queue}-{control}-seed{seed}", params, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        warmup = QUICK_WARMUP_S if quick else WARMUP_S
        rows = []
        for point, run in runs:
            sent = {f: _sent_per_bin(run, f, warmup) for f in ("newreno", "binomial")}
            flows = {f["name"]: f for f in run.summary["flows"] if f["name"] in sent}
            new, bino = flows["newreno"], flows["binomial"]
            rows.append(
                {
                    **point.params,
                    "ratio": bino["bytes_delivered"] / max(new["bytes_delivered"], 1),
                    "drop_ratio": bino["packets_dropped"] / max(new["packets_dropped"], 1),
                    "cov_binomial": variation(sent["binomial"]),
                    "cov_newreno": variation(sent["newreno"]),
                }
            )
        comparison, checks, notes = [], [], []
        lo, hi = FRIENDLY
        for queue in QUEUES:
            for control in CONTROLS:
                mine = [r for r in rows if r["control"] == control and r["queue"] == queue]
                ratio = statistics.fmean(r["ratio"] for r in mine)
                cov_b = statistics.fmean(r["cov_binomial"] for r in mine)
                cov_n = statistics.fmean(r["cov_newreno"] for r in mine)
                drops = statistics.fmean(r["drop_ratio"] for r in mine)
                name = f"{control.upper()}, {queue}"
                comparison += [
                    {
                        "quantity": f"{name}: throughput / NewReno's (mean of {len(mine)} seeds)",
                        "ours": ratio,
                        "published": "≈ 1 (TCP-compatible: k + l = 1)",
                    },
                    {
                        "quantity": f"{name}: packets lost / NewReno's",
                        "ours": drops,
                        "published": "—",
                    },
                    {
                        "quantity": f"{name}: variation of the per-RTT send rate (CoV)",
                        "ours": cov_b,
                        "published": "smoother than TCP",
                    },
                    {
                        "quantity": f"{name}: the NewReno flow's variation (CoV)",
                        "ours": cov_n,
                        "published": "—",
                    },
                ]
                checks += [
                    Check(
                        f"{name}: {lo:g}× to {hi:g}× NewReno's throughput (mean over seeds)",
                        ratio,
                        "≈ 1",
                        lo <= ratio <= hi,
                    ),
                    Check(
                        f"{name}: send rate varies less from one RTT to the next than NewReno's",
                        cov_b,
                        f"< NewReno's ({cov_n:.3f})",
                        cov_b < cov_n,
                    ),
                ]
                low, high = min(r["ratio"] for r in mine), max(r["ratio"] for r in mine)
                notes.append(
                    f"{name}: {fmt(ratio, 3)}× NewReno's throughput (from {fmt(low, 3)}× to {fmt(high, 3)}× "
                    f"over the seeds), losing {fmt(drops, 3)}× as many packets as NewReno."
                )
        return Evaluation(rows, comparison, checks, {"warmup_s": warmup}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        fig, axes = plt.subplots(len(QUEUES), len(CONTROLS), figsize=(9.5, 6.0), sharey=True, sharex=True)
        for row, queue in zip(axes, QUEUES, strict=True):
            for ax, control in zip(row, CONTROLS, strict=True):
                point = next(p for p in result["points"] if p["control"] == control and p["queue"] == queue)
                run = RunResult(exp_dir / result["runs"][f"{queue}-{control}-seed{point['seed']}"])
                for flow in ("newreno", "binomial"):
                    sent = _sent_per_bin(run, flow, 0.0)
                    t = [0.05 * (i + 1) for i in range(len(sent))]
                    label = "NewReno" if flow == "newreno" else control.upper()
                    ax.plot(t, [b * 8 / 0.05 / 1e6 for b in sent], linewidth=0.6, label=label)
                ax.set_title(
                    f"{control.upper()} beside NewReno, {queue} (seed {point['seed']})", fontsize="small"
                )
                ax.grid(alpha=0.3)
                ax.legend(fontsize="x-small", loc="upper right")
        for ax in axes[-1]:
            ax.set_xlabel("time (s)")
        for row in axes:
            row[0].set_ylabel("Mbit/s per 50 ms")
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "Send rate per 50 ms bin (about one RTT) of the binomial flow and the NewReno flow beside "
                "it, first seed of each control, through drop-tail (top) and RED (bottom).",
            )
        ]


BINOMIAL = BinomialFriendliness(
    id="binomial-friendliness",
    title="Binomial controls (IIAD, SQRT) beside NewReno: share and smoothness",
    paper="validation",
    figure="—",
    scenario_file="validation-binomial.toml",
    what_runs=(
        "A NewReno flow and a NewReno-recovery flow with a binomial window control (IIAD: k = 1, l = 0; "
        "SQRT: k = l = 0.5; α = 1, β = 2/3) share a 10 Mbps dumbbell (48 ms RTT) whose 40-packet queue is "
        "drop-tail or RED, for 120 s, seeds 1–5 each (quick mode: 40 s, seeds 1–2)."
    ),
    must_hold=(
        "Each of IIAD and SQRT gets 0.5× to 2× NewReno's throughput (mean over seeds), and its per-RTT "
        "send rate varies less than NewReno's; through drop-tail and through RED."
    ),
    explanation=(
        "Binomial controls (Bansal and Balakrishnan, INFOCOM 2001) increase by α/w^k per RTT and decrease "
        "by β·w^l per loss; k + l = 1 makes them TCP-compatible, and a small l makes them smoother than "
        "TCP's halving. Ours follow ns-2's `windowOption_ 6` (the first decrease halves the window). "
        "The scenario and the smoothness measure (coefficient of variation of the bytes sent per "
        "50 ms, after a 20 s warm-up) are our choices. TCP-compatibility is derived for losses that "
        "strike each flow in proportion to its rate, which RED's random early drops approximate. A "
        "drop-tail queue drops whichever packets arrive while it is full; TCP's window growth sends "
        "packets in pairs just as the queue overflows, so TCP takes most of the losses, while the "
        "smooth binomial flow, which barely backs off when it does lose, keeps a larger share. The "
        "notes give the measured loss split; host overhead (`overhead`) on both flows narrows the gap "
        "but does not close it, so this is drop-tail's bias against bursty senders, not a tie artefact."
    ),
    published=(
        Published("throughput of a k + l = 1 control beside TCP", "≈ TCP's", "Bansal & Balakrishnan §4"),
        Published("smoothness", "IIAD and SQRT smoother than AIMD", "Bansal & Balakrishnan §4"),
    ),
)

EXPERIMENTS = (BINOMIAL,)
