"""Validation of the simulation engine itself: checks that would have caught the bugs fixed in
commit 7894a83 (a queue that waited beside an idle transmitter; same-instant ties that always went
to the same flow), and a wide check of TCP against the PFTK model (docs/VALIDATION.md).

Experiments, run from ``scenarios/papers/validation-*.toml``:

- ``fifo-audit``: replays the packet trace of busy runs (drop-tail, RED, token bucket, a paused
  link) and recomputes every transmission's due start (`audit`); no packet may leave late.
- ``tcp-pftk-grid``: Reno and NewReno under Bernoulli loss on a 5 × 5 grid of loss rate and RTT,
  each run long enough for over 1000 loss events, against the full PFTK model at the run's own
  loss-event rate, RTT and timeout.
- ``rtt-bias``: four NewReno flows with base RTTs 20/40/80/160 ms through a drop-tail or RED
  bottleneck; the exponent a of throughput ∝ RTT^−a over seeds, delay perturbations and tie rules.
- ``tie-neutrality``: flows whose packets reach a queue in the same nanosecond; under random ties no
  flow gains systematically, under fifo ties one does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .. import _core
from ..results import RunResult
from ..scenario import packaged, with_overrides
from . import audit
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published

PAPER = "validation"


def _link(doc: dict[str, Any], src: str, dst: str) -> dict[str, Any]:
    """The explicit link table from `src` to `dst` of a scenario dict."""
    for link in doc["topology"]["link"]:
        if link.get("from") == src and link.get("to") == dst:
            return link
    raise KeyError(f"scenario {doc.get('name')!r} has no link {src}->{dst}")


def _float(value: Any) -> float:
    return float(value) if value is not None else math.nan


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
                "the audit flags the old engine's hold-back on a made-up trace (commit 0c42fbe)",
                f"{self_test.late} late, by {self_test.max_late_ns / 1e6:g} ms",
                "1 late, by 12 ms",
                self_test.late == 1 and self_test.max_late_ns == 12_000_000,
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

        from . import plots

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


def loss_events(times_s: Sequence[float], rtt_s: float) -> int:
    """Losses grouped into loss events the TFRC way (RFC 5348 §5.2): a loss more than one RTT after
    the first loss of the current event starts a new event."""
    events, start = 0, -math.inf
    for t in sorted(times_s):
        if t > start + rtt_s:
            events += 1
            start = t
    return events


def pftk_expected_window(p: float, b: float = 1.0) -> float:
    """E[W] of the PFTK model (Padhye et al. 1998, eq. 13): the window at the end of a period."""
    q = 1.0 - p
    c = (2.0 + b) / (3.0 * b)
    return c + math.sqrt(8.0 * q / (3.0 * b * p) + c * c)


def pftk_timeout_probability(p: float, w: float) -> float:
    """Q(w) of the PFTK model (eq. 24): the probability that a loss indication in a window of `w`
    packets is a timeout, under the model's assumption that once a packet is lost the rest of its
    round is lost too."""
    q = 1.0 - p
    num = (1.0 - q**3) * (1.0 + q**3 * (1.0 - q ** (w - 3.0)))
    den = 1.0 - q**w
    return 1.0 if den <= 0 else min(1.0, num / den)


def pftk_pps(
    p: float, rtt_s: float, t0_s: float, wmax: float, b: float = 1.0, timeout_share: float | None = None
) -> float:
    """The full PFTK send rate, packets/s, as `fairstream._core.padhye` computes it (eq. 33 of the
    ToN paper, with the window limit); `timeout_share` replaces the model's Q(E[W]) (or Q(Wmax))
    by a measured share of timeouts, to separate the model's timeout term from the rest."""
    if p <= 0:
        return math.inf
    p = min(p, 1.0)
    q = 1.0 - p
    ew = pftk_expected_window(p, b)
    f = 1.0 + sum(2.0 ** (k - 1) * p**k for k in range(1, 7))  # 1 + p + 2p² + … + 32p⁶: the backoff
    if ew < wmax:
        qw = pftk_timeout_probability(p, ew) if timeout_share is None else timeout_share
        return (q / p + ew + qw / q) / (rtt_s * (b / 2.0 * ew + 1.0) + qw * t0_s * f / q)
    qw = pftk_timeout_probability(p, wmax) if timeout_share is None else timeout_share
    return (q / p + wmax + qw / q) / (rtt_s * (b / 8.0 * wmax + q / (p * wmax) + 2.0) + qw * t0_s * f / q)


@dataclass(frozen=True)
class LossIndications:
    """What the sender's metric records say about its losses."""

    fast_retransmits: int
    timeouts: int
    #: Timeout sequences: a timeout after which cwnd grew (a new ACK) before the next one ends
    #: its sequence; backed-off timeouts of one sequence count once (as PFTK counts them).
    sequences: int
    #: Mean RTO in force when the first timeout of a sequence fired, s (NaN without timeouts).
    first_rto_s: float
    #: Mean cwnd just before each fast retransmit (packets).
    window_at_fr: float


def loss_indications(metrics: pl.DataFrame) -> LossIndications:
    """Fast retransmits, timeouts, timeout sequences, the RTO of first timeouts and the window at
    fast retransmit, from a flow's metric records (in time order)."""
    rows = metrics.filter(pl.col("metric").is_in(["timeout", "fast_retransmit", "cwnd", "rto"]))
    rows = rows.with_row_index("i").sort("t", "i")
    fr = to = seqs = 0
    in_sequence = False
    cwnd, rto = math.nan, math.nan
    first_rtos, windows = [], []
    for metric, value in zip(rows["metric"].to_list(), rows["value"].to_list(), strict=True):
        if metric == "cwnd":
            if value > 1.0:
                in_sequence = False
            cwnd = value
        elif metric == "rto":
            rto = value
        elif metric == "fast_retransmit":
            fr += 1
            windows.append(cwnd)
            in_sequence = False
        elif metric == "timeout":
            to += 1
            if not in_sequence:
                seqs += 1
                first_rtos.append(rto)
            in_sequence = True
    return LossIndications(
        fr,
        to,
        seqs,
        float(np.mean(first_rtos)) if first_rtos else math.nan,
        float(np.nanmean(windows)) if windows else math.nan,
    )


#: The PFTK grid: Bernoulli packet error rates and round-trip times (s).
PFTK_P = (0.001, 0.00316, 0.01, 0.0316, 0.1)
PFTK_RTT = (0.02, 0.05, 0.1, 0.2, 0.3)
PFTK_QUICK_P = (0.003, 0.01)
PFTK_QUICK_RTT = (0.05, 0.2)
#: Diagnostic runs (full mode only, not in the verdict): NewReno without limited transmit.
PFTK_DIAGNOSTIC = tuple((p, rtt) for p in (0.0316, 0.1) for rtt in (0.02, 0.3))
TRACE_FILE = "packets.parquet"
LOSSES_FILE = "losses.parquet"


def planned_duration_s(p: float, rtt_s: float, events: int, safety: float = 1.25) -> float:
    """Simulated seconds for about `events` loss events at error rate `p` and RTT `rtt_s`.

    Losses less than a window apart merge into one event, so the events per packet are estimated
    as p / (1 + p·E[W]/2); the packet rate is PFTK's at that rate (timeout max(200 ms, RTT + 50 ms));
    `safety` covers the model overestimating the rate. A run's own count is checked afterwards.
    """
    pe = p / (1.0 + p * pftk_expected_window(p) / 2.0)
    rate = _core.padhye(1.0, rtt_s, pe, max(0.2, rtt_s + 0.05), 1e9, 1.0)
    return 5.0 + safety * events / (pe * rate)


def data_losses(run: RunResult) -> pl.DataFrame:
    """The data-direction losses (``e`` and ``d`` rows) of a run's packet trace, as t_ns and flow_id.

    The first call writes them to ``losses.parquet`` in the run directory and removes the full
    trace (tens of MB per run, over a GB for the grid); later calls read that file.
    """
    losses = run.output_dir / LOSSES_FILE
    trace = run.output_dir / TRACE_FILE
    if trace.is_file():
        rows = (
            pl.scan_parquet(trace)
            .filter(pl.col("event").is_in(["e", "d"]) & ~pl.col("reverse"))
            .select("t_ns", "flow_id", "event", "link_id")
            .collect()
        )
        rows.write_parquet(losses)
        trace.unlink()
        return rows
    return pl.read_parquet(losses)


@dataclass(frozen=True)
class TcpPftkGrid(Experiment):
    """One Reno or NewReno flow on a path that is never the bottleneck, under Bernoulli loss, against
    the full PFTK model at the run's measured loss-event rate, RTT and timeout."""

    events: int = 1200
    quick_events: int = 150
    min_events: int = 1000
    quick_min_events: int = 100
    #: Variant -> the largest |send rate / PFTK − 1| allowed at any point.
    tolerances: tuple[tuple[str, float], ...] = (("newreno", 0.15), ("reno", 0.25))

    @property
    def tolerance(self) -> dict[str, float]:
        return dict(self.tolerances)

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        grid = [
            (p, rtt)
            for rtt in (PFTK_QUICK_RTT if quick else PFTK_RTT)
            for p in (PFTK_QUICK_P if quick else PFTK_P)
        ]
        target = self.quick_events if quick else self.events
        out = []
        for variant in ("newreno", "reno"):
            for p, rtt in grid:
                out.append(self._point(base, variant, p, rtt, target, {}))
        if not quick:
            for p, rtt in PFTK_DIAGNOSTIC:
                out.append(self._point(base, "newreno", p, rtt, target, {"limited_transmit": False}))
        return out

    def _point(
        self, base: dict[str, Any], variant: str, p: float, rtt: float, events: int, tcp: dict[str, Any]
    ) -> Point:
        doc = with_overrides(base, {"duration": f"{planned_duration_s(p, rtt, events):.0f}s"})
        for src, dst in (("a", "b"), ("b", "a")):
            _link(doc, src, dst)["delay"] = f"{rtt * 500:g}ms"
        _link(doc, "a", "b")["loss"] = {"kind": "bernoulli", "per": p}
        doc["flow"][0].update({"variant": variant, **tcp})
        tag = "-nolt" if tcp.get("limited_transmit") is False else ""
        key = f"{variant}{tag}-rtt{rtt * 1000:g}ms-p{p:g}"
        return Point(key, {"variant": variant + tag, "rtt_s": rtt, "per": p}, doc)

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = [self._measure(point, run) for point, run in runs]
        grid = [r for r in rows if r["variant"] in self.tolerance]
        minimum = self.quick_min_events if quick else self.min_events
        fewest = min(r["loss_events"] for r in grid)
        comparison, checks, tables = [], [], {}
        for variant, tol in self.tolerance.items():
            mine = [r for r in grid if r["variant"] == variant]
            worst = max(mine, key=lambda r: abs(r["ratio"] - 1))
            outside = [r for r in mine if abs(r["ratio"] - 1) > tol]
            tables[variant] = _ratio_table(mine, "ratio")
            tables[f"{variant} (goodput)"] = _ratio_table(mine, "goodput_ratio")
            tables[f"{variant} (p = loss indications)"] = _ratio_table(mine, "ratio_indications")
            tables[f"{variant} (measured timeout share as Q)"] = _ratio_table(mine, "ratio_measured_q")
            checks.append(
                Check(
                    f"{variant}: send rate / PFTK within ±{tol:.0%} at every point",
                    f"worst {worst['ratio']:.3f} (RTT {worst['rtt_s'] * 1000:g} ms, p {worst['per']:g}); "
                    f"{len(outside)} of {len(mine)} outside",
                    f"1 ± {tol:g}",
                    not outside,
                )
            )
            ratios = [r["ratio"] for r in mine]
            comparison += [
                {
                    "quantity": f"{variant}: send rate / PFTK, range over the grid",
                    "ours": f"{min(ratios):.3f} – {max(ratios):.3f}",
                    "published": f"1 ± {tol:g}",
                },
                {
                    "quantity": f"{variant}: points within ±{tol:.0%}",
                    "ours": f"{len(mine) - len(outside)} of {len(mine)}",
                    "published": f"{len(mine)} of {len(mine)}",
                },
                {
                    "quantity": f"{variant}: goodput / PFTK, range",
                    "ours": _range(r["goodput_ratio"] for r in mine),
                    "published": "below send rate / PFTK by about the loss rate",
                },
                {
                    "quantity": f"{variant}: send rate / PFTK with the measured timeout share as Q, range",
                    "ours": _range(r["ratio_measured_q"] for r in mine),
                    "published": "(diagnostic)",
                },
                {
                    "quantity": f"{variant}: send rate / PFTK at p = loss indications, range",
                    "ours": f"{min(r['ratio_indications'] for r in mine):.3f} – "
                    f"{max(r['ratio_indications'] for r in mine):.3f}",
                    "published": "(reported)",
                },
            ]
        checks.append(
            Check(
                f"every grid run saw at least {minimum} loss events",
                fewest,
                f"≥ {minimum}",
                fewest >= minimum,
            )
        )
        diag = [r for r in rows if r["variant"] not in self.tolerance]
        for r in diag:
            comparison.append(
                {
                    "quantity": f"diagnostic {r['variant']} RTT {r['rtt_s'] * 1000:g} ms p {r['per']:g}: "
                    "send rate / PFTK (timeout share)",
                    "ours": f"{r['ratio']:.3f} ({r['timeout_share']:.2f})",
                    "published": "not in the verdict",
                }
            )
        return Evaluation(rows, comparison, checks, {"tables": tables}, self._notes(rows))

    def _measure(self, point: Point, run: RunResult) -> dict[str, Any]:
        flow = run.summary["flows"][0]
        duration = run.summary["duration_s"]
        metrics = run.metrics.filter(pl.col("flow_id") == flow["flow_id"])
        rtt = float(metrics.filter(pl.col("metric") == "rtt")["value"].mean())
        losses = data_losses(run).filter(pl.col("flow_id") == flow["flow_id"])
        events = loss_events((losses["t_ns"].to_numpy() / 1e9).tolist(), rtt)
        ind = loss_indications(metrics)
        sent = flow["packets_sent"]
        tcp = point.scenario["flow"][0]
        segment = audit.parse_size(tcp.get("packet_size", "1040B")) - 40
        b = 2.0 if tcp.get("delayed_ack") else 1.0
        wmax = float(tcp.get("window", 20))
        t0 = ind.first_rto_s
        if math.isnan(t0):  # no timeout at all: the RTO the sender had
            t0 = float(metrics.filter(pl.col("metric") == "rto")["value"].mean())
        p_e = events / sent
        p_ind = (ind.fast_retransmits + ind.sequences) / sent
        send_rate = sent / duration
        goodput = flow["goodput_bytes"] / segment / duration
        model = _core.padhye(1.0, rtt, p_e, t0, wmax, b)
        model_ind = _core.padhye(1.0, rtt, p_ind, t0, wmax, b)
        ew = pftk_expected_window(p_e, b)
        indications = ind.fast_retransmits + ind.sequences
        share = ind.sequences / indications if indications else math.nan
        return {
            "variant": point.params["variant"],
            "rtt_s": point.params["rtt_s"],
            "per": point.params["per"],
            "duration_s": duration,
            "packets_sent": sent,
            "losses": losses.height,
            "loss_events": events,
            "fast_retransmits": ind.fast_retransmits,
            "timeouts": ind.timeouts,
            "timeout_sequences": ind.sequences,
            "p_events": p_e,
            "p_indications": p_ind,
            "rtt_mean_s": rtt,
            "t0_s": t0,
            "send_pps": send_rate,
            "goodput_pps": goodput,
            "pftk_pps": model,
            "ratio": send_rate / model,
            "goodput_ratio": goodput / model,
            "ratio_indications": send_rate / model_ind,
            "ratio_measured_q": send_rate / pftk_pps(p_e, rtt, t0, wmax, b, share),
            "timeout_share": share,
            "pftk_timeout_share": pftk_timeout_probability(p_e, ew),
            "window_at_fr": ind.window_at_fr,
            "pftk_window": ew,
        }

    def _notes(self, rows: list[dict[str, Any]]) -> list[str]:
        grid = [r for r in rows if r["variant"] in self.tolerance]
        if not grid:
            return []
        share = [r["timeout_share"] / r["pftk_timeout_share"] for r in grid if r["pftk_timeout_share"] > 0]
        wins = [r["window_at_fr"] / r["pftk_window"] for r in grid]
        notes = [
            f"Diagnostics over the grid: the measured share of timeouts among loss indications is "
            f"{min(share):.2f}–{max(share):.2f} of PFTK's Q(E[W]) (the model assumes that the rest of a "
            f"round is lost after a loss; Bernoulli losses are independent), and the mean window at a "
            f"fast retransmit is {min(wins):.2f}–{max(wins):.2f} of the model's E[W]. With the measured "
            f"timeout share in place of Q, send rate / model spans "
            f"{_range(r['ratio_measured_q'] for r in grid)} over the grid."
        ]
        diag = [r for r in rows if r["variant"] not in self.tolerance]
        if diag:
            notes.append(
                "Without limited transmit (diagnostic runs): "
                + "; ".join(
                    f"RTT {r['rtt_s'] * 1000:g} ms, p {r['per']:g}: ratio {r['ratio']:.3f}, "
                    f"timeout share {r['timeout_share']:.2f}"
                    for r in diag
                )
                + "."
            )
        return notes

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        tables = result["data"]["tables"]
        variants = list(self.tolerance)
        fig, axes = plt.subplots(1, len(variants), figsize=(5.6 * len(variants), 4.4))
        for ax, variant in zip(np.atleast_1d(axes), variants, strict=True):
            table = tables[variant]
            ps, rtts = table["p"], table["rtt_s"]
            grid = np.array([[_float(v) for v in row] for row in table["ratio"]])
            tol = self.tolerance[variant]
            im = ax.imshow(grid, cmap="RdBu_r", vmin=0.6, vmax=1.4, origin="lower", aspect="auto")
            for i in range(len(rtts)):
                for j in range(len(ps)):
                    v = grid[i, j]
                    bold = abs(v - 1) > tol
                    ax.text(
                        j,
                        i,
                        f"{v:.2f}",
                        ha="center",
                        va="center",
                        fontsize="small",
                        fontweight="bold" if bold else "normal",
                    )
            ax.set_xticks(range(len(ps)), [f"{p:g}" for p in ps])
            ax.set_yticks(range(len(rtts)), [f"{r * 1000:g}" for r in rtts])
            ax.set(
                xlabel="Bernoulli packet error rate",
                ylabel="RTT (ms)",
                title=f"{variant}: send rate / PFTK (±{tol:.0%}; bold outside)",
            )
            fig.colorbar(im, ax=ax, fraction=0.046)
        path1 = plots.save(fig, fig_dir / f"{self.id}.png")

        rows = [r for r in result["points"] if r["variant"] in self.tolerance]
        fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16.0, 4.4))
        for variant, marker in zip(variants, "os", strict=False):
            mine = [r for r in rows if r["variant"] == variant]
            sc = ax1.scatter(
                [r["pftk_timeout_share"] for r in mine],
                [r["timeout_share"] for r in mine],
                c=[r["rtt_s"] * 1000 for r in mine],
                marker=marker,
                cmap="viridis",
                label=variant,
            )
            ax2.scatter(
                [r["p_events"] for r in mine],
                [r["window_at_fr"] / r["pftk_window"] for r in mine],
                c=[r["rtt_s"] * 1000 for r in mine],
                marker=marker,
                cmap="viridis",
                label=variant,
            )
            for key, fill in (("ratio", "full"), ("ratio_measured_q", "none")):
                ax3.scatter(
                    [r["p_events"] for r in mine],
                    [r[key] for r in mine],
                    c=[r["rtt_s"] * 1000 for r in mine] if fill == "full" else None,
                    edgecolors=None if fill == "full" else "black",
                    facecolors=None if fill == "full" else "none",
                    marker=marker,
                    cmap="viridis" if fill == "full" else None,
                    label=f"{variant}" + ("" if fill == "full" else ", measured Q"),
                )
        ax1.plot([0, 1], [0, 1], color="grey", linestyle=":")
        ax1.set(
            xlabel="PFTK Q(E[W]) at the measured p",
            ylabel="measured timeout share",
            title="timeouts among loss indications",
        )
        ax2.axhline(1, color="grey", linestyle=":")
        ax2.set(
            xscale="log",
            xlabel="loss-event rate",
            ylabel="window at fast retransmit / E[W]",
            title="window at a loss",
        )
        ax3.axhline(1, color="grey", linestyle=":")
        ax3.set(
            xscale="log",
            xlabel="loss-event rate",
            ylabel="send rate / PFTK",
            title="PFTK with its Q(E[W]) and with the measured share",
        )
        fig.colorbar(sc, ax=ax3, label="RTT (ms)")
        for ax in (ax1, ax2, ax3):
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
        path2 = plots.save(fig, fig_dir / f"{self.id}-diagnostics.png")
        return [
            Figure(
                path1,
                "Measured send rate (packets sent per second, retransmissions included) over the full PFTK "
                "model at the run's TFRC loss-event rate, mean RTT sample and first-timeout RTO; rows RTT, "
                "columns Bernoulli error rate.",
            ),
            Figure(
                path2,
                "Where model and simulator part: the share of loss indications that are timeouts against "
                "the model's Q(E[W]) (left); the mean window at a fast retransmit over the model's "
                "E[W] (middle); send rate / PFTK as in the verdict (filled, colour = RTT) and with the "
                "measured timeout share in place of Q (open) (right).",
            ),
        ]


def _range(values: Any) -> str:
    vals = list(values)
    return f"{min(vals):.3f} – {max(vals):.3f}"


def _ratio_table(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Rows RTT, columns p, of `key`."""
    ps = sorted({r["per"] for r in rows})
    rtts = sorted({r["rtt_s"] for r in rows})
    at = {(r["rtt_s"], r["per"]): r[key] for r in rows}
    return {"p": ps, "rtt_s": rtts, "ratio": [[at.get((rtt, p)) for p in ps] for rtt in rtts]}


# --- rtt-bias -------------------------------------------------------------------------------------


def fit_exponent(rtts: Sequence[float], throughputs: Sequence[float]) -> float:
    """The exponent a of throughput ∝ RTT^−a, by least squares on logs (NaN if a flow got nothing)."""
    x, y = np.log(np.asarray(rtts, dtype=float)), np.asarray(throughputs, dtype=float)
    if len(x) < 2 or (y <= 0).any():
        return math.nan
    slope = np.polyfit(x, np.log(y), 1)[0]
    return float(-slope)


RTT_BIAS_SEEDS = (1, 2, 3, 4, 5)
RTT_BIAS_PERTURB = (0.0, 0.5, 1.0)


def _sd(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else math.nan


@dataclass(frozen=True)
class RttBias(Experiment):
    """Four NewReno flows with base RTTs 20/40/80/160 ms share a 10 Mbps bottleneck."""

    warmup_s: float = 10.0
    quick_warmup_s: float = 5.0
    quick_duration: str = "30s"

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        if quick:
            base = with_overrides(base, {"duration": self.quick_duration})
        seeds = RTT_BIAS_SEEDS[:1] if quick else RTT_BIAS_SEEDS
        perturbs = RTT_BIAS_PERTURB[:1] if quick else RTT_BIAS_PERTURB
        out = []
        for queue in ("droptail", "red"):
            for ties in ("random", "fifo"):
                for f in perturbs:
                    for seed in seeds:
                        out.append(self._point(base, queue, ties, f, seed, None))
            if not quick:
                for seed in seeds:
                    out.append(self._point(base, queue, "random", 0.0, seed, "1040B"))
        return out

    def _point(
        self, base: dict[str, Any], queue: str, ties: str, f: float, seed: int, size: str | None
    ) -> Point:
        doc = with_overrides(base, {"seed": seed, "engine": {"ties": ties, "perturb_delays": f}})
        if queue == "red":
            _link(doc, "r1", "r2")["queue"] = {"kind": "red", "preset": "ns2", "limit": 100}
        if size:
            for flow in doc["flow"]:
                flow["packet_size"] = size
        key = f"{queue}-{ties}-f{f:g}-s{seed}" + (f"-{size}" if size else "")
        return Point(
            key, {"queue": queue, "ties": ties, "perturb": f, "seed": seed, "size": size or "1000B"}, doc
        )

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        warmup = self.quick_warmup_s if quick else self.warmup_s
        rows = []
        for point, run in runs:
            names, rtts, thr = _flow_rtts_and_throughputs(run, warmup)
            rows.append(
                {
                    **point.params,
                    "a": fit_exponent(rtts, thr),
                    **{f"mbps_{n}": t / 1e6 for n, t in zip(names, thr, strict=True)},
                    **{f"rtt_ms_{n}": r * 1e3 for n, r in zip(names, rtts, strict=True)},
                }
            )
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for r in rows:
            groups.setdefault((r["queue"], r["ties"], r["size"]), []).append(r)
        comparison, checks, summary = [], [], {}
        for (queue, ties, size), rs in groups.items():
            a = [r["a"] for r in rs]
            by_f = {f: [r["a"] for r in rs if r["perturb"] == f] for f in sorted({r["perturb"] for r in rs})}
            summary[f"{queue}/{ties}/{size}"] = {
                "mean": statistics.fmean(a),
                "sd": _sd(a),
                "min": min(a),
                "max": max(a),
                "positive": sum(x > 0 for x in a),
                "runs": len(a),
                "by_perturb": {
                    f"{f:g}": {"mean": statistics.fmean(v), "sd": _sd(v)} for f, v in by_f.items()
                },
            }
            s = summary[f"{queue}/{ties}/{size}"]
            comparison.append(
                {
                    "quantity": f"{queue}, ties {ties}, {size}: a (mean ± sd, min–max, over {len(a)} runs)",
                    "ours": f"{s['mean']:.2f} ± {s['sd']:.2f} ({s['min']:.2f} – {s['max']:.2f})",
                    "published": "a > 0" if ties == "random" else "—",
                }
            )
            for f, v in by_f.items():
                if len(by_f) > 1:
                    comparison.append(
                        {
                            "quantity": f"{queue}, ties {ties}, {size}, perturb_delays {f:g}: a over seeds",
                            "ours": f"{statistics.fmean(v):.2f} ± {_sd(v):.2f}",
                            "published": "—",
                        }
                    )
        for queue in ("droptail", "red"):
            s = summary[f"{queue}/random/1000B"]
            checks.append(
                Check(
                    f"{queue}, random ties: mean a > 0 (longer RTT gets less)",
                    s["mean"],
                    "> 0",
                    s["mean"] > 0,
                )
            )
            checks.append(
                Check(
                    f"{queue}, random ties: runs with a > 0 (spread reported)",
                    f"{s['positive']} of {s['runs']}; sd {s['sd']:.2f}",
                    "reported",
                    None,
                )
            )
        return Evaluation(
            rows, comparison, checks, {"summary": summary, "warmup_s": warmup}, _bias_notes(summary)
        )

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        rows = [r for r in result["points"] if r["size"] == "1000B"]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.4))
        styles = {
            ("droptail", "random"): ("C0", "o"),
            ("droptail", "fifo"): ("C1", "x"),
            ("red", "random"): ("C2", "s"),
            ("red", "fifo"): ("C3", "+"),
        }
        perturbs = sorted({r["perturb"] for r in rows})
        for (queue, ties), (color, marker) in styles.items():
            mine = [r for r in rows if r["queue"] == queue and r["ties"] == ties]
            off = {"droptail": -0.06, "red": 0.06}[queue] + {"random": -0.02, "fifo": 0.02}[ties]
            ax1.scatter(
                [perturbs.index(r["perturb"]) + off for r in mine],
                [_float(r["a"]) for r in mine],
                color=color,
                marker=marker,
                label=f"{queue}, {ties} ties",
            )
        ax1.axhline(0, color="grey", linestyle=":")
        ax1.set_xticks(range(len(perturbs)), [f"{f:g}" for f in perturbs])
        ax1.set(
            xlabel="perturb_delays",
            ylabel="fitted a (throughput ∝ RTT^−a)",
            title=f"{self.id}: a per run (5 seeds each)",
        )
        ax1.legend(fontsize="x-small")
        ax1.grid(alpha=0.3)
        names = [k.removeprefix("mbps_") for k in (rows[0] if rows else {}) if k.startswith("mbps_")]
        for (queue, ties), (color, marker) in styles.items():
            mine = [
                r for r in rows if r["queue"] == queue and r["ties"] == ties and r["perturb"] == perturbs[0]
            ]
            if not mine:
                continue
            rtts = [statistics.fmean(r[f"rtt_ms_{n}"] for r in mine) for n in names]
            mean = [statistics.fmean(r[f"mbps_{n}"] for r in mine) for n in names]
            ax2.plot(rtts, mean, marker=marker, color=color, label=f"{queue}, {ties}")
        ax2.set(
            xscale="log",
            yscale="log",
            xlabel="base RTT (ms)",
            ylabel="throughput (Mbit/s)",
            title=f"mean over seeds, perturb_delays {perturbs[0]:g}",
        )
        from matplotlib.ticker import NullFormatter

        ax2.set_xticks(rtts, [f"{r:.0f}" for r in rtts])
        ax2.xaxis.set_minor_formatter(NullFormatter())
        ax2.set_yticks([0.25, 0.5, 1, 2, 4, 8], ["0.25", "0.5", "1", "2", "4", "8"])
        ax2.yaxis.set_minor_formatter(NullFormatter())
        ax2.grid(alpha=0.3, which="both")
        ax2.legend(fontsize="x-small")
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "Left: the fitted exponent a of every run (1000-byte packets), by queue, tie rule and delay "
                "perturbation. Right: mean delivered throughput per flow against its base RTT, without "
                "perturbation.",
            )
        ]


def _flow_rtts_and_throughputs(run: RunResult, warmup_s: float) -> tuple[list[str], list[float], list[float]]:
    """Per flow, in flow order: its name, its base RTT (sum of the propagation delays of its path
    there and back, perturbation included, s) and its delivered throughput after `warmup_s`, bit/s."""
    delay = {link["name"]: link["delay_s"] for link in run.summary["links"]}
    span = run.summary["duration_s"] - warmup_s
    series = run.flow_series.filter(pl.col("t_start") >= warmup_s - 1e-9)
    names, rtts, thr = [], [], []
    for f in run.summary["flows"]:
        names.append(f["name"])
        src, dst = f["src"], f["dst"]
        hops = [(src, "r1"), ("r1", "r2"), ("r2", dst)]
        rtts.append(sum(delay[f"{a}->{b}"] + delay[f"{b}->{a}"] for a, b in hops))
        thr.append(float(series.filter(pl.col("flow") == f["name"])["bytes_delivered"].sum()) * 8 / span)
    return names, rtts, thr


def _bias_notes(summary: Mapping[str, Mapping[str, Any]]) -> list[str]:
    notes = []
    for queue in ("droptail", "red"):
        s = summary.get(f"{queue}/random/1000B")
        if s is None or s["runs"] < 2:
            continue
        cv = s["sd"] / abs(s["mean"]) if s["mean"] else math.inf
        per = ", ".join(f"{f}: {v['mean']:.2f} ± {v['sd']:.2f}" for f, v in s["by_perturb"].items())
        notes.append(
            f"{queue}, random ties: a = {s['mean']:.2f} ± {s['sd']:.2f} over {s['runs']} runs "
            f"(min {s['min']:.2f}, "
            f"max {s['max']:.2f}; by perturb_delays {per}); the spread is "
            + (
                "large (sd above 30 % of the mean): the RTT bias is phase-sensitive."
                if cv > 0.3
                else "small."
            )
        )
    return notes


# --- tie-neutrality -------------------------------------------------------------------------------


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

        from . import plots

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


def _load_packaged(name: str) -> dict[str, Any]:
    from .. import tomlio

    return tomlio.loads(packaged("papers", name).read_text(encoding="utf-8"))


# --- the registry ---------------------------------------------------------------------------------

_DEF = "definition of a work-conserving FIFO link"

EXPERIMENTS: tuple[Experiment, ...] = (
    FifoAudit(
        id="fifo-audit",
        title="Every link is a work-conserving FIFO",
        paper=PAPER,
        figure="—",
        scenario_file="validation-fifo-audit.toml",
        what_runs=(
            "TCP (1500 B NewReno, 1040 B Reno, a reverse 1500 B flow) and CBR (200 B, 1000 B dithered) "
            "through a 10 Mbps bottleneck with 0.5 % Bernoulli loss, 30 s, packet trace on; the "
            "bottleneck as drop-tail, drop-tail under fifo ties, RED, a token bucket behind a 100 Mbps "
            "link, and drop-tail with a capacity schedule that pauses it twice"
        ),
        must_hold="no transmission on any link starts over 1 ns after a work-conserving link would start it",
        explanation=(
            "From packets.parquet, per link, each transmission is due at max(its arrival, previous start + "
            "previous serialisation time at the rate in force), later only when the token bucket lacks "
            "tokens (tbf rule, bucket starting full, peak bucket when set) or the schedule holds the rate at "
            "0 (reproduce/audit.py). The previous start is the actual one, so every packet is judged on "
            "its own. A made-up trace of the engine before 7894a83 (a packet held until the next arrival) "
            "is audited too: the audit must flag it."
        ),
        published=(Published("late packets", 0, _DEF), Published("early packets", 0, _DEF)),
    ),
    TcpPftkGrid(
        id="tcp-pftk-grid",
        title="Reno and NewReno against the PFTK model over loss rate and RTT",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tcp-pftk-grid.toml",
        what_runs=(
            "one Reno or NewReno flow (ns-2 defaults, ACK per packet, 1000 B packets, unlimited window) over "
            "a 100 Mbps path, Bernoulli loss 0.1 / 0.316 / 1 / 3.16 / 10 % × RTT 20 / 50 / 100 / 200 / "
            "300 ms, "
            "each run planned for about 1500 loss events (minutes to hours simulated); plus four "
            "NewReno runs without limited transmit as a diagnostic"
        ),
        must_hold="send rate / PFTK within ±15 % everywhere for NewReno, ±25 % for Reno",
        explanation=(
            "p is the TFRC loss-event rate: data packets lost on the lossy link (from the packet trace), "
            "grouped so that losses within one mean RTT of the first loss of an event count once (RFC 5348), "
            "divided by the packets sent. The throughput is the send rate, packets sent per second "
            "retransmissions included, which is what PFTK's B(p) models. RTT is the mean of the sender's RTT "
            "samples; T0 the mean RTO in force when the first timeout of each timeout sequence fired; b = 1; "
            "Wmax the advertised window. Also reported: goodput / PFTK, and the ratio at p = loss "
            "indications (fast retransmits + timeout sequences) / packets sent, PFTK's own measure. After "
            "evaluation each run's packet trace is reduced to its loss rows (losses.parquet)."
        ),
        published=(
            Published("send rate / model, NewReno", "1 ± 0.15", "fairstream validation target"),
            Published(
                "send rate / model, Reno", "1 ± 0.25", "fairstream validation target (Padhye et al. 1998)"
            ),
        ),
        phase_replicas=0,
    ),
    RttBias(
        id="rtt-bias",
        title="Longer-RTT TCP flows get less",
        paper=PAPER,
        figure="—",
        scenario_file="validation-rtt-bias.toml",
        what_runs=(
            "four NewReno flows (1000 B packets) with base RTTs 20 / 40 / 80 / 160 ms, 100 Mbps access "
            "links, a 10 Mbps bottleneck with a 100-packet drop-tail or RED queue, 100 s; 5 seeds × "
            "perturb_delays 0 / 0.5 / 1 × ties random / fifo; and 1040 B packets (random ties, no "
            "perturbation) for comparison"
        ),
        must_hold="under random ties, the mean fitted a (throughput ∝ RTT^−a) is positive, drop-tail and RED",
        explanation=(
            "Throughput: wire bytes delivered after a 10 s warm-up. a is fitted by least squares of "
            "log throughput on log base RTT (the propagation delays of the flow's path, perturbation "
            "included). Before the engine fix, with fifo ties and round-number delays, the four flows got "
            "2.4 / 2.4 / 1.8 / 3.4 Mbit/s (the longest RTT the most) because the tie rule decided who was "
            "dropped; ns-2.35 gives about 7.2 / 1.4 / 0.8 / 0.5 (a ≈ 1.2), through floating-point rounding "
            "of its event times."
        ),
        published=(
            Published(
                "exponent a",
                "> 0 (longer RTT gets less)",
                "TCP's RTT bias (Floyd 1991; Lakshman & Madhow 1997)",
            ),
            Published(
                "throughputs, ns-2.35, round-number delays",
                "≈ 7.2 / 1.4 / 0.8 / 0.5 Mbit/s (a ≈ 1.2)",
                "lead engineer's ns-2.35 runs",
            ),
        ),
        phase_replicas=0,
    ),
    TieNeutrality(
        id="tie-neutrality",
        title="Same-instant ties favour no flow",
        paper=PAPER,
        figure="—",
        scenario_file="validation-tie-neutrality.toml",
        what_runs=(
            "four lock-stepped 5 Mbps CBR sources (1000 B, identical 100 Mbps / 5 ms access links) into a "
            "10 Mbps bottleneck with a 20-packet drop-tail queue, and four identical NewReno flows started "
            "together on the same topology; 60 s, seeds 1–10, ties random and fifo"
        ),
        must_hold=(
            "under random ties, no flow's mean share over seeds departs significantly from 1/n "
            "(t-test, 1 % level); under fifo ties the CBR flows' shares do"
        ),
        explanation=(
            "The CBR packets of all four sources reach the router in the same nanosecond, twice as fast as "
            "the bottleneck drains, so the tie rule alone decides who is dropped. Shares are of the wire "
            "bytes delivered over the run; the standard error is over seeds."
        ),
        published=(
            Published(
                "mean share per flow, random ties", "1/n", "neutral tie rule (fairstream engine, 7894a83)"
            ),
        ),
        phase_replicas=0,
    ),
)
