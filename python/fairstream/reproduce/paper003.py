"""Paper 003 (Hong, Albuquerque, Oliveira, Suda, "The Impact of Emerging Streaming Media
Applications on TCP/IP Performance"): congestion collapse and unfairness without ABR.

Experiments ``collapse`` (Fig. 2), ``unfair-udp`` (Fig. 3), ``unfair-tcp4`` (Fig. 4) and
``parking-lot`` (Fig. 6), run from ``scenarios/papers/003-*.toml``. Each states, in its phase
notes, whether the paper's conclusion holds in the canonical run and in every phase replica
(other seed, link delays perturbed by a fraction of a packet time; see `runner`), from the numbers.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core
from ..results import RunResult
from ..scenario import with_overrides
from ..table import fmt, is_number, span
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published, replica_points
from .measure import delivered_bps, delivered_bytes, link_rate_bps

PAPER = "003"

#: The T1 of topology T-COLLAPSE: its name in the scenario files and its rate, in kbit/s.
T1_LINK = "N1->N2"
T1_KBPS = 1500
#: The UDP flow's last link in the collapse experiment, kbit/s.
UDP_SINK_KBPS = 512

#: Noise tolerance of a TCP share between neighbouring sweep points, as a fraction of T1 (chosen).
NOISE_T1 = 0.03

#: What we read as the paper's "highest ≈ 3 × lowest" in Fig. 4 (chosen): a ratio from 2 to 4.
ABOUT_3 = (2.0, 4.0)

FULL_LOADS = tuple(i / 10 for i in range(11))
QUICK_LOADS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def _flows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["flow"]


def _runs_phrase(replicas: int) -> str:
    return f"the canonical run and its {replicas} phase replica{'s' if replicas != 1 else ''}"


def _holds_sentence(conclusion: str, held: Sequence[bool]) -> str:
    """Whether `conclusion` survives, from whether it held in each run (canonical first)."""
    n, k = len(held), sum(held)
    if k == n:
        return f"The conclusion ({conclusion}) holds in all {n} runs: it survives a change of phase."
    if k == 0:
        return f"The conclusion ({conclusion}) holds in none of the {n} runs."
    where = "the canonical run and " if held[0] else "not in the canonical run, but in "
    return (
        f"The conclusion ({conclusion}) holds in {k} of {n} runs ({where}{k - held[0]} of {n - 1} "
        "replicas): it depends on phase, and one run is not enough to state it."
    )


def _all_checks_pass(ev: Evaluation) -> bool:
    return all(c.passed is not False for c in ev.checks)


def _point_ranges(
    result: Mapping[str, Any], key: str, columns: Sequence[str]
) -> dict[str, tuple[list, list]]:
    """Per column, the min and max over the canonical run and the replicas at each canonical point
    (points matched by `key`), for the figures' spread; empty without replicas."""
    others = replica_points(result)
    if not others:
        return {}
    out = {}
    for col in columns:
        lo, hi = [], []
        for row in result["points"]:
            values = [row[col]] + [r[col] for rows in others for r in rows if r.get(key) == row[key]]
            values = [v for v in values if is_number(v)]
            lo.append(min(values) if values else math.nan)
            hi.append(max(values) if values else math.nan)
        out[col] = (lo, hi)
    return out


@dataclass(frozen=True)
class UdpLoadSweep(Experiment):
    """TCP S1 -> R1 against CBR UDP S2 -> R2 whose rate is swept over fractions of the T1 rate.

    Throughput is the wire bytes delivered to each receiver after the warm-up, normalised to T1.
    """

    published_marks: tuple[tuple[float, float, str], ...] = ()
    tolerance: float = 0.0
    quick_duration: str = "60s"
    warmup_s: float = 20.0
    quick_warmup_s: float = 10.0

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        out = []
        for load in QUICK_LOADS if quick else FULL_LOADS:
            doc = with_overrides(base, {"duration": self.quick_duration} if quick else {})
            if load == 0:
                doc["flow"] = [f for f in _flows(doc) if f["name"] != "udp"]
            else:
                udp = next(f for f in _flows(doc) if f["name"] == "udp")
                udp["rate"] = f"{load * T1_KBPS:g}kbps"
            out.append(Point(f"load-{load:.2f}", {"udp_load": load}, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        warmup = self.quick_warmup_s if quick else self.warmup_s
        rows = []
        for point, run in runs:
            t1 = self.t1_bps(run)
            tcp = delivered_bps(run, "tcp", warmup) / t1
            udp = delivered_bps(run, "udp", warmup) / t1
            drops = next(f["packets_dropped"] for f in run.summary["flows"] if f["name"] == "tcp")
            rows.append(
                {
                    "udp_load": point.params["udp_load"],
                    "tcp": tcp,
                    "udp": udp,
                    "total": tcp + udp,
                    "tcp_drops": drops,
                    **self.extra_columns(run, warmup, t1, tcp),
                }
            )
        comparison, checks = self.judge(rows)
        notes = [*_tcp_loss_notes(rows), *_full_load_notes(rows)]
        return Evaluation(rows, comparison, checks, {"warmup_s": warmup}, notes)

    def t1_bps(self, run: RunResult) -> float:
        """The T1's rate in `run`, checked to be the topology's 1.5 Mbps."""
        t1 = link_rate_bps(run, T1_LINK)
        if t1 != T1_KBPS * 1000:
            raise ValueError(
                f"{self.scenario_file}: {T1_LINK} runs at {t1} bit/s, expected a {T1_KBPS} kbps T1"
            )
        return t1

    def extra_columns(self, run: RunResult, warmup_s: float, t1_bps: float, tcp: float) -> dict[str, Any]:
        """Further columns of a point's row, for experiments that judge more than the three shares."""
        return {}

    @abstractmethod
    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        """The comparison rows and checks; each experiment of the sweep states its own."""

    @abstractmethod
    def conclusion(self) -> str:
        """The paper's conclusion, as the checks judge it, in a few words."""

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        evs = [canonical, *replicas]
        fulls = [_full_load(e.points) for e in evs]
        # The largest difference between runs at any one load: how much the whole curve moves.
        by_load: dict[float, list[float]] = {}
        for e in evs:
            for r in e.points:
                by_load.setdefault(r["udp_load"], []).append(r["tcp"])
        load, shares = max(by_load.items(), key=lambda kv: max(kv[1]) - min(kv[1]))
        return [
            f"Phase sensitivity: over {_runs_phrase(len(replicas))}, at UDP load = T1 TCP gets "
            f"{span([f['tcp'] for f in fulls])} of T1, UDP {span([f['udp'] for f in fulls])} and the "
            f"total {span([f['total'] for f in fulls])}; across the sweep the runs' TCP shares differ "
            f"by at most {fmt(max(shares) - min(shares), 3)} of T1 (at UDP load {load:g}). "
            + _holds_sentence(self.conclusion(), [_all_checks_pass(e) for e in evs])
        ]

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        rows = result["points"]
        columns = {"TCP": "tcp", "UDP": "udp", "total": "total"}
        ranges = _point_ranges(result, "udp_load", list(columns.values()))
        path = plots.load_sweep(
            fig_dir / f"{self.id}.png",
            [r["udp_load"] for r in rows],
            {label: [r[col] for r in rows] for label, col in columns.items()},
            title=f"{self.id}: throughput vs UDP load (paper 003 {self.figure} redrawn)",
            xlabel="UDP offered load (× T1)",
            ylabel="delivered throughput (× T1)",
            published=self.published_marks,
            bands={label: ranges[col] for label, col in columns.items() if col in ranges},
        )
        caption = (
            f"{self.figure} redrawn: delivered throughput of TCP, UDP and both, normalised to the T1 rate, "
            f"against the UDP source's rate; after a {result['data']['warmup_s']:g} s warm-up. "
            "Stars: what the paper's text states at full load."
        )
        if ranges:
            caption += (
                " Lines: the canonical run; shaded: the range over it and its "
                f"{len(replica_points(result))} phase replicas."
            )
        return [Figure(path, caption)]


def _tcp_loss_notes(rows: list[dict[str, Any]]) -> list[str]:
    """Up to which UDP load TCP loses no packet (its 20-packet window alone never fills the
    50-packet queue, so it then takes exactly the capacity UDP leaves), and from which on it does."""
    ordered = sorted(rows, key=lambda r: r["udp_load"])
    lossy = [r for r in ordered if r["tcp_drops"] > 0]
    if not lossy:
        return [
            "TCP, whose 20-packet window alone never fills the 50-packet queue, lost no packet at any load."
        ]
    clean = [r["udp_load"] for r in ordered if r["udp_load"] < lossy[0]["udp_load"]]
    before = (
        f"loses no packet up to UDP load {clean[-1]:g}, taking exactly the capacity UDP leaves; "
        if clean
        else ""
    )
    return [
        f"TCP, whose 20-packet window alone never fills the 50-packet queue, {before}from UDP load "
        f"{lossy[0]['udp_load']:g} on, bursts of the dithered UDP source fill the queue and TCP loses "
        f"packets ({lossy[-1]['tcp_drops']} dropped at UDP load {lossy[-1]['udp_load']:g})."
    ]


def _full_load_notes(rows: list[dict[str, Any]]) -> list[str]:
    """Explains a TCP share that jumps up at exactly full UDP load, when it does."""
    ordered = sorted(rows, key=lambda r: r["udp_load"])
    if len(ordered) < 2 or ordered[-1]["tcp"] <= ordered[-2]["tcp"] + NOISE_T1:
        return []
    return [
        f"At UDP load = T1 exactly, TCP's share jumps up (to {ordered[-1]['tcp']:.3f} of T1). At that load "
        "a jitter-free CBR source keeps the T1 busy back to back, so UDP packets reach N1 at the very "
        "instants the T1 finishes a transmission, and whether UDP or TCP takes the place freed in the "
        "full queue rests on the order of same-instant events (`[engine] ties`), not on the traffic. "
        "The full-load point is then an artefact of exactly equal rates, which send-time jitter in the "
        "CBR source (`random = true`) removes."
    ]


def _full_load(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return max(rows, key=lambda r: r["udp_load"])


def _no_load(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return min(rows, key=lambda r: r["udp_load"])


@dataclass(frozen=True)
class Collapse(UdpLoadSweep):
    """Fig. 2: the UDP flow is dropped downstream at 512 kbps, after it used the T1."""

    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        full, none = _full_load(rows), _no_load(rows)
        cap = UDP_SINK_KBPS / T1_KBPS
        comparison = [
            {"quantity": "TCP with no UDP (× T1)", "ours": none["tcp"], "published": "not stated"},
            {"quantity": "TCP at UDP load = T1 (× T1)", "ours": full["tcp"], "published": "≈ 0"},
            {
                "quantity": "UDP at UDP load = T1 (× T1)",
                "ours": full["udp"],
                "published": f"≈ {cap:.3f} (512 kbps)",
            },
            {"quantity": "total at UDP load = T1 (× T1)", "ours": full["total"], "published": f"≈ {cap:.3f}"},
        ]
        checks = [
            Check("TCP < 10 % of T1 at full UDP load", full["tcp"], "≈ 0", full["tcp"] < 0.10),
            Check(
                "total delivered ≤ 45 % of T1 at full UDP load",
                full["total"],
                f"≈ {cap:.3f}",
                full["total"] <= 0.45,
            ),
        ]
        return comparison, checks

    def conclusion(self) -> str:
        return "at full UDP load TCP gets ≈ 0 (< 10 % of T1) and the total falls to ≤ 45 % of T1"


@dataclass(frozen=True)
class UnfairUdp(UdpLoadSweep):
    """Fig. 3 (simulated T1): one bottleneck; TCP's share falls as UDP's load grows."""

    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        full, none = _full_load(rows), _no_load(rows)
        ordered = sorted(rows, key=lambda r: r["udp_load"])
        rises = [b["tcp"] - a["tcp"] for a, b in zip(ordered, ordered[1:], strict=False)]
        worst = max(rises) if rises else 0.0
        comparison = [
            {
                "quantity": "TCP with no UDP (× T1)",
                "ours": none["tcp"],
                "published": "highest of the three environments",
            },
            {"quantity": "TCP at UDP load = T1 (× T1)", "ours": full["tcp"], "published": "≈ 0"},
            {
                "quantity": "UDP at UDP load = T1 (× T1)",
                "ours": full["udp"],
                "published": "grows linearly with load",
            },
            {
                "quantity": "largest rise of TCP between neighbouring loads (× T1)",
                "ours": worst,
                "published": "none",
            },
        ]
        checks = [
            Check(
                "TCP share falls monotonically within noise: "
                f"each point ≤ previous + {self.tolerance:g} × T1",
                worst,
                "falls to ≈ 0",
                worst <= self.tolerance,
            )
        ]
        return comparison, checks

    def conclusion(self) -> str:
        return f"TCP's share falls as UDP's load grows, within {self.tolerance:g} of T1 between points"


_RATIO_QUANTITY = "highest / lowest bytes delivered"


@dataclass(frozen=True)
class UnfairTcp4(Experiment):
    """Fig. 4: four TCP flows share the T1; report the spread of the bytes they deliver."""

    quick_duration: str = "20s"

    def points(self, quick: bool) -> list[Point]:
        doc = with_overrides(self.base_scenario(), {"duration": self.quick_duration} if quick else {})
        return [Point("run", {}, doc)]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        ((_, run),) = runs
        duration = run.summary["duration_s"]
        names = [f["name"] for f in run.summary["flows"]]
        sent = [delivered_bytes(run, n) for n in names]
        ratio = max(sent) / min(sent) if min(sent) > 0 else math.inf
        jain = _core.jain([float(b) for b in sent])
        rows = [
            {
                "flow": n,
                "bytes_delivered": b,
                "throughput_kbps": b * 8 / duration / 1000,
                "share": b / sum(sent),
            }
            for n, b in zip(names, sent, strict=True)
        ]
        comparison = [
            {"quantity": _RATIO_QUANTITY, "ours": ratio, "published": "≈ 3"},
            {"quantity": "Jain's fairness index (bytes)", "ours": jain, "published": "not stated"},
        ]
        checks = [
            Check("highest / lowest bytes delivered (reported, no threshold)", ratio, "≈ 3", None),
            Check("Jain's fairness index of the bytes (reported, no threshold)", jain, "not stated", None),
        ]
        return Evaluation(rows, comparison, checks, {"max_over_min": ratio, "jain": jain})

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        evs = [canonical, *replicas]
        ratios = [e.data["max_over_min"] for e in evs]
        jains = [e.data["jain"] for e in evs]
        lo, hi = ABOUT_3
        return [
            f"Phase sensitivity: over {_runs_phrase(len(replicas))}, the highest flow delivers "
            f"{span(ratios)} × the lowest (canonical {fmt(ratios[0], 3)}; published ≈ 3) and Jain's "
            f"index is {span(jains)}. Unfairness itself is in every run (the highest flow gets at "
            f"least {fmt(min(ratios), 3)} × the lowest), but by how much depends on phase. "
            + _holds_sentence(
                f"highest ≈ 3 × lowest, read as {lo:g} to {hi:g}, our choice", [lo <= r <= hi for r in ratios]
            )
        ]

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        run = RunResult(exp_dir / result["runs"]["run"])
        path = plots.cumulative_delivered(
            fig_dir / f"{self.id}.png",
            run,
            title=f"{self.id}: four TCP flows on a T1 (paper 003 {self.figure} redrawn)",
        )
        caption = (
            f"{self.figure} redrawn: cumulative wire bytes delivered per TCP flow (canonical run). "
            f"Highest / lowest = {fmt(result['data']['max_over_min'], 3)} (published ≈ 3), "
            f"Jain's index {fmt(result['data']['jain'], 3)}."
        )
        row = next((c for c in result["comparison"] if c["quantity"] == _RATIO_QUANTITY), {})
        ratios = [v for v in (row.get("replicas") or {}).get("values", []) if is_number(v)]
        if ratios:
            caption += f" Over {len(ratios)} phase replicas highest / lowest is {span(ratios)}."
        return [Figure(path, caption)]


@dataclass(frozen=True)
class ParkingLot(Experiment):
    """Fig. 6: window-limited TCP flows; A (two bottlenecks, twice the RTT) gets about half of B."""

    published_mbps: tuple[tuple[str, float], ...] = (("A", 46.0), ("B", 87.0), ("C", 87.0))
    ratio_range: tuple[float, float] = (0.4, 0.7)
    quick_duration: str = "3s"
    warmup_s: float = 1.0

    def points(self, quick: bool) -> list[Point]:
        doc = with_overrides(self.base_scenario(), {"duration": self.quick_duration} if quick else {})
        return [Point("run", {}, doc)]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        ((_, run),) = runs
        rtts = {f["name"]: f.get("mean_rtt_s") for f in run.summary["flows"]}
        ours = {name: delivered_bps(run, name, self.warmup_s) / 1e6 for name, _ in self.published_mbps}
        rows = [
            {
                "flow": name,
                "bottlenecks": 2 if name == "A" else 1,
                "throughput_mbps": ours[name],
                "published_mbps": pub,
                "mean_rtt_ms": rtts[name] * 1000 if rtts.get(name) is not None else None,
            }
            for name, pub in self.published_mbps
        ]
        published = dict(self.published_mbps)
        ratio = ours["A"] / ours["B"] if ours["B"] > 0 else math.inf
        pub_ratio = published["A"] / published["B"]
        lo, hi = self.ratio_range
        comparison = [
            *({"quantity": f"flow {n} (Mbit/s)", "ours": ours[n], "published": published[n]} for n in ours),
            {"quantity": "A / B", "ours": ratio, "published": pub_ratio},
        ]
        checks = [Check(f"A gets {lo:g}–{hi:g} × B's throughput", ratio, pub_ratio, lo <= ratio <= hi)]
        return Evaluation(rows, comparison, checks, {"warmup_s": self.warmup_s, "a_over_b": ratio})

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        evs = [canonical, *replicas]
        rates = {
            name: [next(r["throughput_mbps"] for r in e.points if r["flow"] == name) for e in evs]
            for name, _ in self.published_mbps
        }
        ratios = [e.data["a_over_b"] for e in evs]
        published = dict(self.published_mbps)
        lo, hi = self.ratio_range
        flows = ", ".join(f"{name} {span(values)}" for name, values in rates.items())
        return [
            f"Phase sensitivity: over {_runs_phrase(len(replicas))}, the flows get {flows} Mbit/s and "
            f"A / B is {span(ratios)} (published {fmt(published['A'] / published['B'], 3)}). "
            + _holds_sentence(f"A gets {lo:g}–{hi:g} × B", [lo <= r <= hi for r in ratios])
        ]

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        rows = result["points"]
        ranges = _point_ranges(result, "flow", ["throughput_mbps"]).get("throughput_mbps")
        path = plots.bars_beside_published(
            fig_dir / f"{self.id}.png",
            [r["flow"] for r in rows],
            [r["throughput_mbps"] for r in rows],
            [r["published_mbps"] for r in rows],
            title=f"{self.id}: TCP throughput per flow (paper 003 {self.figure} redrawn)",
            ylabel="throughput (Mbit/s)",
            ranges=ranges,
        )
        caption = (
            f"{self.figure} redrawn: throughput of each flow (wire bytes delivered after a "
            f"{result['data']['warmup_s']:g} s warm-up) beside the published values."
        )
        if ranges:
            caption += (
                " Bars: the canonical run; whiskers: the range over it and its "
                f"{len(replica_points(result))} phase replicas."
            )
        return [Figure(path, caption)]


_COMMON_CHOICES = (
    "Link delays (10 ms), drop-tail queues of 50 packets, 1500-byte packets, TCP Reno with the ns-2 "
    "advertised window of 20 packets, the run length and the warm-up are our choices: the paper gives "
    "none of them. Throughput counts wire bytes (headers included) arriving at each receiver. "
)

COLLAPSE = Collapse(
    id="collapse",
    title="Congestion collapse from undelivered UDP packets",
    paper=PAPER,
    figure="Fig. 2",
    scenario_file="003-collapse.toml",
    what_runs=(
        "Topology T-COLLAPSE: TCP S1→R1 (always has data) and CBR UDP S2→R2 share the 1.5 Mbps T1 "
        "N1–N2; the UDP flow then crosses a 512 kbps link N2–R2. The UDP rate is swept over 0, 0.1, …, 1 "
        "of the T1 rate (quick mode: 0, 0.2, …, 1)."
    ),
    must_hold="TCP < 10 % of T1 at full UDP load; total delivered ≤ 45 % of T1.",
    explanation=(
        _COMMON_CHOICES
        + "The paper's Fig. 2 is described in words, not tabulated, so we compare with what its text "
        "states at full load: TCP near zero and a total that falls to what the 512 kbps link lets "
        "through (512/1500 = 0.341 of T1). Where TCP takes all the capacity UDP leaves on the T1, the "
        "total falls linearly once UDP's load passes 0.341 of T1."
    ),
    published=(
        Published("TCP as UDP load → T1", "≈ 0 (× T1)", "Fig. 2 and text"),
        Published("total delivered as UDP load → T1", "≈ 512/1500 = 0.341 (× T1)", "Fig. 2 and text"),
    ),
    published_marks=(
        (1.0, 0.0, "published: TCP ≈ 0"),
        (1.0, UDP_SINK_KBPS / T1_KBPS, "published: total ≈ 512/1500"),
    ),
)

UNFAIR_UDP = UnfairUdp(
    id="unfair-udp",
    title="Unfairness between TCP and unresponsive UDP on one bottleneck",
    paper=PAPER,
    figure="Fig. 3",
    scenario_file="003-unfair-udp.toml",
    what_runs=(
        "Topology T-COLLAPSE with the single bottleneck N1–N2 (1.5 Mbps T1; the UDP receiver sits behind "
        "a 10 Mbps link). TCP S1→R1 against CBR UDP S2→R2, the UDP rate swept over 0, 0.1, …, 1 of the "
        "T1 rate (quick mode: 0, 0.2, …, 1)."
    ),
    must_hold="TCP's share falls monotonically within noise (each point ≤ the previous + 0.03 × T1).",
    explanation=(
        _COMMON_CHOICES + "We redraw the simulated-T1 curve of Fig. 3 only (the OC-3 and 10Base-T curves are "
        "measurements on real networks). The paper gives the shape, not numbers: TCP highest without "
        "UDP and falling to near zero as the UDP load reaches the link's capacity, UDP growing linearly. "
        "Noise tolerance (chosen): a point may exceed its left neighbour by at most 0.03 of T1."
    ),
    published=(
        Published("TCP as UDP load → capacity", "≈ 0 (× T1)", "Fig. 3 and text"),
        Published("UDP throughput", "grows linearly with its load", "Fig. 3 and text"),
    ),
    published_marks=((1.0, 0.0, "published: TCP ≈ 0"),),
    tolerance=NOISE_T1,
)

UNFAIR_TCP4 = UnfairTcp4(
    id="unfair-tcp4",
    title="Unfairness amongst four TCP flows",
    paper=PAPER,
    figure="Fig. 4",
    scenario_file="003-unfair-tcp4.toml",
    what_runs=(
        "Four TCP flows (always have data, starts drawn from U[0, 1) s) share the 1.5 Mbps T1 for 60 s "
        "(quick mode: 20 s)."
    ),
    must_hold="Report the highest and lowest bytes delivered and Jain's index (no threshold).",
    explanation=(
        _COMMON_CHOICES
        + "The start times (uniform over the first second) are chosen too. The paper shows one run in "
        "which the highest flow sent about three times the lowest; which flow loses, and by how much, "
        "depends on which flows' packets meet the full queue, so the spread in one run need not match "
        "the published one: we report it, with Jain's index and their range over the phase replicas, "
        "and redraw the curves of the canonical run."
    ),
    published=(Published("highest / lowest bytes", "≈ 3", "Fig. 4 and text (ABR section)"),),
)

PARKING_LOT = ParkingLot(
    id="parking-lot",
    title="Unfairness amongst TCP flows with different round-trip times (parking lot)",
    paper=PAPER,
    figure="Fig. 6",
    scenario_file="003-parking-lot.toml",
    what_runs=(
        "Parking lot of 155 Mbps links: flow A crosses both bottlenecks R0–R1 and R1–R2, B only the first, "
        "C only the second; 64 KB TCP windows; A's propagation RTT (12 ms) twice B's and C's (6 ms). "
        "10 s (quick mode: 3 s), throughput after a 1 s warm-up."
    ),
    must_hold="A gets 0.4–0.7 × B's throughput.",
    explanation=(
        "The paper measured this on an ATM OC-3 LAN and gives neither delays nor packet sizes; link delays "
        "(chosen so that A's RTT is exactly twice B's and C's, as the paper states), 1500-byte packets, "
        "TCP Reno, 100-packet drop-tail queues and the run length are our choices. 64 KB = 65536 B is a "
        "window of 44 packets of 1500 B. The flows are window-limited (A and B together need less than "
        "155 Mbps), so each gets about window / RTT: with our 6 ms RTT that is close to the published "
        "87 Mbps, and A, with twice the RTT, about half of it. The paper's ttcp figures count application "
        "bytes over ATM; ours count IP packets on the wire, about 3 % more than TCP payload."
    ),
    published=(
        Published("flow A", "≈ 46 Mbit/s", "Fig. 6 and text"),
        Published("flows B and C", "≈ 87 Mbit/s", "Fig. 6 and text"),
    ),
)

EXPERIMENTS: tuple[Experiment, ...] = (COLLAPSE, UNFAIR_UDP, UNFAIR_TCP4, PARKING_LOT)
