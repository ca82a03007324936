"""Validation of the simulator's TCP against analytic expectations (docs/VALIDATION.md).

Experiments ``tcp-utilisation`` (one NewReno flow fills a link with one BDP of buffer),
``tcp-fairness`` (two identical flows share a bottleneck) and ``tcp-padhye`` (Reno under
Bernoulli loss against the PFTK model at the run's own loss-event rate, RTT and RTO), run from
``scenarios/papers/validation-*.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..lazy import on_first_use
from ..results import RunResult
from ..scenario import with_overrides
from .experiment import SPLIT_PRONE_REPLICAS, Check, Evaluation, Experiment, Figure, Point, Published
from .measure import delivered_bytes, link_utilisation

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")

PAPER = "validation"


def _shortened(doc: dict[str, Any], quick: bool, duration: str) -> dict[str, Any]:
    return with_overrides(doc, {"duration": duration} if quick else {})


@dataclass(frozen=True)
class TcpUtilisation(Experiment):
    """Utilisation of the bottleneck after slow start (bins from `warmup_s` on)."""

    link: str = "a->b"
    warmup_s: float = 5.0
    threshold: float = 0.95

    def points(self, quick: bool) -> list[Point]:
        return [Point("run", {}, _shortened(self.base_scenario(), quick, "20s"))]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        ((_, run),) = runs
        utilisation = link_utilisation(run, self.link, self.warmup_s)
        rows = [{"link": self.link, "utilisation_after_slow_start": utilisation, "warmup_s": self.warmup_s}]
        comparison = [
            {"quantity": "utilisation after slow start", "ours": utilisation, "published": "≥ 0.95"}
        ]
        checks = [
            Check(
                f"utilisation ≥ {self.threshold:g} after slow start",
                utilisation,
                "≥ 0.95",
                utilisation >= self.threshold,
            )
        ]
        return Evaluation(rows, comparison, checks, {"warmup_s": self.warmup_s})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        run = RunResult(exp_dir / result["runs"]["run"])
        s = run.link_series.filter(pl.col("link") == self.link)
        fig, ax = plt.subplots(figsize=(6.0, 3.5))
        ax.plot(s["t_end"].to_list(), s["utilisation"].to_list(), drawstyle="steps-pre")
        ax.axhline(self.threshold, color="grey", linestyle="--", label=f"{self.threshold:g}")
        ax.set(
            title=f"{self.id}: bottleneck utilisation per 1 s bin", xlabel="time (s)", ylabel="utilisation"
        )
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize="small")
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [Figure(path, "Utilisation of the 10 Mbps link per 1 s bin: slow start, then the sawtooth.")]


@dataclass(frozen=True)
class TcpFairness(Experiment):
    """Jain's index of the delivered bytes of two identical flows."""

    threshold: float = 0.95

    def points(self, quick: bool) -> list[Point]:
        return [Point("run", {}, _shortened(self.base_scenario(), quick, "60s"))]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        ((_, run),) = runs
        names = [f["name"] for f in run.summary["flows"]]
        delivered = [delivered_bytes(run, n) for n in names]
        jain = _core.jain([float(b) for b in delivered])
        duration = run.summary["duration_s"]
        rows = [
            {"flow": n, "throughput_mbps": b * 8 / duration / 1e6}
            for n, b in zip(names, delivered, strict=True)
        ]
        comparison = [
            {"quantity": "Jain's index of two identical flows", "ours": jain, "published": "≥ 0.95"}
        ]
        checks = [Check(f"Jain's index ≥ {self.threshold:g}", jain, "≥ 0.95", jain >= self.threshold)]
        return Evaluation(rows, comparison, checks, {"jain": jain})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        run = RunResult(exp_dir / result["runs"]["run"])
        path = plots.cumulative_delivered(
            fig_dir / f"{self.id}.png", run, title=f"{self.id}: bytes delivered"
        )
        return [
            Figure(path, f"Cumulative bytes of the two flows; Jain's index {result['data']['jain']:.4f}.")
        ]


@dataclass(frozen=True)
class TcpPadhye(Experiment):
    """Reno's throughput under Bernoulli loss against PFTK at the measured p, RTT and RTO."""

    loss_rates: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05)
    tolerance: float = 0.25
    segment_bytes: float = 1000.0

    def points(self, quick: bool) -> list[Point]:
        base = _shortened(self.base_scenario(), quick, "100s")
        out = []
        for per in self.loss_rates:
            doc = with_overrides(base, {})
            doc["topology"]["link"][0]["loss"] = {"kind": "bernoulli", "per": per}
            out.append(Point(f"per-{per:g}", {"per": per}, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        for point, run in runs:
            m = run.metrics
            flow = run.summary["flows"][0]
            # A loss event starts each fast retransmit or timeout.
            events = m.filter(pl.col("metric").is_in(["fast_retransmit", "timeout"])).height
            p = events / flow["packets_sent"]
            rtt = float(m.filter(pl.col("metric") == "rtt")["value"].mean())
            rto = float(m.filter(pl.col("metric") == "rto")["value"].mean())
            measured = flow["bytes_delivered"] / run.summary["duration_s"]
            model = _core.padhye(self.segment_bytes, rtt, p, rto, 1e9, 1.0)
            rows.append(
                {
                    "per": point.params["per"],
                    "loss_event_rate": p,
                    "rtt_s": rtt,
                    "rto_s": rto,
                    "measured_Bps": measured,
                    "padhye_Bps": model,
                    "ratio": measured / model,
                }
            )
        worst = max(abs(r["ratio"] - 1) for r in rows)
        comparison = [
            {"quantity": f"measured / PFTK at PER {r['per']:g}", "ours": r["ratio"], "published": "1 ± 0.25"}
            for r in rows
        ]
        checks = [
            Check(
                f"every run within ±{self.tolerance:.0%} of PFTK",
                f"worst {worst:.3f}",
                "≤ 0.25",
                worst <= self.tolerance,
            )
        ]
        return Evaluation(rows, comparison, checks, {})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        rows = result["points"]
        fig, ax = plt.subplots(figsize=(6.0, 4.0))
        x = [r["loss_event_rate"] for r in rows]
        ax.plot(x, [r["measured_Bps"] * 8 / 1e6 for r in rows], "o-", label="fairstream Reno")
        ax.plot(x, [r["padhye_Bps"] * 8 / 1e6 for r in rows], "s--", label="PFTK at measured p, RTT, RTO")
        plots.log_log(
            ax,
            xlabel="loss-event rate",
            ylabel="throughput (Mbit/s)",
            title=f"{self.id}: Reno vs the Padhye model",
        )
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [Figure(path, "Throughput of one Reno flow under Bernoulli loss beside the full PFTK model.")]


_SOURCE = "fairstream issue 2 (validation targets)"

EXPERIMENTS: tuple[Experiment, ...] = (
    TcpUtilisation(
        id="tcp-utilisation",
        title="One NewReno flow fills the link",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tcp-utilisation.toml",
        what_runs="one NewReno flow, 10 Mbps link, 20 ms RTT, drop-tail buffer of one BDP (25 packets), 60 s",
        must_hold="utilisation ≥ 95 % after slow start",
        explanation="With a buffer of one bandwidth-delay product, halving the window on a loss drains the "
        "queue exactly as the window falls, so the link never idles: utilisation close to 1 is expected.",
        published=(Published("utilisation", "≥ 0.95", _SOURCE),),
    ),
    TcpFairness(
        id="tcp-fairness",
        phase_replicas=SPLIT_PRONE_REPLICAS,
        title="Two identical flows share fairly",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tcp-fairness.toml",
        what_runs=(
            "two NewReno flows with the same RTT through a 10 Mbps dumbbell, "
            "starts drawn from U[0, 1) s, 300 s"
        ),
        must_hold="Jain's index ≥ 0.95",
        explanation=(
            "Identical AIMD flows converge to equal shares; drop-tail synchronisation can tilt short runs."
        ),
        published=(Published("Jain's index", "≥ 0.95", _SOURCE),),
    ),
    TcpPadhye(
        id="tcp-padhye",
        title="Reno under random loss matches the PFTK model",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tcp-padhye.toml",
        what_runs=(
            "one Reno flow, Bernoulli loss 0.5 / 1 / 2 / 5 %, 100 Mbps, 72 ms RTT, unlimited window, 300 s"
        ),
        must_hold=(
            "measured throughput within ±25 % of PFTK at the run's measured loss-event rate, RTT and RTO"
        ),
        explanation=(
            "The loss-event rate counts fast retransmits and timeouts per packet sent; RTT and RTO "
            "are the means of the sender's samples. PFTK is evaluated with b = 1 (an ACK per packet) "
            "and no window limit."
        ),
        published=(Published("measured / model", "1 ± 0.25", "Padhye et al. 1998"),),
    ),
)
