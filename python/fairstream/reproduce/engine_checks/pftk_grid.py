"""``tcp-pftk-grid``: Reno and NewReno under Bernoulli loss on a 5 × 5 grid of loss rate and RTT,
each run long enough for over 1000 loss events, against the full PFTK model at the run's own
loss-event rate, RTT and timeout."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import _core, tomlio
from ...lazy import on_first_use
from ...results import RunResult
from ...scenario import with_overrides
from ...table import span
from ..experiment import Check, Evaluation, Experiment, Figure, Point
from .common import _float, _link

if TYPE_CHECKING:
    import numpy as np
    import polars as pl
else:
    np = on_first_use("numpy")
    pl = on_first_use("polars")


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
    #: Mean cwnd just before each fast retransmit (packets): its ``loss_window``.
    window_at_fr: float


def loss_indications(metrics: pl.DataFrame) -> LossIndications:
    """Fast retransmits, timeouts, timeout sequences, the RTO of first timeouts and the window at
    fast retransmit, from a flow's metric records (in time order; records of one instant in the
    order they were made): ``fast_retransmit``, ``timeout``, ``rto`` and ``loss_window``, which TCP
    records just before each of the first two.

    A timeout continues a sequence when the indication before it was a timeout and the window was
    still one packet (no new ACK had grown it since); the RTO is the last recorded before the
    first timeout of a sequence (NaN when none was)."""
    metric, value = pl.col("metric"), pl.col("value")
    events = (
        metrics.filter(metric.is_in(["timeout", "fast_retransmit", "loss_window", "rto"]))
        .with_row_index("i")
        .sort("t", "i")
        .select(
            metric,
            pl.when(metric == "loss_window").then(value).forward_fill().fill_null(math.nan).alias("window"),
            pl.when(metric == "rto").then(value).forward_fill().fill_null(math.nan).alias("rto"),
        )
        .filter(metric.is_in(["timeout", "fast_retransmit"]))
    )
    timeouts = events.filter(metric == "timeout")
    backed_off = (metric.shift(1).fill_null("") == "timeout") & (pl.col("window") <= 1.0)
    first = events.filter((metric == "timeout") & ~backed_off)
    windows = events.filter(metric == "fast_retransmit")["window"].to_numpy()
    first_rtos = first["rto"].to_numpy()
    return LossIndications(
        windows.size,
        timeouts.height,
        first.height,
        float(np.mean(first_rtos)) if first_rtos.size else math.nan,
        float(np.nanmean(windows)) if windows.size and not np.isnan(windows).all() else math.nan,
    )


#: The PFTK grid: Bernoulli packet error rates and round-trip times (s).
PFTK_P = (0.001, 0.00316, 0.01, 0.0316, 0.1)
PFTK_RTT = (0.02, 0.05, 0.1, 0.2, 0.3)
PFTK_QUICK_P = (0.003, 0.01)
PFTK_QUICK_RTT = (0.05, 0.2)
#: Diagnostic runs (full mode only, not in the verdict): NewReno without limited transmit.
PFTK_DIAGNOSTIC = tuple((p, rtt) for p in (0.0316, 0.1) for rtt in (0.02, 0.3))


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
    """The data-direction losses (``e`` and ``d`` rows) of a run's packet trace, as t_ns, flow_id,
    event and link_id. The grid's scenario traces the losses alone (``packets = ["drop",
    "corrupt"]``; a whole trace was 2 GB for the grid); the filter keeps the data direction of
    whatever trace the run holds. It is read where it is kept, the run cache or a run directory; the
    output keeps none of it (a reproduction's dataset holds no packet trace unless
    ``--keep-runs``)."""
    return (
        run.lazy("packets")
        .filter(pl.col("event").is_in(["e", "d"]) & ~pl.col("reverse"))
        .select("t_ns", "flow_id", "event", "link_id")
        .collect()
    )


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
                    "ours": span(r["goodput_ratio"] for r in mine),
                    "published": "below send rate / PFTK by about the loss rate",
                },
                {
                    "quantity": f"{variant}: send rate / PFTK with the measured timeout share as Q, range",
                    "ours": span(r["ratio_measured_q"] for r in mine),
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
        # The run's own numbers: the segment from its flow summary, the window and the delayed
        # ACKs from its resolved scenario (every default filled in).
        tcp = tomlio.loads(run.resolved_toml)["flow"][0]
        segment = flow["payload_bytes"]
        b = 2.0 if tcp["delayed_ack"] else 1.0
        wmax = float(tcp["window"])
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
            f"{span(r['ratio_measured_q'] for r in grid)} over the grid."
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

        from .. import plots

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


def _ratio_table(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Rows RTT, columns p, of `key`."""
    ps = sorted({r["per"] for r in rows})
    rtts = sorted({r["rtt_s"] for r in rows})
    at = {(r["rtt_s"], r["per"]): r[key] for r in rows}
    return {"p": ps, "rtt_s": rtts, "ratio": [[at.get((rtt, p)) for p in ps] for rtt in rtts]}


# --- rtt-bias -------------------------------------------------------------------------------------
