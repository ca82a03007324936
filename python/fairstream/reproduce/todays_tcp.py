"""Today's TCP (issue 22): CUBIC against its response function, CUBIC beside CUBIC, BBR beside CUBIC.

Experiments, run from ``scenarios/papers/validation-{cubic-response,cubic-fairness,bbr-cubic}.toml``:

- ``cubic-response``: one CUBIC flow (SACK, no fast convergence, as RFC 9438 §4.7 advises for a
  flow alone) under Bernoulli loss on a 5 × 5 grid of loss rate (0.01 % to 1 %) and RTT (20 to
  300 ms). Its mean window (packets per RTT after a warm-up) is set against RFC 9438's response
  function (§5.1: the larger of the CUBIC and Reno-friendly averages under a deterministic loss
  rate) and against `response_under_bernoulli_loss`, a round-by-round Monte Carlo of the same
  RFC rules under the same independent losses, which tells the share of any departure that the
  closed form's deterministic loss explains.
- ``cubic-fairness``: two CUBIC flows (the `linux` preset) through one bottleneck, drop-tail and
  RED, seeds 1-5: Jain's index over the seeds.
- ``bbr-cubic``: one BBR and one CUBIC flow (both the `linux` preset, BBR's control swapped in)
  through a drop-tail bottleneck of 0.5 to 16 bandwidth-delay products: BBR's share of the
  throughput, against Hock, Bless and Zitterbart (ICNP 2017) and Ware et al. (IMC 2019).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core, tomlio
from ..lazy import on_first_use
from ..results import RunResult
from ..scenario import with_overrides
from ..table import fmt, span
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")

PAPER = "validation"

#: RFC 9438's constants, as the scenario's `cubic` table sets them.
C = 0.4
BETA = 0.7


def response_function(p: float, rtt_s: float, c: float = C, beta: float = BETA) -> float:
    """RFC 9438's average window under a deterministic loss rate `p` (eq. 5 and the Reno-friendly
    region, §5.1): the larger of CUBIC's ``(C(3+β)/(4(1−β)))^¼ (RTT/p)^¾`` and Reno's
    ``√(3/(2p))``, packets (`fairstream_metrics::cubic_model`)."""
    return _core.cubic_response(p, rtt_s, c, beta)


def response_under_bernoulli_loss(
    p: float, rtt_s: float, rounds: int = 300_000, seed: int = 1, c: float = C, beta: float = BETA
) -> float:
    """The mean window (packets per round trip) of RFC 9438's rules when every packet is lost
    independently with probability `p`: a round-by-round Monte Carlo, independent of the simulator
    (`fairstream_metrics::cubic_model::response_under_bernoulli_loss`, whose documentation gives
    its rules and what it leaves out)."""
    return _core.cubic_response_under_bernoulli_loss(p, rtt_s, rounds, seed, c, beta)


#: The grid: Bernoulli packet error rates and round-trip times (s), and the quick subset.
GRID_P = (1e-4, 3.16e-4, 1e-3, 3.16e-3, 1e-2)
GRID_RTT = (0.02, 0.05, 0.1, 0.2, 0.3)
QUICK_P = (1e-3, 1e-2)
QUICK_RTT = (0.02, 0.1)


@dataclass(frozen=True)
class CubicResponse(Experiment):
    """One CUBIC flow under Bernoulli loss on the grid, against RFC 9438's response function."""

    events: int = 600
    quick_events: int = 150
    warmup_events: int = 25
    tolerance: float = 0.20
    monte_carlo_tolerance: float = 0.10

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        out = []
        for rtt in QUICK_RTT if quick else GRID_RTT:
            for p in QUICK_P if quick else GRID_P:
                # Time for one loss event at the model's window; the warm-up lets slow start's
                # overshoot decay (β per event, from about 2/p packets).
                per_event = rtt / (p * response_function(p, rtt))
                warmup = 10.0 + self.warmup_events * per_event
                duration = warmup + (self.quick_events if quick else self.events) * per_event
                doc = with_overrides(base, {"duration": f"{math.ceil(duration)}s"})
                for link in doc["topology"]["link"]:
                    link["delay"] = f"{rtt * 500:g}ms"
                doc["topology"]["link"][0]["loss"] = {"kind": "bernoulli", "per": p}
                key = f"rtt{rtt * 1000:g}ms-p{p:g}"
                out.append(Point(key, {"rtt_s": rtt, "per": p, "warmup_s": warmup}, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rounds = 60_000 if quick else 300_000
        rows = []
        for point, run in runs:
            flow = run.summary["flows"][0]
            warmup = point.params["warmup_s"]
            bins = run.flow_series.filter(pl.col("t_start") >= warmup - 1e-9)
            span_s = float(bins["t_end"].max() - bins["t_start"].min())
            rate = float(bins["packets_sent"].sum()) / span_s
            rtt_mean = flow["mean_rtt_s"]
            window = rate * rtt_mean
            p, rtt = point.params["per"], point.params["rtt_s"]
            model = response_function(p, rtt)
            mc = response_under_bernoulli_loss(p, rtt, rounds)
            rows.append(
                {
                    "rtt_s": rtt,
                    "per": p,
                    "duration_s": run.summary["duration_s"],
                    "warmup_s": warmup,
                    "loss_ratio": flow["packets_dropped"] / max(flow["packets_sent"], 1),
                    "rtt_mean_s": rtt_mean,
                    "window": window,
                    "rfc_window": model,
                    "bernoulli_window": mc,
                    "ratio": window / model,
                    "ratio_bernoulli": window / mc,
                    "bernoulli_over_rfc": mc / model,
                }
            )
        outside = [r for r in rows if abs(r["ratio"] - 1) > self.tolerance]
        outside_mc = [r for r in rows if abs(r["ratio_bernoulli"] - 1) > self.monte_carlo_tolerance]
        worst = max(rows, key=lambda r: abs(r["ratio"] - 1))
        worst_mc = max(rows, key=lambda r: abs(r["ratio_bernoulli"] - 1))
        comparison = [
            {
                "quantity": "mean window / RFC 9438's response function, range over the grid",
                "ours": span(r["ratio"] for r in rows),
                "published": f"1 ± {self.tolerance:g}",
            },
            {
                "quantity": f"points within ±{self.tolerance:.0%} of the response function",
                "ours": f"{len(rows) - len(outside)} of {len(rows)}",
                "published": f"{len(rows)} of {len(rows)}",
            },
            {
                "quantity": "the RFC's rules under the same Bernoulli loss (Monte Carlo) / response function",
                "ours": span(r["bernoulli_over_rfc"] for r in rows),
                "published": "(the deterministic-loss assumption's share)",
            },
            {
                "quantity": "mean window / the Monte Carlo under Bernoulli loss, range",
                "ours": span(r["ratio_bernoulli"] for r in rows),
                "published": f"1 ± {self.monte_carlo_tolerance:g}",
            },
        ]
        checks = [
            Check(
                f"mean window within ±{self.tolerance:.0%} of RFC 9438's response function at every point",
                f"worst {worst['ratio']:.3f} (RTT {worst['rtt_s'] * 1000:g} ms, p {worst['per']:g}); "
                f"{len(outside)} of {len(rows)} outside",
                f"1 ± {self.tolerance:g}",
                not outside,
            ),
            Check(
                f"mean window within ±{self.monte_carlo_tolerance:.0%} of the RFC's rules under the same "
                "Bernoulli loss at every point",
                f"worst {worst_mc['ratio_bernoulli']:.3f} (RTT {worst_mc['rtt_s'] * 1000:g} ms, "
                f"p {worst_mc['per']:g}); {len(outside_mc)} of {len(rows)} outside",
                f"1 ± {self.monte_carlo_tolerance:g}",
                not outside_mc,
            ),
        ]
        notes = [
            "RFC 9438 derives its response function for a deterministic loss model: a loss every 1/p "
            "packets, so that every cycle is the same concave curve up to W_max. Under independent "
            "(Bernoulli) losses the cycles vary; long ones reach CUBIC's convex region and its "
            "Reno-friendly α of 1, and the mean window is higher. The Monte Carlo of the RFC's own "
            "rules under the same losses puts that effect at "
            f"{span(r['bernoulli_over_rfc'] for r in rows)} × the closed form over this grid; the "
            f"simulator's window is {span(r['ratio_bernoulli'] for r in rows)} × the Monte Carlo's."
        ]
        if outside:
            notes.append(
                "Points outside ±20 % of the closed form: "
                + "; ".join(
                    f"RTT {r['rtt_s'] * 1000:g} ms, p {r['per']:g}: {r['ratio']:.3f} "
                    f"(Monte Carlo {r['bernoulli_over_rfc']:.3f})"
                    for r in outside
                )
                + "."
            )
        return Evaluation(rows, comparison, checks, {}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        rows = result["points"]
        fig, ax = plt.subplots(figsize=(7.0, 4.6))
        for rtt in sorted({r["rtt_s"] for r in rows}):
            mine = sorted((r for r in rows if r["rtt_s"] == rtt), key=lambda r: r["per"])
            ps = [r["per"] for r in mine]
            (line,) = ax.plot(ps, [r["window"] for r in mine], "o", label=f"RTT {rtt * 1000:g} ms")
            ax.plot(ps, [r["rfc_window"] for r in mine], "-", color=line.get_color(), linewidth=0.9)
            ax.plot(ps, [r["bernoulli_window"] for r in mine], ":", color=line.get_color(), linewidth=0.9)
        plots.log_log(
            ax,
            xlabel="Bernoulli packet loss rate",
            ylabel="mean window (packets per RTT)",
            title=f"{self.id}: CUBIC against RFC 9438's response function",
        )
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "Mean window of one CUBIC flow under Bernoulli loss (dots), RFC 9438's response function "
                "for deterministic loss (solid) and the RFC's rules under the same Bernoulli loss (dotted), "
                "per RTT.",
            )
        ]


#: Seeds of the sharing experiments (full, quick).
SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1, 2)
#: Bottleneck queues of cubic-fairness: the scenario's drop-tail, and RED (ns-2 defaults, same limit).
FAIRNESS_QUEUES: dict[str, dict[str, Any] | None] = {
    "droptail": None,
    "red": {"kind": "red", "limit": "50 packets"},
}


def _delivered(run: RunResult, name: str, since_s: float) -> float:
    rows = run.flow_series.filter((pl.col("flow") == name) & (pl.col("t_start") >= since_s - 1e-9))
    return float(rows["goodput_bytes"].sum())


@dataclass(frozen=True)
class CubicFairness(Experiment):
    """Two CUBIC flows share a bottleneck: Jain's index over seeds, drop-tail and RED."""

    threshold: float = 0.95
    warmup_s: float = 10.0

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        if quick:
            base = with_overrides(base, {"duration": "40s"})
        out = []
        for queue, config in FAIRNESS_QUEUES.items():
            for seed in QUICK_SEEDS if quick else SEEDS:
                doc = with_overrides(base, {"seed": seed})
                if config is not None:
                    doc["topology"]["bottleneck"]["queue"] = dict(config)
                out.append(Point(f"{queue}-seed{seed}", {"queue": queue, "seed": seed}, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        for point, run in runs:
            names = [f["name"] for f in run.summary["flows"]]
            got = [_delivered(run, n, self.warmup_s) for n in names]
            rows.append(
                {
                    **point.params,
                    "jain": _core.jain(got),
                    "share_first": got[0] / sum(got) if sum(got) else math.nan,
                    "drops": sum(f["packets_dropped"] for f in run.summary["flows"]),
                }
            )
        comparison, checks = [], []
        for queue in FAIRNESS_QUEUES:
            mine = [r for r in rows if r["queue"] == queue]
            mean = statistics.fmean(r["jain"] for r in mine)
            low = min(r["jain"] for r in mine)
            comparison.append(
                {
                    "quantity": f"{queue}: Jain's index of two CUBIC flows, mean of {len(mine)} seeds (min)",
                    "ours": f"{mean:.4f} ({low:.4f})",
                    "published": "≥ 0.95",
                }
            )
            checks.append(
                Check(
                    f"{queue}: Jain's index ≥ {self.threshold:g} (mean over seeds)",
                    mean,
                    f"≥ {self.threshold:g}",
                    mean >= self.threshold,
                )
            )
        return Evaluation(rows, comparison, checks, {"warmup_s": self.warmup_s})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        first = result["points"][0]
        run = RunResult(exp_dir / result["runs"][f"{first['queue']}-seed{first['seed']}"])
        path = plots.cumulative_delivered(
            fig_dir / f"{self.id}.png", run, title=f"{self.id}: two CUBIC flows, {first['queue']}"
        )
        return [Figure(path, "Cumulative bytes of the two CUBIC flows, first seed through drop-tail.")]


#: Buffers of bbr-cubic, in bandwidth-delay products (full, quick).
BUFFERS_BDP = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
QUICK_BUFFERS_BDP = (0.5, 8.0)
BBR_SEEDS = (1, 2, 3)
QUICK_BBR_SEEDS = (1,)
#: Shallow and deep, as the published comparisons set them (Hock et al.: 0.8 and 8 BDP).
SHALLOW_BDP = 1.0
DEEP_BDP = 8.0


@dataclass(frozen=True)
class BbrCubic(Experiment):
    """One BBR and one CUBIC flow through a drop-tail bottleneck of 0.5 to 16 BDP."""

    warmup_s: float = 10.0

    def _bdp_packets(self, doc: dict[str, Any]) -> float:
        """The bottleneck's bandwidth-delay product in the flows' packets, read from the scenario
        as the core resolves it (the packet size its preset gives), with the core's unit parser."""
        resolved = tomlio.loads(_core.validate(tomlio.dumps(doc), self.scenario_file))
        topo = resolved["topology"]

        def seconds(text: str) -> float:
            return _core.parse_quantity(text, "duration") / 1e9

        rate = _core.parse_quantity(topo["bottleneck"]["rate"], "rate")
        rtt = 2 * (2 * seconds(topo["access"]["delay"]) + seconds(topo["bottleneck"]["delay"]))
        size = _core.parse_quantity(resolved["flow"][0]["packet_size"], "size")
        return rate * rtt / (8 * size)

    def points(self, quick: bool) -> list[Point]:
        base = self.base_scenario()
        if quick:
            base = with_overrides(base, {"duration": "40s"})
        bdp = self._bdp_packets(base)
        out = []
        for buffers in QUICK_BUFFERS_BDP if quick else BUFFERS_BDP:
            for seed in QUICK_BBR_SEEDS if quick else BBR_SEEDS:
                doc = with_overrides(base, {"seed": seed})
                limit = max(2, round(buffers * bdp))
                doc["topology"]["bottleneck"]["queue"] = {"kind": "droptail", "limit": f"{limit} packets"}
                params = {"buffer_bdp": buffers, "buffer_packets": limit, "seed": seed}
                out.append(Point(f"buffer{buffers:g}-seed{seed}", params, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        for point, run in runs:
            bbr, cubic = _delivered(run, "bbr", self.warmup_s), _delivered(run, "cubic", self.warmup_s)
            flows = {f["name"]: f for f in run.summary["flows"]}
            rows.append(
                {
                    **point.params,
                    "bbr_share": bbr / (bbr + cubic) if bbr + cubic else math.nan,
                    "bbr_mbps": bbr * 8 / (run.summary["duration_s"] - self.warmup_s) / 1e6,
                    "cubic_mbps": cubic * 8 / (run.summary["duration_s"] - self.warmup_s) / 1e6,
                    "bbr_retransmits": flows["bbr"]["retransmits"],
                    "cubic_retransmits": flows["cubic"]["retransmits"],
                    "mean_rtt_s": flows["cubic"]["mean_rtt_s"],
                }
            )
        by_buffer: dict[float, list[float]] = {}
        for r in rows:
            by_buffer.setdefault(r["buffer_bdp"], []).append(r["bbr_share"])
        mean = {b: statistics.fmean(v) for b, v in by_buffer.items()}
        shallow = min(mean)
        deep = max(mean)
        comparison = [
            {
                "quantity": f"BBR's share of the throughput, buffer {b:g} BDP (mean over seeds)",
                "ours": fmt(mean[b], 3),
                "published": "most (> 0.5)"
                if b <= SHALLOW_BDP
                else ("less than half" if b >= DEEP_BDP else "—"),
            }
            for b in sorted(mean)
        ]
        checks = [
            Check(
                f"BBR takes most of a shallow buffer ({shallow:g} BDP)",
                mean[shallow],
                "> 0.5",
                mean[shallow] > 0.5,
            ),
            Check(
                f"BBR takes less of a deep buffer ({deep:g} BDP) than of a shallow one, and less than half",
                mean[deep],
                f"< 0.5 and < {mean[shallow]:.3f}",
                mean[deep] < 0.5 and mean[deep] < mean[shallow],
            ),
        ]
        return Evaluation(rows, comparison, checks, {"mean_share": {str(b): v for b, v in mean.items()}})

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        rows = result["points"]
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        ax.plot(
            [r["buffer_bdp"] for r in rows], [r["bbr_share"] for r in rows], "o", alpha=0.5, label="seeds"
        )
        means = result["data"]["mean_share"]
        keys = sorted(means, key=float)
        ax.plot([float(k) for k in keys], [means[k] for k in keys], "-", label="mean")
        ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8)
        ax.set(
            xscale="log",
            xlabel="bottleneck buffer (bandwidth-delay products)",
            ylabel="BBR's share of the throughput",
            title=f"{self.id}: one BBR beside one CUBIC",
            ylim=(0, 1),
        )
        plots.plain_log_ticks(ax.xaxis)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="small")
        path = plots.save(fig, fig_dir / f"{self.id}.png")
        return [
            Figure(
                path,
                "BBR's share of the two flows' goodput after a 10 s warm-up, per seed and mean, against the "
                "bottleneck's drop-tail buffer.",
            )
        ]


EXPERIMENTS: tuple[Experiment, ...] = (
    CubicResponse(
        id="cubic-response",
        title="CUBIC under random loss against RFC 9438's response function",
        paper=PAPER,
        figure="—",
        scenario_file="validation-cubic-response.toml",
        what_runs=(
            "one CUBIC flow (SACK with PRR, no fast convergence, no HyStart++, an ACK per packet) on a "
            "1 Gbps path that is never the bottleneck, Bernoulli loss 0.01 % to 1 % × RTT 20 to 300 ms "
            "(5 × 5), each run long enough for 600 loss events after a warm-up of 25 (quick: 2 × 2, 150)"
        ),
        must_hold=(
            "mean window (packets per RTT) within ±20 % of RFC 9438's response function at every point, "
            "or the departure explained"
        ),
        explanation=(
            "RFC 9438 §5.1 gives CUBIC's average window under a deterministic loss rate p as the larger of "
            "(C(3+β)/(4(1−β)))^¼ (RTT/p)^¾ and Reno's √(3/(2p)) (its Table 1 at RTT 0.1 s). We measure the "
            "packets sent per second after the warm-up times the mean RTT sample, at the Bernoulli error "
            "rate p; the warm-up lets slow start's overshoot decay. A round-by-round Monte Carlo of the "
            "RFC's rules under the same Bernoulli loss (`todays_tcp.response_under_bernoulli_loss`, "
            "independent of the simulator) separates what the closed form's deterministic-loss "
            "assumption leaves out from what the simulator adds."
        ),
        published=(
            Published("average window, RTT 0.1 s, p = 1e-4 / 1e-2", "187 / 12 packets", "RFC 9438 Table 1"),
        ),
        phase_replicas=0,
    ),
    CubicFairness(
        id="cubic-fairness",
        title="CUBIC beside CUBIC shares fairly",
        paper=PAPER,
        figure="—",
        scenario_file="validation-cubic-fairness.toml",
        what_runs=(
            "two CUBIC flows (the linux preset) through a 10 Mbps dumbbell, 40 ms RTT, a one-BDP queue "
            "(drop-tail, or RED with the same limit), 120 s, seeds 1-5 (quick: 40 s, seeds 1-2)"
        ),
        must_hold="Jain's index ≥ 0.95, mean over the seeds, through drop-tail and through RED",
        explanation=(
            "Two flows of the same control and RTT converge to equal shares (RFC 9438 §5.6: CUBIC's "
            "fairness to itself; fast convergence speeds it up). Goodput counts from 10 s on."
        ),
        published=(Published("Jain's index of two CUBIC flows", "≥ 0.95", "fairstream issue 22"),),
    ),
    BbrCubic(
        id="bbr-cubic",
        title="BBR beside CUBIC: most of a shallow buffer, less of a deep one",
        paper=PAPER,
        figure="—",
        scenario_file="validation-bbr-cubic.toml",
        what_runs=(
            "one BBR and one CUBIC flow (the linux preset, BBR paced) through a 10 Mbps dumbbell, 40 ms "
            "RTT, a drop-tail buffer of 0.5, 1, 2, 4, 8 and 16 bandwidth-delay products, 120 s, seeds 1-3 "
            "(quick: 0.5 and 8 BDP, 40 s, seed 1)"
        ),
        must_hold=(
            "BBR takes more than half of the throughput with the shallowest buffer, and less than half, "
            "and less than there, with the deepest"
        ),
        explanation=(
            "BBR v1 keeps at most twice its bandwidth-delay estimate in flight and ignores loss; CUBIC "
            "fills the buffer until it loses. In a shallow buffer CUBIC's losses come often and BBR's "
            "pacing keeps the link, so BBR takes most; in a deep one BBR's in-flight cap leaves the "
            "queue to CUBIC, whose share grows with the buffer. Hock, Bless and Zitterbart (ICNP 2017, "
            "§V.B, one BBR against one CUBIC flow at 0.8 and 8 BDP of buffer) and Ware, Mukerjee, "
            "Seshan and Sherry (IMC 2019, §4: BBR's share as a function of the buffer, set by its "
            "in-flight cap) report this shape; their exact shares are for their testbeds, so only the "
            "shape is checked here."
        ),
        published=(
            Published(
                "BBR's share, shallow buffer", "most", "Hock et al. ICNP 2017 §V.B; Ware et al. IMC 2019"
            ),
            Published(
                "BBR's share, deep buffer", "less than CUBIC's", "Hock et al. ICNP 2017 §V.B; Ware et al."
            ),
        ),
    ),
)
