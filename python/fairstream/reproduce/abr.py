"""Paper 003's cure: the ``collapse``, ``unfair-udp`` and ``unfair-tcp4`` experiments again with every
flow carried on an ATM ABR virtual circuit and every switch port running ERICA (Figs. 7-9), each
run beside its plain (drop-tail, no ABR) counterpart on the same topology.

The ABR runs are the plain scenario files with two changes (`with_abr`): every link's queue is an
ERICA port whose FIFO holds 1600 cells (about the 50 packets of 1500 B of the plain runs, chosen),
and every flow rides ABR (``atm = "abr"``) with the published source parameters: PCR 10 Mbps,
ICR = MCR = 56 kbps, one RM cell per 32 cells; the other TM 4.0 parameters and ERICA's are the
defaults of PROTOCOLS.md §7 (U = 0.9, averaging over 1 ms or 100 cells, complete ERICA).

An ABR flow's throughput counts cells (53 bytes, RM cells included): what the links carry for it.
Its goodput (application bytes delivered) is lower by the cell tax: a 1500-byte packet takes 32
cells, 1696 bytes, and one cell in 32 is an RM cell. Both are in the tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..results import RunResult
from ..scenario import copy_doc
from ..table import fmt, span
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published
from .measure import delivered_bytes, link_rate_bps, window_bps
from .paper003 import _COMMON_CHOICES, PAPER, T1_KBPS, UDP_SINK_KBPS, UdpLoadSweep, _full_load

#: The source parameters paper 003 publishes (Section 3.2).
ABR_SOURCE = {"pcr": "10Mbps", "icr": "56kbps", "mcr": "56kbps", "nrm": 32}

#: Every switch port: ERICA with a FIFO of 1600 cells, about 50 packets of 1500 bytes (chosen).
ERICA_PORT = {"kind": "erica", "limit": 1600}

#: The least total the T1 must deliver at every UDP load (EXPERIMENTS.md).
TOTAL_AT_LEAST = 0.90
#: TCP's share against one UDP flow that we read as "large" (chosen; max-min fair is 0.45 of T1).
TCP_LARGE_SHARE = 0.30
#: Jain's index the four TCPs must reach (EXPERIMENTS.md).
JAIN_AT_LEAST = 0.95

_ABR_CHOICES = (
    "ABR: every flow rides an ABR VC (PCR 10 Mbps, ICR = MCR = 56 kbps, one RM cell per 32 cells, as "
    "published; RIF = RDF = 1/16 and the other TM 4.0 parameters at their defaults [paper?]); every "
    "switch port runs complete ERICA (target utilisation 0.9, averaging over 1 ms or 100 cells "
    "[paper?]) on a FIFO of 1600 cells (chosen, about the plain runs' 50 packets). Throughput counts "
    "what the receiver got on the wire: cells (53 bytes, RM cells included) for ABR, packets for "
    "the plain runs; goodput counts application bytes. "
)


def with_abr(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of `doc` with ERICA at every port and every flow on ABR."""
    doc = copy_doc(doc)
    topology = doc["topology"]
    for link in topology.get("link", []):
        link["queue"] = dict(ERICA_PORT)
    for key in ("access", "left_access", "right_access", "bottleneck", "backbone", "link"):
        if isinstance(topology.get(key), dict):
            topology[key]["queue"] = dict(ERICA_PORT)
    for flow in doc["flow"]:
        flow["atm"] = "abr"
        flow["abr"] = dict(ABR_SOURCE)
    return doc


def _beside(quantity: str, ours: Any, plain: Any, published: Any) -> list[dict[str, Any]]:
    """A comparison row on ABR and the same quantity in the plain run, one under the other."""
    return [
        {"quantity": f"{quantity}, on ABR", "ours": ours, "published": published},
        {"quantity": f"{quantity}, without ABR", "ours": plain, "published": "(the plain run)"},
    ]


def _goodput_bps(run: RunResult, flow: str, since_s: float) -> float:
    return window_bps(run, flow, since_s, column="goodput_bytes")


@dataclass(frozen=True)
class AbrLoadSweep(UdpLoadSweep):
    """A paper 003 UDP load sweep run twice per load: on ABR with ERICA, and plain."""

    #: The experiment id of the plain counterpart, named in the tables.
    plain_id: str = ""

    def points(self, quick: bool) -> list[Point]:
        out = []
        for p in super().points(quick):
            out.append(Point(p.key, {**p.params, "abr": True}, with_abr(p.scenario)))
            out.append(Point(f"plain-{p.key}", {**p.params, "abr": False}, p.scenario))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        warmup = self.quick_warmup_s if quick else self.warmup_s
        by_load: dict[float, dict[str, Any]] = {}
        for point, run in runs:
            t1 = self.t1_bps(run)
            row = by_load.setdefault(point.params["udp_load"], {"udp_load": point.params["udp_load"]})
            prefix = "" if point.params["abr"] else "plain_"
            tcp = window_bps(run, "tcp", warmup) / t1
            udp = window_bps(run, "udp", warmup) / t1
            row[f"{prefix}tcp"] = tcp
            row[f"{prefix}udp"] = udp
            row[f"{prefix}total"] = tcp + udp
            good = (_goodput_bps(run, "tcp", warmup) + _goodput_bps(run, "udp", warmup)) / t1
            row[f"{prefix}goodput"] = good
        rows = [by_load[k] for k in sorted(by_load)]
        comparison, checks = self.judge(rows)
        notes = [_cell_tax_note(rows)]
        return Evaluation(rows, comparison, checks, {"warmup_s": warmup}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        rows = result["points"]
        columns = {
            "TCP (ABR)": "tcp",
            "UDP (ABR)": "udp",
            "total (ABR)": "total",
            "TCP (plain)": "plain_tcp",
            "UDP (plain)": "plain_udp",
            "total (plain)": "plain_total",
        }
        path = plots.load_sweep(
            fig_dir / f"{self.id}.png",
            [r["udp_load"] for r in rows],
            {label: [r[col] for r in rows] for label, col in columns.items()},
            title=f"{self.id}: throughput vs UDP load on ABR with ERICA (paper 003 {self.figure} redrawn)",
            xlabel="UDP offered load (× T1)",
            ylabel="delivered throughput (× T1)",
            published=self.published_marks,
            dashed=[label for label in columns if "plain" in label],
        )
        caption = (
            f"{self.figure} redrawn: TCP, UDP and total throughput on ABR with ERICA (cells delivered, "
            f"normalised to the T1 rate) beside the same sweep without ABR (`{self.plain_id}`, drop-tail, "
            f"packets), after a {result['data']['warmup_s']:g} s warm-up."
        )
        return [Figure(path, caption)]


def _cell_tax_note(rows: Sequence[dict[str, Any]]) -> str:
    full = _full_load(rows)
    return (
        f"At UDP load = T1 the ABR flows deliver {fmt(full['total'], 3)} of T1 in cells and "
        f"{fmt(full['goodput'], 3)} in application bytes (without ABR: {fmt(full['plain_total'], 3)} "
        f"and {fmt(full['plain_goodput'], 3)}). The difference is the cell tax (a 1500-byte packet "
        "travels as 32 cells, 1696 bytes: 88 %), the RM cells (1 in 32) and ERICA's target "
        "utilisation (0.9): together they cap goodput near 0.77 of a link that ABR keeps busy."
    )


@dataclass(frozen=True)
class AbrCollapse(AbrLoadSweep):
    """Fig. 7: ERICA holds UDP to what the 512 kbps link carries; TCP gets the rest of the T1."""

    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        full = _full_load(rows)
        cap = UDP_SINK_KBPS / T1_KBPS
        lowest_total = min(rows, key=lambda r: r["total"])
        highest_udp = max(r["udp"] for r in rows)
        comparison = [
            *_beside(
                "TCP at UDP load = T1 (× T1)", full["tcp"], full["plain_tcp"], "the rest of the T1 (≈ 1 Mbps)"
            ),
            *_beside(
                "UDP at UDP load = T1 (× T1)", full["udp"], full["plain_udp"], f"≤ {cap:.3f} (512 kbps)"
            ),
            *_beside("total at UDP load = T1 (× T1)", full["total"], full["plain_total"], "constant"),
            *_beside(
                "lowest total over the sweep (× T1)",
                lowest_total["total"],
                min(r["plain_total"] for r in rows),
                "constant",
            ),
        ]
        checks = [
            Check(
                f"total delivered ≥ {TOTAL_AT_LEAST:g} × T1 at every UDP load",
                lowest_total["total"],
                "constant",
                lowest_total["total"] >= TOTAL_AT_LEAST,
            ),
            Check(
                "UDP held to what the 512 kbps link carries at every load",
                highest_udp,
                f"≤ {cap:.3f}",
                highest_udp <= cap,
            ),
        ]
        return comparison, checks

    def conclusion(self) -> str:
        return f"UDP is held to 512 kbps and the total stays ≥ {TOTAL_AT_LEAST:g} of T1 at every load"


@dataclass(frozen=True)
class AbrUnfairUdp(AbrLoadSweep):
    """Fig. 8: on one T1, TCP keeps a large share against UDP at every load."""

    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        full = _full_load(rows)
        loaded = [r for r in rows if r["udp_load"] >= 0.5 - 1e-9]
        worst = min(r["tcp"] for r in loaded)
        comparison = [
            *_beside(
                "TCP at UDP load = T1 (× T1)",
                full["tcp"],
                full["plain_tcp"],
                "a large share (less than max-min's half)",
            ),
            *_beside("UDP at UDP load = T1 (× T1)", full["udp"], full["plain_udp"], "—"),
            *_beside("total at UDP load = T1 (× T1)", full["total"], full["plain_total"], "—"),
        ]
        checks = [
            Check(
                f"TCP keeps ≥ {TCP_LARGE_SHARE:g} × T1 at every UDP load ≥ 0.5 × T1",
                worst,
                "a large share",
                worst >= TCP_LARGE_SHARE,
            )
        ]
        return comparison, checks

    def conclusion(self) -> str:
        return f"TCP keeps at least {TCP_LARGE_SHARE:g} of T1 against UDP at every load from 0.5"


@dataclass(frozen=True)
class AbrTcp4(Experiment):
    """Fig. 9: four TCP flows on ABR VCs share the T1 equally."""

    quick_duration: str = "20s"

    def points(self, quick: bool) -> list[Point]:
        from ..scenario import with_overrides

        doc = with_overrides(self.base_scenario(), {"duration": self.quick_duration} if quick else {})
        return [Point("run", {"abr": True}, with_abr(doc)), Point("plain", {"abr": False}, doc)]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows, data = [], {}
        for point, run in runs:
            names = [f["name"] for f in run.summary["flows"]]
            sent = [delivered_bytes(run, n) for n in names]
            prefix = "" if point.params["abr"] else "plain_"
            data[f"{prefix}jain"] = _core.jain([float(b) for b in sent])
            data[f"{prefix}max_over_min"] = max(sent) / min(sent) if min(sent) > 0 else math.inf
            if point.params["abr"]:
                duration = run.summary["duration_s"]
                rows = [
                    {"flow": n, "bytes_delivered": b, "throughput_kbps": b * 8 / duration / 1000}
                    for n, b in zip(names, sent, strict=True)
                ]
        comparison = [
            *_beside("Jain's fairness index (bytes)", data["jain"], data["plain_jain"], "4 flows equal"),
            *_beside(
                "highest / lowest bytes delivered", data["max_over_min"], data["plain_max_over_min"], "≈ 1"
            ),
        ]
        checks = [
            Check(
                f"Jain's index of the four TCPs ≥ {JAIN_AT_LEAST:g}",
                data["jain"],
                "4 flows equal",
                data["jain"] >= JAIN_AT_LEAST,
            )
        ]
        return Evaluation(rows, comparison, checks, data)

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        evs = [canonical, *replicas]
        jains = [e.data["jain"] for e in evs]
        plain = [e.data["plain_jain"] for e in evs]
        return [
            f"Phase sensitivity: over the canonical run and {len(replicas)} phase replicas Jain's index is "
            f"{span(jains)} on ABR and {span(plain)} without it."
        ]

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        run = RunResult(exp_dir / result["runs"]["run"])
        path = plots.cumulative_delivered(
            fig_dir / f"{self.id}.png",
            run,
            title=f"{self.id}: four TCP flows on ABR VCs (paper 003 {self.figure} redrawn)",
        )
        caption = (
            f"{self.figure} redrawn: cumulative bytes (cells) delivered per TCP flow on ABR with ERICA. "
            f"Jain's index {fmt(result['data']['jain'], 3)} "
            f"(without ABR {fmt(result['data']['plain_jain'], 3)})."
        )
        return [Figure(path, caption)]


ABR_COLLAPSE = AbrCollapse(
    id="abr-collapse",
    title="ATM ABR with ERICA cures congestion collapse",
    paper=PAPER,
    figure="Fig. 7",
    scenario_file="003-collapse.toml",
    what_runs=(
        "`collapse` (TCP S1→R1 and CBR UDP S2→R2 over the 1.5 Mbps T1, UDP then through 512 kbps) with both "
        "flows on ABR VCs and ERICA at every port, beside the same sweep without ABR; UDP rate swept over "
        "0, 0.1, …, 1 of the T1 rate (quick mode: 0, 0.2, …, 1)."
    ),
    must_hold=f"Total delivered ≥ {TOTAL_AT_LEAST:g} × T1 at every UDP load; UDP ≤ 512 kbps.",
    explanation=(
        _COMMON_CHOICES
        + _ABR_CHOICES
        + "ERICA at N2's port to R2 gives the UDP VC at most 0.9 × 512 kbps; that explicit rate reaches "
        "the UDP source in the backward RM cells, so the surplus is discarded at the source, before it "
        "uses the T1, and N1's port gives TCP the rest of the T1."
    ),
    published=(
        Published("UDP", "held to 512 kbps as its load grows", "Fig. 7 and text"),
        Published("total over the T1", "constant, whatever the UDP load", "Fig. 7 and text"),
    ),
    published_marks=((1.0, UDP_SINK_KBPS / T1_KBPS, "512 kbps"),),
    plain_id="collapse",
)

ABR_UNFAIR_UDP = AbrUnfairUdp(
    id="abr-unfair-udp",
    title="ATM ABR with ERICA: TCP keeps its share against UDP",
    paper=PAPER,
    figure="Fig. 8",
    scenario_file="003-unfair-udp.toml",
    what_runs=(
        "`unfair-udp` (TCP against CBR UDP on one 1.5 Mbps T1) with both flows on ABR VCs and ERICA at every "
        "port, beside the same sweep without ABR; UDP rate swept over 0, 0.1, …, 1 of the T1 rate."
    ),
    must_hold=(
        f"TCP keeps ≥ {TCP_LARGE_SHARE:g} × T1 at every UDP load ≥ 0.5 (our reading of 'a large share')."
    ),
    explanation=(
        _COMMON_CHOICES
        + _ABR_CHOICES
        + "The paper finds TCP's share large but below max-min's half, because TCP slows after losses and "
        "UDP does not. Here ERICA gives each VC its fair share of the T1 and TCP's VC, whose buffer its "
        "window keeps filled, uses all of its share: the allocation comes out max-min fair (see the table), "
        "fairer than the paper's."
    ),
    published=(Published("TCP against UDP", "a large share, below max-min's half", "Fig. 8 and text"),),
    plain_id="unfair-udp",
)

ABR_TCP4 = AbrTcp4(
    id="abr-tcp4",
    title="ATM ABR with ERICA: four TCP flows share a T1 equally",
    paper=PAPER,
    figure="Fig. 9",
    scenario_file="003-unfair-tcp4.toml",
    what_runs=(
        "`unfair-tcp4` (four TCP flows on the 1.5 Mbps T1 for 60 s; quick mode 20 s) with every flow on an "
        "ABR VC and ERICA at every port, beside the same run without ABR."
    ),
    must_hold=f"Jain's index of the four flows' bytes ≥ {JAIN_AT_LEAST:g}.",
    explanation=_COMMON_CHOICES + _ABR_CHOICES,
    published=(Published("four TCPs", "transmit the same amount of data", "Fig. 9 and text"),),
)

#: The parking lot of ``validation-abr-maxmin.toml``: each flow's backbone links (r0->r1 = 0,
#: r1->r2 = 1), and when each sends.
MAXMIN_PATHS = {"A": [0, 1], "B": [0], "C": [1], "D": [1]}
MAXMIN_LINKS = ("r0->r1", "r1->r2")
MAXMIN_PHASES = ((0.0, 10.0, "ABC"), (10.0, 20.0, "ABCD"), (20.0, 30.0, "ABD"))
#: ERICA's target utilisation and the sources' PCR in that scenario.
MAXMIN_U = 0.9
MAXMIN_PCR = 10e6
#: The end of each phase over which the mean ACR is taken, s (chosen).
MAXMIN_TAIL_S = 2.0


def _acr_records(run: RunResult, flow: str) -> tuple[list[float], list[float]]:
    import polars as pl

    m = run.metrics.filter((pl.col("flow") == flow) & (pl.col("metric") == "acr")).sort("t")
    return m["t"].to_list(), m["value"].to_list()


def _mean_step(t: list[float], v: list[float], start: float, end: float) -> float:
    """Time-weighted mean over [start, end) of the step function that takes v[i] at t[i]."""
    before = [x for x, at in zip(v, t, strict=True) if at <= start]
    rate, last, area = (before[-1] if before else 0.0), start, 0.0
    for at, x in zip(t, v, strict=True):
        if start < at < end:
            area += rate * (at - last)
            rate, last = x, at
    return (area + rate * (end - last)) / (end - start)


@dataclass(frozen=True)
class AbrMaxMin(Experiment):
    """ERICA's allocation against the max-min fair rates of a two-bottleneck parking lot."""

    def points(self, quick: bool) -> list[Point]:
        return [Point("run", {}, self.base_scenario())]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        import polars as pl

        ((_, run),) = runs
        capacity = [MAXMIN_U * link_rate_bps(run, name) for name in MAXMIN_LINKS]
        rows = []
        for start, end, active in MAXMIN_PHASES:
            flows = list(active)
            fair = _core.max_min_rates(capacity, [MAXMIN_PATHS[f] for f in flows], [MAXMIN_PCR] * len(flows))
            for flow, rate in zip(flows, fair, strict=True):
                t, v = _acr_records(run, flow)
                mean = _mean_step(t, v, end - MAXMIN_TAIL_S, end)
                rows.append(
                    {
                        "phase_s": f"{start:g}–{end:g}",
                        "flow": flow,
                        "max_min_mbps": rate / 1e6,
                        "mean_acr_mbps": mean / 1e6,
                        "error": mean / rate - 1.0,
                    }
                )
        worst = max(rows, key=lambda r: abs(r["error"]))
        utils = {}
        for name in MAXMIN_LINKS:
            s = run.link_series.filter(pl.col("link") == name)
            utils[name] = [
                float(
                    s.filter((pl.col("t_start") >= end - 5.0 - 1e-9) & (pl.col("t_end") <= end + 1e-9))[
                        "utilisation"
                    ].mean()
                )
                for _, end, _ in MAXMIN_PHASES
            ]
        comparison = [
            {
                "quantity": "largest |mean ACR / max-min − 1| (any VC, any phase)",
                "ours": abs(worst["error"]),
                "published": "≤ 0.10",
            },
            *(
                {
                    "quantity": f"{name} utilisation, last 5 s of each phase",
                    "ours": ", ".join(fmt(u, 3) for u in us),
                    "published": f"→ U = {MAXMIN_U:g}",
                }
                for name, us in utils.items()
            ),
        ]
        all_utils = [u for us in utils.values() for u in us]
        checks = [
            Check(
                "every VC's mean ACR (last 2 s of each phase) within 10 % of its max-min rate",
                abs(worst["error"]),
                "≤ 0.10",
                abs(worst["error"]) <= 0.10,
            ),
            Check(
                f"both bottlenecks within 0.05 of the target utilisation {MAXMIN_U:g}",
                max(abs(u - MAXMIN_U) for u in all_utils),
                "≤ 0.05",
                max(abs(u - MAXMIN_U) for u in all_utils) <= 0.05,
            ),
        ]
        return Evaluation(rows, comparison, checks, {"utilisation": utils})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        run = RunResult(exp_dir / result["runs"]["run"])
        fig, ax = plots.plt.subplots(figsize=(7.6, 4.0))
        for i, flow in enumerate(MAXMIN_PATHS):
            t, v = _acr_records(run, flow)
            ax.step(t, [x / 1e6 for x in v], where="post", color=f"C{i}", linewidth=0.8, label=f"{flow}: ACR")
            fair = [(r["phase_s"], r["max_min_mbps"]) for r in result["points"] if r["flow"] == flow]
            for phase, rate in fair:
                lo, hi = (float(x) for x in phase.split("–"))
                ax.hlines(rate, lo, hi, colors=f"C{i}", linestyles="--", linewidth=1.2)
        ax.set(
            title=f"{self.id}: ACR of each VC and its max-min fair rate (dashed)",
            xlabel="time (s)",
            ylabel="allowed cell rate (Mbit/s)",
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        caption = (
            "Allowed cell rate of each VC over time (steps at each backward RM cell) and its max-min fair "
            "rate "
            "(dashed), computed by progressive filling over 0.9 × each backbone link. D joins at 10 s; C's "
            "application stops at 20 s and its VC falls quiet once its source buffer has drained."
        )
        return [Figure(path, caption)]


ABR_MAXMIN = AbrMaxMin(
    id="abr-maxmin",
    title="ERICA converges to max-min fair rates",
    paper="validation",
    figure="—",
    scenario_file="validation-abr-maxmin.toml",
    what_runs=(
        "A parking lot r0 → r1 → r2 with backbone links of 10 and 4 Mbps and ERICA at every port; persistent "
        "sources on ABR VCs (PCR 10 Mbps, ICR = MCR = 56 kbps): A over both links, B over the first, C and D "
        "over the second; D starts at 10 s, C stops at 20 s; 30 s."
    ),
    must_hold=(
        "Every VC's ACR, averaged over the last 2 s of each phase, within 10 % of its max-min fair rate; "
        "both "
        "bottlenecks within 0.05 of ERICA's target utilisation 0.9."
    ),
    explanation=(
        "The max-min fair rates come from progressive filling (fairstream_metrics::fairness::max_min_rates), "
        "which knows nothing of ERICA, over the ports' targets (0.9 × link rate) and the PCR. "
        "crates/scenario/tests/abr_maxmin.rs checks the same run more closely: when each VC comes within "
        "10 % and that it stays there (docs/VALIDATION.md has its figures)."
    ),
    published=(Published("ERICA", "converges to max-min fairness (Jain et al., ATM Forum/96-1172)", "—"),),
)

EXPERIMENTS: tuple[Experiment, ...] = (ABR_COLLAPSE, ABR_UNFAIR_UDP, ABR_TCP4, ABR_MAXMIN)
