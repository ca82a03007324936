"""``tie-neutrality``: flows whose packets reach a queue in the same nanosecond; under random ties
no flow gains systematically, under fifo ties one does."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...lazy import on_first_use
from ...results import RunResult
from ...scenario import with_overrides
from ..experiment import Check, Evaluation, Experiment, Figure, Point
from .common import _float, _load_packaged

if TYPE_CHECKING:
    import numpy as np
else:
    np = on_first_use("numpy")

TIE_SEEDS = tuple(range(1, 11))
TIE_QUICK_SEEDS = (1, 2, 3)
TCP_TIE_SCENARIO = "validation-tie-neutrality-tcp.toml"


def student_t_two_sided_p(t: float, dof: int) -> float:
    """P(|T| ≥ |t|) for Student's t with `dof` degrees of freedom (exact finite series,
    Abramowitz and Stegun 26.7.3–4); 0 for an infinite t, NaN without degrees of freedom."""
    if dof < 1 or math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    theta = math.atan(abs(t) / math.sqrt(dof))
    c2 = math.cos(theta) ** 2
    if dof % 2 == 0:
        term, total = 1.0, 1.0
        for k in range(1, dof // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        inside = math.sin(theta) * total
    else:
        inside = theta
        if dof > 1:
            term, total = 1.0, 1.0
            for k in range(1, (dof - 1) // 2):
                term *= c2 * (2 * k) / (2 * k + 1)
                total += term
            inside += math.sin(theta) * math.cos(theta) * total
        inside *= 2 / math.pi
    return min(1.0, max(0.0, 1.0 - inside))


def share_statistics(shares: Sequence[Sequence[float]]) -> dict[str, Any]:
    """Per flow, over runs (rows: runs, columns: flows): mean share, its standard error, the t
    statistic of mean − 1/n (infinite when the runs agree exactly and the mean is off 1/n), its
    two-sided p-value (Student's t, runs − 1 degrees of freedom), and how many runs gave the flow
    more than 1/n."""
    arr = np.asarray(shares, dtype=float)
    runs, n = arr.shape
    fair = 1.0 / n
    mean = arr.mean(axis=0)
    se = arr.std(axis=0, ddof=1) / math.sqrt(runs) if runs > 1 else np.full(n, math.nan)
    dev = mean - fair
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, dev / se, np.where(np.abs(dev) > 1e-12, np.inf * np.sign(dev), 0.0))
    p = [student_t_two_sided_p(float(x), runs - 1) for x in t]
    return {
        "fair": fair,
        "mean": mean.tolist(),
        "se": se.tolist(),
        "t": t.tolist(),
        "p": p,
        "above_fair": (arr > fair).sum(axis=0).tolist(),
        "max_abs_dev": float(np.abs(dev).max()),
        "max_abs_t": float(np.abs(t).max()),
        "min_p": min(p),
    }


@dataclass(frozen=True)
class TieNeutrality(Experiment):
    """Flows whose packets reach the bottleneck queue in the same nanosecond, over seeds, under
    both tie rules: lock-stepped CBR sources, and identical TCP flows started together."""

    #: Level of the neutrality test (split over the flows, Bonferroni).
    alpha: float = 0.01
    quick_duration: str = "10s"

    def points(self, quick: bool) -> list[Point]:
        bases = {
            "cbr": self.base_scenario(),
            "tcp": _load_packaged(TCP_TIE_SCENARIO),
        }
        out = []
        for kind, base in bases.items():
            for ties in ("random", "fifo"):
                for seed in TIE_QUICK_SEEDS if quick else TIE_SEEDS:
                    over = {"seed": seed, "engine": {"ties": ties}}
                    if quick:
                        over["duration"] = self.quick_duration
                    out.append(
                        Point(
                            f"{kind}-{ties}-s{seed}",
                            {"kind": kind, "ties": ties, "seed": seed},
                            with_overrides(base, over),
                        )
                    )
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        shares: dict[tuple[str, str], list[list[float]]] = {}
        for point, run in runs:
            flows = sorted(run.summary["flows"], key=lambda f: f["flow_id"])
            delivered = [float(f["bytes_delivered"]) for f in flows]
            share = [b / sum(delivered) for b in delivered]
            shares.setdefault((point.params["kind"], point.params["ties"]), []).append(share)
            rows.append(
                {**point.params, **{f"share_{f['name']}": s for f, s in zip(flows, share, strict=True)}}
            )
        stats = {f"{k}/{t}": share_statistics(v) for (k, t), v in shares.items()}
        comparison, checks = [], []
        for (kind, ties), runs_shares in shares.items():
            s = stats[f"{kind}/{ties}"]
            fair = f"1/n = {s['fair']:g}"
            comparison += [
                {
                    "quantity": f"{kind}, {ties} ties: mean share ({len(runs_shares)} seeds, {fair})",
                    "ours": " / ".join(f"{m:.4f}" for m in s["mean"]),
                    "published": "1/n each" if ties == "random" else "—",
                },
                {
                    "quantity": f"{kind}, {ties} ties: largest |mean − 1/n|; smallest t-test p-value",
                    "ours": f"{s['max_abs_dev']:.4f}; {s['min_p']:.3g}",
                    "published": f"p ≥ {self.alpha:g}/n" if ties == "random" else "—",
                },
                {
                    "quantity": f"{kind}, {ties} ties: seeds in which each flow got more than 1/n",
                    "ours": " / ".join(str(k) for k in s["above_fair"]),
                    "published": "about half" if ties == "random" else "—",
                },
            ]
        for kind in ("cbr", "tcp"):
            s = stats[f"{kind}/random"]
            n = len(s["mean"])
            checks.append(
                Check(
                    f"{kind}, random ties: no flow's mean share departs from 1/n (two-sided t-test over "
                    f"seeds, level {self.alpha:g} with Bonferroni over the {n} flows)",
                    s["min_p"],
                    f"smallest p ≥ {self.alpha / n:g}",
                    s["min_p"] >= self.alpha / n,
                )
            )
        fifo = stats["cbr/fifo"]
        n = len(fifo["mean"])
        top = int(np.argmax(fifo["mean"]))
        checks.append(
            Check(
                "cbr, fifo ties: a flow's mean share is systematically above 1/n (the reason for the rule)",
                f"flow {top}: {fifo['mean'][top]:.3f}, p {fifo['p'][top]:.3g}",
                f"p < {self.alpha / n:g}",
                fifo["mean"][top] > fifo["fair"] and fifo["p"][top] < self.alpha / n,
            )
        )
        tcp = stats["tcp/fifo"]
        checks.append(
            Check("tcp, fifo ties: largest |mean share − 1/n|", tcp["max_abs_dev"], "reported", None)
        )
        return Evaluation(rows, comparison, checks, {"stats": stats})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from .. import plots

        rows = result["points"]
        keys = [("cbr", "random"), ("cbr", "fifo"), ("tcp", "random"), ("tcp", "fifo")]
        fig, axes = plt.subplots(1, 4, figsize=(14.0, 3.8), sharey=False)
        for ax, (kind, ties) in zip(axes, keys, strict=True):
            mine = [r for r in rows if r["kind"] == kind and r["ties"] == ties]
            cols = [c for c in (mine[0] if mine else {}) if c.startswith("share_")]
            for j, c in enumerate(cols):
                ys = [r[c] for r in mine]
                ax.scatter(
                    [j + 0.08 * (i - len(ys) / 2) / max(len(ys), 1) for i in range(len(ys))],
                    ys,
                    s=10,
                    alpha=0.6,
                )
                s = result["data"]["stats"][f"{kind}/{ties}"]
                se = _float(s["se"][j])
                ax.errorbar(
                    [j],
                    [s["mean"][j]],
                    yerr=[3 * se if math.isfinite(se) else 0],
                    color="black",
                    marker="_",
                    capsize=5,
                )
            if cols:
                ax.axhline(1 / len(cols), color="grey", linestyle=":")
                ax.set_xticks(range(len(cols)), [c.removeprefix("share_") for c in cols])
            ax.set(title=f"{kind}, {ties} ties", ylabel="share of delivered bytes")
            ax.grid(alpha=0.3)
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "Share of the delivered bytes per flow in every seed (dots), with the mean ± 3 standard "
                "errors over seeds (black); dotted: the fair share 1/n.",
            )
        ]
