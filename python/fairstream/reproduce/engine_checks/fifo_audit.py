"""``fifo-audit``: replays the packet trace of busy runs (drop-tail, RED, token bucket, a paused
link) and recomputes every transmission's due start (`audit`); no packet may leave late."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...lazy import on_first_use
from ...results import RunResult
from ...scenario import with_overrides
from .. import audit
from ..experiment import Check, Evaluation, Experiment, Figure, Point
from .common import _link

if TYPE_CHECKING:
    import numpy as np
    import polars as pl
else:
    np = on_first_use("numpy")
    pl = on_first_use("polars")

# --- fifo-audit -----------------------------------------------------------------------------------


#: The bottleneck variants of the FIFO audit: point key -> (what changes, overrides of r->d).
AUDIT_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "droptail": ("drop-tail, 30 packets (the file as it is)", {}),
    "droptail-fifo-ties": ("drop-tail, ties = fifo", {}),
    "red": ("RED (ns-2 preset), 60 packets", {"queue": {"kind": "red", "preset": "ns2", "limit": 60}}),
    "tbf": (
        "100 Mbps link behind a token bucket: rate 10 Mbps, burst 10 000 B, peak 20 Mbps (mtu 1500 B)",
        {
            "rate": "100Mbps",
            "queue": {
                "kind": "tbf",
                "rate": "10Mbps",
                "burst": "10000B",
                "limit": "45000B",
                "peak_rate": "20Mbps",
                "mtu": "1500B",
            },
        },
    ),
    "pause": (
        "drop-tail with a capacity schedule: 0 from 2 s to 3 s, 4 Mbps to 3.5 s, 0 from 20 s to 20.5 s",
        {
            "schedule": [
                {"at": "2s", "rate": "0bps"},
                {"at": "3s", "rate": "4Mbps"},
                {"at": "3.5s", "rate": "10Mbps"},
                {"at": "20s", "rate": "0bps"},
                {"at": "20.5s", "rate": "10Mbps"},
            ]
        },
    ),
}


def old_engine_trace() -> pl.DataFrame:
    """A made-up trace of one 1 Mbps link as the engine before 7894a83 ran it: packet 1 starts on
    an empty queue at 0 (8 ms of transmission), packet 2 arrives at 4 ms and is held until
    packet 3 arrives at 20 ms, instead of leaving at 8 ms."""
    rows = [
        (0, 1, "+", 1000),
        (0, 1, "-", 1000),
        (4_000_000, 2, "+", 1000),
        (20_000_000, 3, "+", 1000),
        (20_000_000, 2, "-", 1000),
        (28_000_000, 3, "-", 1000),
    ]
    return pl.DataFrame(rows, schema=["t_ns", "packet_id", "event", "size"], orient="row")


@dataclass(frozen=True)
class FifoAudit(Experiment):
    """The audit of every link of every run (see `audit`)."""

    quick_duration: str = "4s"

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        out = []
        for key, (what, overrides) in AUDIT_VARIANTS.items():
            doc = with_overrides(base, {"duration": self.quick_duration} if quick else {})
            _link(doc, "r", "d").update(overrides)
            if key.endswith("fifo-ties"):
                doc.setdefault("engine", {})["ties"] = "fifo"
            out.append(Point(key, {"bottleneck": what}, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows, links, hist = [], [], {}
        for point, run in runs:
            audits = audit.audit_run(run)
            tot = audit.totals(audits)
            binding = {r: sum(a.binding[r] for a in audits) for r in audit.RULES}
            dev = np.concatenate([a.deviations for a in audits])
            rows.append(
                {
                    "run": point.key,
                    "links": len(audits),
                    **tot,
                    **{f"set_by_{r}": binding[r] for r in audit.RULES},
                    "max_late_ns": max(a.max_late_ns for a in audits),
                    "max_early_ns": max(a.max_early_ns for a in audits),
                }
            )
            links += [{"run": point.key, **a.to_row(), "examples": a.examples} for a in audits]
            hist[point.key] = _deviation_histogram(dev)
        total = {k: sum(r[k] for r in rows) for k in ("packets", "late", "early", "reordered", "stranded")}
        by_run = {r["run"]: r for r in rows}
        self_test = audit.audit_link(old_engine_trace(), audit.LinkModel("old", 1_000_000), 40_000_000)
        exercised = (
            by_run.get("tbf", {}).get("set_by_tokens", 0),
            by_run.get("pause", {}).get("set_by_pause", 0),
        )
        comparison = [
            {
                "quantity": "transmissions audited (all links, all runs)",
                "ours": total["packets"],
                "published": "—",
            },
            {"quantity": "late (> 1 ns after a work-conserving link)", "ours": total["late"], "published": 0},
            {
                "quantity": "early (before arrival, link free or tokens)",
                "ours": total["early"],
                "published": 0,
            },
            {"quantity": "out of acceptance order", "ours": total["reordered"], "published": 0},
            {
                "quantity": "starts set by the token bucket (tbf run) / by a pause's end (pause run)",
                "ours": f"{exercised[0]} / {exercised[1]}",
                "published": "> 0 / > 0",
            },
        ]
        checks = [
            Check(
                "no late packet on any link of any run",
                f"{total['late']} late of {total['packets']}",
                0,
                total["late"] == 0,
            ),
            Check("no early packet", f"{total['early']} early", 0, total["early"] == 0),
            Check(
                "departures in the order of acceptance",
                f"{total['reordered']} out of order",
                0,
                total["reordered"] == 0,
            ),
            Check(
                "the token-bucket and pause rules were exercised (each set some due starts)",
                f"{exercised[0]} / {exercised[1]}",
                "> 0 / > 0",
                exercised[0] > 0 and exercised[1] > 0,
            ),
            Check(
                "the audit flags the old engine's hold-back on a made-up trace (commit 0c42fbe; "
                "self-check: the audit itself, no run)",
                f"{self_test.late} late, by {self_test.max_late_ns / 1e6:g} ms",
                "1 late, by 12 ms",
                self_test.late == 1 and self_test.max_late_ns == 12_000_000,
                self_check=True,
            ),
        ]
        notes = []
        if total["late"] or total["early"] or total["reordered"]:
            bad = [lk for lk in links if lk["late"] or lk["early"] or lk["reordered"]]
            notes.append(
                "Links that broke the rule (packet id, actual start, due start in ns): "
                + "; ".join(f"{lk['run']} {lk['link']}: {lk['examples']}" for lk in bad[:6])
            )
        return Evaluation(rows, comparison, checks, {"links": links, "histograms": hist}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from .. import plots

        rows = result["points"]
        names = [r["run"] for r in rows]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.0, 5.0))
        bottom = np.zeros(len(rows))
        for rule in audit.RULES:
            vals = np.array([r[f"set_by_{rule}"] for r in rows], dtype=float)
            ax1.bar(names, vals, bottom=bottom, label=f"due start set by {rule}")
            bottom += vals
        for i, r in enumerate(rows):
            bad = r["late"] + r["early"] + r["reordered"]
            ax1.annotate(
                f"{r['late']} late\n{r['early']} early",
                (i, bottom[i]),
                ha="center",
                va="bottom",
                fontsize="small",
                color="red" if bad else "black",
            )
        ax1.set(ylabel="transmissions audited", title=f"{self.id}: audited per run, by binding rule")
        ax1.set_ylim(0, bottom.max() * 1.2 if len(rows) else 1)
        ax1.tick_params(axis="x", rotation=20)
        ax1.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2)
        labels = _HIST_LABELS
        for key, counts in result["data"]["histograms"].items():
            ax2.plot(range(len(labels)), [max(c, 0.5) for c in counts], marker="o", label=key)
        ax2.set_xticks(range(len(labels)), labels, rotation=30, fontsize="small")
        ax2.set(yscale="log", ylabel="transmissions", title="actual − due start")
        ax2.axvline(labels.index("|d| ≤ 1 ns"), color="grey", linestyle=":")
        ax2.grid(alpha=0.3)
        ax2.legend(fontsize="x-small")
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "Left: every transmission of every link, by the rule that set its due start (idle link: "
                "its arrival; busy link: the previous transmission; the token bucket; the end of a "
                "pause), with the late and early counts. Right: distribution of actual − due start "
                "(counts below 1 drawn at 0.5); a work-conserving engine puts everything in |d| ≤ 1 ns.",
            )
        ]


_HIST_EDGES = (-(10**9), -(10**6), -(10**3), -1, 1, 10**3, 10**6, 10**9)
_HIST_LABELS = ["< −1 ms", "−1 ms…−1 µs", "−1 µs…−1 ns", "|d| ≤ 1 ns", "1 ns…1 µs", "1 µs…1 ms", "> 1 ms"]


def _deviation_histogram(dev: np.ndarray) -> list[int]:
    """Counts of actual − due start in the bins of `_HIST_LABELS`."""
    edges = _HIST_EDGES
    return [
        int((dev < edges[1]).sum()),
        int(((dev >= edges[1]) & (dev < edges[2])).sum()),
        int(((dev >= edges[2]) & (dev < edges[3])).sum()),
        int(((dev >= edges[3]) & (dev <= edges[4])).sum()),
        int(((dev > edges[4]) & (dev <= edges[5])).sum()),
        int(((dev > edges[5]) & (dev <= edges[6])).sum()),
        int((dev > edges[6]).sum()),
    ]


# --- tcp-pftk-grid --------------------------------------------------------------------------------
