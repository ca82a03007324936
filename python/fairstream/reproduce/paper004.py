"""Paper 004 (Yang, Gerla, Sanadidi, "Adaptive video streaming in presence of wireless errors":
VTP, Achieved Rate + Spike loss discrimination) on topology T-WIRELESS.

Experiments ``vtp-adapt`` (Fig. 6), ``vtp-friendly`` (Table 1, Fig. 7) and ``vtp-fair`` (Fig. 8),
run from ``scenarios/papers/004-*.toml``. Also the T-WIRELESS helpers paper 002's reproductions
share: the wireless link, the protocol swaps, rates per flow and per 1 s bin, the rate figures.

Throughput counts wire bytes (headers included) delivered to the receiver, over the whole run
unless said otherwise; "sending rate" counts the wire bytes the sender emits.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core
from ..lazy import on_first_use
from ..results import RunResult
from ..scenario import copy_doc, with_overrides
from ..table import fmt
from . import todays_tcp_column as todays
from .experiment import SPLIT_PRONE_REPLICAS, Check, Evaluation, Experiment, Figure, Point, Published
from .measure import link_utilisation, window_bps
from .rate_control_validation import metric_series, tfrc_equation, tfrc_packet
from .todays_tcp_column import PLACEMENT

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")

PAPER = "004"

# ---------------------------------------------------------------------------------------------
# T-WIRELESS, shared with paper 002

#: The wireless link of T-WIRELESS (the only bottleneck, the only lossy link) and its rate.
WIRELESS = "R->C"
CAPACITY_MBPS = 11.0
#: Its drop-tail queue: the pipe, 11 Mb/s × 72 ms / 8000 bit.
PIPE_PACKETS = 99
#: Round-trip propagation delay, seconds.
RTT_S = 0.072
#: Packet error rates the papers test.
PERS = (0.0, 0.01, 0.05)

#: The keys a flow takes when the reproduction swaps its protocol (placement keys — name, from,
#: to, start, stop — are kept). Every protocol sends 1000-byte packets on the wire; TCP is NewReno
#: with 1000 B of payload and a receiver window that never limits it. TFRC, TFRC Wireless and
#: MULTFRC's connections run ns-2's TFRC agent (`preset = "ns2"`): paper 002's footnote 2, "TFRC
#: Wireless is implemented in Ns-2.1b8a, VTP and MULTFRC Ns-2 are implemented in Ns-2.26. All
#: are obtained from original authors": the code the authors ran was ns-2's TFRC, not RFC 5348.
FLAVOURS: dict[str, dict[str, Any]] = {
    "vtp": {"protocol": "vtp", "packet_size": "1000B"},
    "tfrc": {"protocol": "tfrc", "preset": "ns2", "packet_size": "1000B"},
    "tfrc-wireless": {"protocol": "tfrc-wireless", "preset": "ns2", "lda": "spike", "packet_size": "1000B"},
    "multfrc": {"protocol": "multfrc", "preset": "ns2", "packet_size": "1000B"},
    "tcp": {"protocol": "tcp", "variant": "newreno", "packet_size": "1040B", "window": 1000},
}
LABELS = {"vtp": "VTP", "tfrc": "TFRC", "tfrc-wireless": "TFRC-W", "multfrc": "MULTFRC", "tcp": "TCP"}


def wireless_link(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The R -> C link table of a T-WIRELESS scenario dict."""
    for link in doc["topology"]["link"]:
        if link.get("from") == "R" and link.get("to") == "C":
            return link
    raise ValueError(f"scenario {doc.get('name')!r} has no link R -> C (topology T-WIRELESS)")


def with_per(doc: Mapping[str, Any], per: float) -> dict[str, Any]:
    """A copy of `doc` whose wireless link loses each packet with probability `per` (none at 0)."""
    out = copy_doc(doc)
    link = wireless_link(out)
    if per > 0:
        link["loss"] = {"kind": "bernoulli", "per": per}
    else:
        link.pop("loss", None)
    return out


def with_buffer(doc: Mapping[str, Any], packets: int) -> dict[str, Any]:
    """A copy of `doc` whose wireless link's drop-tail queue holds `packets`."""
    out = copy_doc(doc)
    wireless_link(out)["queue"] = {"kind": "droptail", "limit": f"{packets} packets"}
    return out


def protocol_keys(flow: Mapping[str, Any]) -> dict[str, Any]:
    """A flow's keys other than where and when it runs."""
    return {k: v for k, v in flow.items() if k not in PLACEMENT}


def as_protocol(
    flow: Mapping[str, Any], protocol: str, name: str | None = None, keys: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """`flow` running `protocol`: unchanged (renamed) when it already does and no `keys` are given,
    else its placement with `keys` (by default `FLAVOURS[protocol]`)."""
    if keys is None and flow.get("protocol", "tcp") == protocol:
        out = copy_doc(flow)
    else:
        out = copy_doc({k: flow[k] for k in PLACEMENT if k in flow})
        out.update(copy_doc(keys if keys is not None else FLAVOURS[protocol]))
    if name is not None:
        out["name"] = name
    return out


def shortened(doc: Mapping[str, Any], quick: bool, duration: str) -> dict[str, Any]:
    return with_overrides(doc, {"duration": duration} if quick else {})


def per_label(per: float) -> str:
    return f"{per * 100:g} %"


def mbps(
    run: RunResult, flow: str, since: float = 0.0, until: float | None = None, column: str = "bytes_delivered"
) -> float:
    """Mbit/s of `column` (wire bytes delivered, or ``bytes_sent``) of `flow` over [since, until)."""
    return window_bps(run, flow, since, until, column) / 1e6


def utilisation(run: RunResult, link: str = WIRELESS, since: float = 0.0) -> float:
    """Fraction of the wireless link's capacity its transmitter was busy from `since` on."""
    return link_utilisation(run, link, since)


def mean_queue(run: RunResult, link: str = WIRELESS) -> float:
    return float(next(lk["mean_queue_packets"] for lk in run.summary["links"] if lk["name"] == link))


def mean_rtt_ms(run: RunResult, flow: str) -> float:
    value = next(f.get("mean_rtt_s") for f in run.summary["flows"] if f["name"] == flow)
    return value * 1000 if value is not None else math.nan


def rate_series(run: RunResult, flow: str, column: str = "bytes_sent") -> tuple[list[float], list[float]]:
    """(bin end times, Mbit/s per bin) of one flow."""
    s = run.flow_series.filter(pl.col("flow") == flow).sort("t_start")
    width = (s["t_end"] - s["t_start"]).to_list()
    return s["t_end"].to_list(), [b * 8 / w / 1e6 for b, w in zip(s[column].to_list(), width, strict=True)]


def jain(values: Sequence[float]) -> float:
    return float(_core.jain([float(v) for v in values]))


def tfrc_rate_mbps(per: float, packet: tuple[int, int]) -> float:
    """The wire rate, Mbit/s, TFRC's equation allows at loss event rate `per` and R = 72 ms, for
    `packet` = (size on the wire, segment s) as a run sent it (`tfrc_packet`)."""
    size, s = packet
    return tfrc_equation(s, RTT_S, per) * size / s * 8 / 1e6


def run_of(exp_dir: Path, result: Mapping[str, Any], key: str) -> RunResult:
    return RunResult(exp_dir / result["runs"][key])


def rate_grid(
    path: Path,
    panels: Sequence[Sequence[tuple[str, Sequence[tuple[str, Sequence[float], Sequence[float]]]]]],
    *,
    title: str,
    ylabel: str = "sending rate (Mbit/s)",
    ymax: float = CAPACITY_MBPS * 1.15,
    steps: Sequence[Sequence[tuple[Sequence[float], Sequence[float]] | None]] | None = None,
) -> Path:
    """A grid of time plots: panels[row][col] = (panel title, [(label, t, y), ...]); `steps`
    adds, per panel, a dashed step line (e.g. the available bandwidth)."""
    import matplotlib.pyplot as plt

    from . import plots

    nrows, ncols = len(panels), max(len(r) for r in panels)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.2 * ncols + 1.0, 2.5 * nrows + 0.6), squeeze=False, sharex=True
    )
    for i, row in enumerate(panels):
        for j in range(ncols):
            ax = axes[i][j]
            if j >= len(row):
                ax.axis("off")
                continue
            name, lines = row[j]
            for label, t, y in lines:
                ax.plot(t, y, linewidth=0.9, label=label)
            step = steps[i][j] if steps is not None and j < len(steps[i]) else None
            if step is not None:
                ax.step(step[0], step[1], where="post", color="grey", linestyle="--", label="available")
            ax.set_title(name, fontsize="small")
            ax.set_ylim(bottom=0, top=max(ymax, ax.get_ylim()[1]))
            ax.grid(alpha=0.3)
            ax.legend(fontsize="x-small", loc="best")
            if i == nrows - 1:
                ax.set_xlabel("time (s)")
            if j == 0:
                ax.set_ylabel(ylabel, fontsize="small")
    fig.suptitle(title, fontsize="medium")
    return plots.save(fig, path)


def _flow_index(doc: Mapping[str, Any], name: str) -> int:
    return next(i for i, f in enumerate(doc["flow"]) if f["name"] == name)


_TOPOLOGY_CHOICES = (
    "Topology T-WIRELESS: each sender on its own server host with its own 100 Mbps / 35 ms link to "
    "the router R, every receiver on the one client node C behind the shared 11 Mbps / 1 ms wireless "
    "link R → C, the only bottleneck and the only lossy link (our choice of hosts; 72 ms round-trip "
    "propagation delay as the paper states). The bottleneck is drop-tail with 99 packets waiting "
    "(pfifo; ns-2's queue-limit of 99 holds one fewer). VTP, TFRC, TFRC Wireless and MULTFRC send "
    "1000-byte packets (TFRC's ns-2 agent: 968 B of segment and its 32-byte header); TCP NewReno "
    "1000 B of payload + 40 B of headers with a 1000-packet receiver window. TFRC, TFRC Wireless and "
    "MULTFRC's connections run ns-2's TFRC agent (`preset = \"ns2\"`), the code the authors ran "
    "(paper 002's footnote 2). Where two flows share the link, the second starts 0.37 s after the "
    "first (chosen, so that no events tie). "
)

# ---------------------------------------------------------------------------------------------
# vtp-adapt

#: The CBR rate in force in each phase, Mbit/s (chosen): 0 → 3 → 6 → 3 → 0.
CBR_STEPS_MBPS = (0.0, 3.0, 6.0, 3.0, 0.0)


@dataclass(frozen=True)
class VtpAdapt(Experiment):
    """Fig. 6: VTP (and TFRC in its place) alone against CBR stepping 0-3-6-3-0 Mbps."""

    protocols: tuple[str, ...] = ("vtp", "tfrc")
    phase_s: float = 60.0
    quick_phase_s: float = 20.0
    threshold: float = 0.85
    tfrc_ceiling: float = 0.40

    def points(self, quick: bool) -> list[Point]:
        phase = self.quick_phase_s if quick else self.phase_s
        base = with_overrides(self.base_scenario(), {"duration": f"{phase * len(CBR_STEPS_MBPS):g}s"})
        # The CBR source's rate steps through CBR_STEPS_MBPS, one step per phase.
        cbr = next(f for f in base["flow"] if f.get("protocol") == "cbr")
        cbr["rate"] = f"{CBR_STEPS_MBPS[0]:g}Mbps"
        cbr["schedule"] = [
            {"at": f"{k * phase:g}s", "rate": f"{rate:g}Mbps"} for k, rate in enumerate(CBR_STEPS_MBPS) if k
        ]
        under_test = base["flow"][0]
        out = []
        for protocol in self.protocols:
            for per in PERS:
                doc = with_per(base, per)
                doc["flow"][0] = as_protocol(under_test, protocol, name=protocol)
                params = {"protocol": protocol, "per": per, "phase_s": phase}
                out.append(Point(f"{protocol}-per-{per:g}", params, doc))
        return out

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        for point, run in runs:
            protocol, per, phase = (point.params[k] for k in ("protocol", "per", "phase_s"))
            shares, sent = [], []
            for k, cbr in enumerate(CBR_STEPS_MBPS):
                t0, t1 = k * phase, (k + 1) * phase
                available = CAPACITY_MBPS - cbr
                shares.append(mbps(run, protocol, t0, t1) / available)
                sent.append(mbps(run, protocol, t0, t1, "bytes_sent") / available)
            rows.append(
                {
                    "protocol": protocol,
                    "per": per,
                    "utilisation": statistics.fmean(shares),
                    **{f"phase{k + 1}": u for k, u in enumerate(shares)},
                    "sent_utilisation": statistics.fmean(sent),
                    "throughput_mbps": mbps(run, protocol),
                    "mean_queue_packets": mean_queue(run),
                }
            )
        by = {(r["protocol"], r["per"]): r for r in rows}
        comparison, checks = [], []
        for per in PERS:
            vtp, tfrc = by[("vtp", per)], by[("tfrc", per)]
            comparison += [
                {
                    "quantity": f"VTP, PER {per_label(per)}: delivered / available (mean of phases)",
                    "ours": vtp["utilisation"],
                    "published": "tracks the available bandwidth (Fig. 6)",
                },
                {
                    "quantity": f"TFRC, PER {per_label(per)}: delivered / available (mean of phases)",
                    "ours": tfrc["utilisation"],
                    "published": "tracks it" if per == 0 else "far below it (Fig. 6)",
                },
            ]
            checks.append(
                Check(
                    f"VTP's mean utilisation of the available bandwidth ≥ {self.threshold * 100:g} % at PER "
                    f"{per_label(per)}",
                    vtp["utilisation"],
                    "tracks the available bandwidth",
                    vtp["utilisation"] >= self.threshold,
                )
            )
        tfrc5 = by[("tfrc", 0.05)]
        checks.append(
            Check(
                f"TFRC's mean utilisation of the available bandwidth ≤ {self.tfrc_ceiling * 100:g} % at "
                "PER 5 %",
                tfrc5["utilisation"],
                "inefficient",
                tfrc5["utilisation"] <= self.tfrc_ceiling,
            )
        )
        checks.append(
            Check(
                "TFRC's mean utilisation at PER 0 % (reported, no threshold)",
                by[("tfrc", 0.0)]["utilisation"],
                "tracks the available bandwidth",
                None,
            )
        )
        notes = [
            "Utilisation is the flow's delivered wire rate in each phase over the bandwidth the CBR "
            "sources leave (11 Mbit/s minus their nominal rate), averaged over the five phases; the "
            "delivered rate is after the link's random losses, so at PER 5 % even a flow that keeps the "
            "link full delivers at most 95 % of it. "
            + "; ".join(
                f"TFRC's equation at p = {per_label(per)} and R = 72 ms allows "
                f"{tfrc_rate_mbps(per, tfrc_packet(runs)):.2f} "
                f"Mbit/s on the wire (ours delivered {by[('tfrc', per)]['throughput_mbps']:.2f})"
                for per in PERS
                if per > 0
            )
            + "."
        ]
        phase = runs[0][0].params["phase_s"]
        if quick:
            notes.append(f"Quick mode: {phase:g} s phases.")
        return Evaluation(rows, comparison, checks, {"phase_s": phase}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        phase = result["data"]["phase_s"]
        t_avail = [k * phase for k in range(len(CBR_STEPS_MBPS) + 1)]
        avail = [CAPACITY_MBPS - c for c in CBR_STEPS_MBPS] + [CAPACITY_MBPS - CBR_STEPS_MBPS[-1]]
        panels, steps = [], []
        for per in PERS:
            lines = []
            for protocol in self.protocols:
                run = run_of(exp_dir, result, f"{protocol}-per-{per:g}")
                t, y = rate_series(run, protocol)
                lines.append((LABELS[protocol], t, y))
            panels.append([(f"PER {per_label(per)}", lines)])
            steps.append([(t_avail, avail)])
        path = rate_grid(
            fig_dir / f"{self.id}.png",
            panels,
            steps=steps,
            title=f"{self.id}: solo VTP / TFRC against stepping CBR (paper 004 {self.figure} redrawn)",
        )
        return [
            Figure(
                path,
                f"{self.figure} redrawn: sending rate per 1 s of a solo VTP flow and, in another run, a solo "
                "TFRC flow, against CBR cross traffic stepping 0 → 3 → 6 → 3 → 0 Mbit/s; dashed: the "
                "bandwidth the CBR leaves (11 Mbit/s minus its rate).",
            )
        ]


# ---------------------------------------------------------------------------------------------
# vtp-friendly, and the friendliness measure paper 002 shares


def friendliness_points(
    base: Mapping[str, Any], partners: Sequence[str], pers: Sequence[float]
) -> list[Point]:
    """For each PER and each partner protocol, the scenario with the flow named "x" or "vtp" (the
    first flow) running the partner beside the flow "tcp"; partner "tcp" takes the TCP flow's keys
    and the name "tcp-peer"."""
    tcp = base["flow"][_flow_index(base, "tcp")]
    out = []
    for per in pers:
        for partner in partners:
            doc = with_per(base, per)
            first = doc["flow"][0]
            if partner == "tcp":
                doc["flow"][0] = as_protocol(first, "tcp", name="tcp-peer", keys=protocol_keys(tcp))
            else:
                doc["flow"][0] = as_protocol(first, partner, name=partner)
            out.append(Point(f"{partner}-tcp-per-{per:g}", {"partner": partner, "per": per}, doc))
    return out


def friendliness_rows(runs: Sequence[tuple[Point, RunResult]]) -> list[dict[str, Any]]:
    rows = []
    for point, run in runs:
        partner = point.params["partner"]
        peer = "tcp-peer" if partner == "tcp" else partner
        tcp = next(f for f in run.summary["flows"] if f["name"] == "tcp")
        _, rates = metric_series(run, peer, "rate")
        rows.append(
            {
                "partner": partner,
                "per": point.params["per"],
                "tcp": todays.tcp_of(point),
                "tcp_mbps": mbps(run, "tcp"),
                "partner_mbps": mbps(run, peer),
                "utilisation": utilisation(run),
                "tcp_rtt_ms": mean_rtt_ms(run, "tcp"),
                "tcp_loss": tcp["packets_dropped"] / tcp["packets_sent"] if tcp["packets_sent"] else math.nan,
                "mean_queue_packets": mean_queue(run),
                "queue_drops": next(
                    lk["packets_dropped"] for lk in run.summary["links"] if lk["name"] == WIRELESS
                ),
                "tcp_loss_events": loss_events(run, "tcp"),
                "partner_rate_cuts": (
                    loss_events(run, peer)
                    if partner == "tcp"
                    else sum(1 for a, b in zip(rates, rates[1:], strict=False) if b < 0.9 * a)
                ),
            }
        )
    return rows


def loss_events(run: RunResult, flow: str) -> int:
    """A TCP flow's loss events: its fast retransmits and timeouts."""
    m = run.metrics
    return m.filter((pl.col("flow") == flow) & pl.col("metric").is_in(["fast_retransmit", "timeout"])).height


def tcp_beside_tcp(rows: Sequence[Mapping[str, Any]], per: float) -> float:
    """TCP's throughput beside TCP at `per`: the same TCP flow (``"tcp"``, same host, same start) in
    the run where its partner is replaced by TCP, as paper 004 defines opportunistic friendliness
    ("compared to the throughput that they would achieve if all flows were TCP (i.e., NP flows
    replaced by TCP)") and paper 002 Fig. 7 applies it. Not the mean of the two TCP flows: the
    flow that starts first gets a little more, so the mean is biased by the partner's start."""
    r = next(r for r in rows if r["partner"] == "tcp" and r["per"] == per)
    return r["tcp_mbps"]


def friendliness_notes(rows: Sequence[Mapping[str, Any]], partner: str) -> list[str]:
    """What TCP meets beside `partner` and beside TCP, per PER: its loss rate (random and congestion
    losses), its mean RTT, the bottleneck's mean queue and its overflow drops."""
    parts = []
    for r in sorted((r for r in rows if r["partner"] == partner), key=lambda r: r["per"]):
        ref = next(x for x in rows if x["partner"] == "tcp" and x["per"] == r["per"])
        parts.append(
            f"at PER {per_label(r['per'])}, beside {LABELS[partner]} TCP loses "
            f"{r['tcp_loss'] * 100:.2f} % of its packets with a mean RTT of {fmt(r['tcp_rtt_ms'], 3)} ms "
            "(queue "
            f"{fmt(r['mean_queue_packets'], 3)} packets on average, {r['queue_drops']} overflow drops), "
            f"beside TCP {ref['tcp_loss'] * 100:.2f} % with {fmt(ref['tcp_rtt_ms'], 3)} ms (queue "
            f"{fmt(ref['mean_queue_packets'], 3)}, {ref['queue_drops']} drops); TCP went through "
            f"{r['tcp_loss_events']} loss events (fast retransmits and timeouts) beside {LABELS[partner]}, "
            f"whose rate fell by more than 10 % {r['partner_rate_cuts']} times, against "
            f"{ref['tcp_loss_events']} beside TCP"
        )
    return [
        f"TCP's throughput goes as 1 / (RTT·√loss rate); beside {LABELS[partner]} versus beside TCP: "
        f"{'; '.join(parts)}."
    ]


def episode_note(rows: Sequence[Mapping[str, Any]], partner: str, duration_s: float) -> list[str]:
    """At PER 0, when TCP beside `partner` falls short: how often each flow meets congestion."""
    r = next(x for x in rows if x["partner"] == partner and x["per"] == 0)
    ref = next(x for x in rows if x["partner"] == "tcp" and x["per"] == 0)
    if r["partner_rate_cuts"] == 0 or r["tcp_mbps"] >= 0.95 * tcp_beside_tcp(rows, 0.0):
        return []
    return [
        f"Without errors, {LABELS[partner]}'s rate fell by more than 10 % once every "
        f"{duration_s / r['partner_rate_cuts']:.2g} s on average, and the TCP flow beside it went through a "
        f"loss event every {duration_s / max(r['tcp_loss_events'], 1):.2g} s, against one every "
        f"{duration_s / max(ref['tcp_loss_events'], 1):.2g} s beside another TCP."
        + (
            " VTP cuts only to γ·AR and, after τ, returns to AR·(1 + e), AR being smoothed over many "
            "RTTs; probing on from there, it overflows the queue again long before TCP's halved window "
            "has grown back, and each overflow costs TCP another loss event."
            if partner == "vtp"
            else ""
        )
    ]


#: Table 1 of paper 004: TCP's throughput (Mbit/s) beside VTP and beside TCP, per PER.
TABLE1_004 = {0.0: (5.09, 5.14), 0.01: (1.22, 1.21), 0.05: (0.38, 0.38)}
#: Paper 002's Table 1, same authors and topology, PER 0, buffer = the pipe: VTP / TCP (Mbit/s).
TABLE1_002_PIPE = (5.84, 4.51)
#: VTP's γ (its cut to γ·AR), which neither paper gives: the default and the sensitivity printed.
DEFAULT_GAMMA = 0.75
GAMMAS = (0.5, 0.75, 0.9)


def gamma_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """How TCP beside VTP moves with γ, at every PER, beside the two tables of its authors."""
    parts = []
    for per in PERS:
        ref = tcp_beside_tcp(rows, per)
        by_gamma = {r["gamma"]: r for r in rows if r["partner"] == "vtp" and r["per"] == per}
        parts.append(
            f"PER {per_label(per)}: "
            + ", ".join(
                f"γ = {g:g}: TCP {by_gamma[g]['tcp_mbps']:.2f} Mbit/s "
                f"({by_gamma[g]['tcp_mbps'] / ref:.3f} of beside TCP), VTP {by_gamma[g]['partner_mbps']:.2f}"
                for g in GAMMAS
            )
        )
    vtp_002, tcp_002 = TABLE1_002_PIPE
    return (
        "γ, the fraction of AR VTP cuts to on congestion, is given in neither paper (0.75 is PROTOCOLS.md's "
        "[proposed] value; τ = RTT/(2(1 − γ)) follows from it). Not tuned; the sensitivity: "
        + "; ".join(parts)
        + f". The authors' two tables disagree at PER 0 on the same topology: paper 004's TCP beside VTP "
        f"gets {TABLE1_004[0.0][0]:.2f} Mbit/s, paper 002's (buffer = pipe) {tcp_002:.2f} beside VTP's "
        f"{vtp_002:.2f}, as a change of γ (or of VTP's code between the papers) could make them."
    )


@dataclass(frozen=True)
class VtpFriendly(Experiment):
    """Table 1: TCP beside VTP against TCP beside TCP; VTP takes what TCP leaves."""

    quick_duration: str = "100s"
    friendly: float = 0.95
    residual: float = 0.85

    def points(self, quick: bool) -> list[Point]:
        base = shortened(self.base_scenario(), quick, self.quick_duration)
        paper = friendliness_points(base, ("vtp", "tcp"), PERS)
        out = list(paper)
        # γ is not in the paper: VTP beside TCP again at the other values of GAMMAS.
        for point in [p for p in paper if p.params["partner"] == "vtp"]:
            for gamma in GAMMAS:
                if gamma == DEFAULT_GAMMA:
                    continue
                doc = copy_doc(point.scenario)
                doc["flow"][0]["gamma"] = gamma
                params = {**point.params, "gamma": gamma}
                out.append(Point(f"vtp-gamma-{gamma:g}-tcp-per-{point.params['per']:g}", params, doc))
        # Beside today's TCP: the table again with both TCP flows as the linux preset (γ = 0.75).
        return out + todays.todays_points(paper)

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        paper_runs, todays_runs = todays.split(runs)
        every = friendliness_rows(paper_runs)
        for row, (point, _) in zip(every, paper_runs, strict=True):
            row["gamma"] = point.params.get("gamma", DEFAULT_GAMMA) if row["partner"] == "vtp" else None
        rows = [r for r in every if r["gamma"] in (None, DEFAULT_GAMMA)]
        comparison, checks = self._table(rows)
        for per in PERS:
            ref = tcp_beside_tcp(rows, per)
            by_gamma = {r["gamma"]: r for r in every if r["partner"] == "vtp" and r["per"] == per}
            comparison.append(
                {
                    "quantity": f"PER {per_label(per)}: TCP beside VTP / beside TCP at γ = "
                    + " / ".join(f"{g:g}" for g in GAMMAS)
                    + " (γ not published; 0.75 ours)",
                    "ours": " / ".join(f"{by_gamma[g]['tcp_mbps'] / ref:.3f}" for g in GAMMAS),
                    "published": round(TABLE1_004[per][0] / TABLE1_004[per][1], 3),
                }
            )
        linux = friendliness_rows(todays_runs)
        for row in linux:
            row["gamma"] = DEFAULT_GAMMA if row["partner"] == "vtp" else None
        linux_comparison, linux_checks = self._table(linux)
        comparison += todays.reported_rows(linux_comparison)
        checks += todays.reported_checks(linux_checks)
        duration = float(runs[0][1].summary["duration_s"])
        notes = [
            *friendliness_notes(rows, "vtp"),
            *episode_note(rows, "vtp", duration),
            gamma_note(every),
            todays.column_note(),
        ]
        return Evaluation(every + linux, comparison, checks, {}, notes)

    def _table(self, rows: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        """Table 1's rows and the checks, from one TCP's rows (the paper's, or today's), γ = 0.75."""
        comparison: list[dict[str, Any]] = []
        checks: list[Check] = []
        for per in PERS:
            with_vtp = next(r for r in rows if r["partner"] == "vtp" and r["per"] == per)
            ref = tcp_beside_tcp(rows, per)
            ratio = with_vtp["tcp_mbps"] / ref if ref > 0 else math.nan
            pub_vtp, pub_tcp = TABLE1_004[per]
            comparison += [
                {
                    "quantity": f"PER {per_label(per)}: TCP beside VTP (Mbit/s)",
                    "ours": with_vtp["tcp_mbps"],
                    "published": pub_vtp,
                },
                {
                    "quantity": f"PER {per_label(per)}: TCP beside TCP (Mbit/s; the same flow, VTP replaced)",
                    "ours": ref,
                    "published": pub_tcp,
                },
                {
                    "quantity": f"PER {per_label(per)}: TCP beside VTP / beside TCP",
                    "ours": ratio,
                    "published": round(pub_vtp / pub_tcp, 3),
                },
                {
                    "quantity": f"PER {per_label(per)}: VTP beside TCP (Mbit/s)",
                    "ours": with_vtp["partner_mbps"],
                    "published": "the residual bandwidth" if per > 0 else "≈ an equal share",
                },
            ]
            checks.append(
                Check(
                    f"PER {per_label(per)}: TCP's throughput beside VTP ≥ {self.friendly * 100:g} % of its "
                    "throughput beside TCP",
                    ratio,
                    round(pub_vtp / pub_tcp, 3),
                    ratio >= self.friendly,
                )
            )
        for per in PERS:
            if per == 0:
                continue
            with_vtp = next(r for r in rows if r["partner"] == "vtp" and r["per"] == per)
            both_tcp = next(r for r in rows if r["partner"] == "tcp" and r["per"] == per)
            comparison.append(
                {
                    "quantity": f"PER {per_label(per)}: bottleneck utilisation, VTP + TCP (TCP + TCP)",
                    "ours": with_vtp["utilisation"],
                    "published": f"high (TCP + TCP here: {both_tcp['utilisation']:.3f})",
                }
            )
            checks.append(
                Check(
                    f"PER {per_label(per)}: VTP takes the residual bandwidth: bottleneck utilisation with "
                    f"VTP + TCP ≥ {self.residual * 100:g} % (our threshold)",
                    with_vtp["utilisation"],
                    "VTP uses the residual bandwidth",
                    with_vtp["utilisation"] >= self.residual,
                )
            )
        return comparison, checks

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        from . import plots

        linux = todays.present(result)
        panels = friendliness_panels(
            exp_dir,
            result,
            ("vtp", "tcp"),
            lambda partner, per: f"PER {per_label(per)}: {LABELS[partner]} + TCP",
        )
        if linux:  # today's TCP beside the paper's, two more columns
            more = friendliness_panels(
                exp_dir,
                result,
                ("vtp", "tcp"),
                lambda partner, per: f"PER {per_label(per)}: {LABELS[partner]} + TCP (linux preset)",
                suffix=todays.SUFFIX,
            )
            panels = [a + b for a, b in zip(panels, more, strict=True)]
        grid = rate_grid(
            fig_dir / f"{self.id}.png",
            panels,
            title=f"{self.id}: VTP + TCP, TCP + TCP"
            + (", then with TCP = the linux preset" if linux else "")
            + " (paper 004 Fig. 7 redrawn)",
        )
        labels, ours, published, todays_tcp = [], [], [], []
        for per in PERS:
            labels += [f"{per_label(per)}\nw/ VTP", f"{per_label(per)}\nw/ TCP"]
            published += list(TABLE1_004[per])
            for tcp, values in ((todays.PAPERS, ours), (todays.TODAYS, todays_tcp)):
                rows = [
                    r
                    for r in result["points"]
                    if r.get("gamma") in (None, DEFAULT_GAMMA) and r.get("tcp", todays.PAPERS) == tcp
                ]
                if rows:
                    with_vtp = next(r for r in rows if r["partner"] == "vtp" and r["per"] == per)
                    values += [with_vtp["tcp_mbps"], tcp_beside_tcp(rows, per)]
        bars = plots.bars_beside_published(
            fig_dir / f"{self.id}-table1.png",
            labels,
            ours,
            published,
            title=f"{self.id}: TCP throughput beside VTP / beside TCP (Table 1)",
            ylabel="TCP throughput (Mbit/s)",
            also=[(f"fairstream, {todays.LABEL}", todays_tcp)] if todays_tcp else [],
        )
        return [
            Figure(
                grid,
                "Fig. 7 redrawn: sending rate per 1 s of VTP and TCP sharing the bottleneck and of two TCP "
                "flows, at PER 0, 1 and 5 %"
                + (
                    "; the right two columns with both TCP flows as the linux preset (CUBIC)."
                    if linux
                    else "."
                ),
            ),
            Figure(
                bars,
                "Table 1 beside ours: TCP's throughput (wire bytes delivered over the run) beside VTP and "
                "beside another TCP (the same TCP flow, its partner replaced by TCP); the paper averages "
                "500 s, we run 300 s."
                + (f" The third bar: {todays.LABEL}, both TCP flows (no published number)." if linux else ""),
            ),
        ]


# ---------------------------------------------------------------------------------------------
# vtp-fair, and the fairness measure paper 002 shares


def friendliness_panels(
    exp_dir: Path,
    result: Mapping[str, Any],
    partners: Sequence[str],
    title: Callable[[str, float], str],
    suffix: str = "",
) -> list[list[tuple[str, list[tuple[str, list[float], list[float]]]]]]:
    """One row of `rate_grid` panels per PER: each partner's (or, for ``"tcp"``, the peer TCP's)
    sending rate beside the TCP flow's, from the runs keyed ``<partner>-tcp-per-<per><suffix>``."""
    panels = []
    for per in PERS:
        row = []
        for partner in partners:
            run = run_of(exp_dir, result, f"{partner}-tcp-per-{per:g}{suffix}")
            peer = "tcp-peer" if partner == "tcp" else partner
            lines = [
                (LABELS[partner] if partner != "tcp" else "TCP (peer)", *rate_series(run, peer)),
                ("TCP", *rate_series(run, "tcp")),
            ]
            row.append((title(partner, per), lines))
        panels.append(row)
    return panels


def fairness_row(run: RunResult, names: Sequence[str]) -> dict[str, Any]:
    rates = [mbps(run, n) for n in names]
    return {
        **{f"{n}_mbps": r for n, r in zip(names, rates, strict=True)},
        "jain": jain(rates),
        "utilisation": utilisation(run),
    }


@dataclass(frozen=True)
class VtpFair(Experiment):
    """Fig. 8: two VTP flows share equally and keep the link busy."""

    quick_duration: str = "100s"
    jain_threshold: float = 0.95
    threshold: float = 0.85

    def points(self, quick: bool) -> list[Point]:
        base = shortened(self.base_scenario(), quick, self.quick_duration)
        return [Point(f"per-{per:g}", {"per": per}, with_per(base, per)) for per in PERS]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        for point, run in runs:
            names = [f["name"] for f in point.scenario["flow"]]
            rows.append({"per": point.params["per"], **fairness_row(run, names)})
        comparison, checks = [], []
        for r in rows:
            per = per_label(r["per"])
            comparison += [
                {
                    "quantity": f"PER {per}: Jain's index of the two VTP flows",
                    "ours": r["jain"],
                    "published": "≈ 1",
                },
                {
                    "quantity": f"PER {per}: bottleneck utilisation",
                    "ours": r["utilisation"],
                    "published": "high",
                },
            ]
            checks += [
                Check(
                    f"PER {per}: Jain's index ≥ {self.jain_threshold:g} over the run",
                    r["jain"],
                    "equal shares",
                    r["jain"] >= self.jain_threshold,
                ),
                Check(
                    f"PER {per}: link utilisation ≥ {self.threshold * 100:g} %",
                    r["utilisation"],
                    "high utilisation",
                    r["utilisation"] >= self.threshold,
                ),
            ]
        notes = [
            "Jain's index is over the wire bytes each flow delivered in the whole run; link utilisation is "
            "the fraction of the run the wireless link's transmitter was busy, packets lost to errors "
            "included (they used the link)."
        ]
        return Evaluation(rows, comparison, checks, {}, notes)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        panels = []
        for per in PERS:
            run = run_of(exp_dir, result, f"per-{per:g}")
            names = [f["name"] for f in run.summary["flows"]]
            panels.append([(f"PER {per_label(per)}", [(n, *rate_series(run, n)) for n in names])])
        path = rate_grid(
            fig_dir / f"{self.id}.png",
            panels,
            title=f"{self.id}: two VTP flows (paper 004 {self.figure} redrawn)",
        )
        return [
            Figure(path, f"{self.figure} redrawn: sending rate per 1 s of two VTP flows, PER 0, 1 and 5 %.")
        ]


# ---------------------------------------------------------------------------------------------

_VTP = (
    "VTP as the simulator implements it (Achieved Rate + Spike, its defaults). Runs are 300 s (Section 5.1). "
)

VTP_ADAPT = VtpAdapt(
    id="vtp-adapt",
    title="VTP tracks the available bandwidth under random errors; TFRC does not",
    paper=PAPER,
    figure="Fig. 6",
    scenario_file="004-vtp-adapt.toml",
    what_runs=(
        "One VTP flow alone against CBR cross traffic stepping 0 → 3 → 6 → 3 → 0 Mbit/s every 60 s "
        "(two 3 Mbit/s CBR sources, on from 60 to 240 s and from 120 to 180 s), PER 0, 1 and 5 %; "
        "repeated with TFRC (ns-2's agent) in VTP's place. 300 s (quick mode: 20 s phases, 100 s)."
    ),
    must_hold=(
        "VTP's mean utilisation of the available bandwidth ≥ 85 % at every PER; TFRC's at 5 % PER ≤ 40 %."
    ),
    explanation=(
        _TOPOLOGY_CHOICES
        + _VTP
        + "The CBR schedule is our choice (the paper shows its steps but does not state them); the CBR "
        "sources send 1000-byte packets with dithered gaps. The paper plots the sending rates (Fig. 6) "
        "without numbers; we judge the delivered rate per phase against the bandwidth the CBR leaves."
    ),
    published=(
        Published("VTP", "tracks the available bandwidth at PER 0, 1, 5 %", "Fig. 6 and text"),
        Published("TFRC", "tracks it at PER 0 % only", "Fig. 6 and text"),
    ),
)

VTP_FRIENDLY = VtpFriendly(
    id="vtp-friendly",
    phase_replicas=SPLIT_PRONE_REPLICAS,
    title="VTP is opportunistically friendly to TCP",
    paper=PAPER,
    figure="Table 1",
    scenario_file="004-vtp-friendly.toml",
    what_runs=(
        "One VTP flow and one TCP NewReno flow share the bottleneck; then the VTP flow is replaced by TCP; "
        "PER 0, 1 and 5 %, 300 s (quick mode: 100 s); both again with the TCP flows as the linux preset "
        "(CUBIC), reported beside."
    ),
    must_hold=(
        "TCP's throughput beside VTP ≥ 95 % of its throughput beside TCP, at each PER; VTP takes the "
        "residual bandwidth at 1 % and 5 % (read as: bottleneck utilisation ≥ 85 %, our threshold)."
    ),
    explanation=(
        _TOPOLOGY_CHOICES
        + _VTP
        + "Table 1 gives the long-term throughput over 500 s; ours is over the whole 300 s run, wire bytes "
        "delivered (the paper's TCP throughput probably counts the same packets). TCP's throughput "
        "beside TCP is that of the same TCP flow (same host, same start) in the run where VTP is replaced "
        'by TCP (the paper\'s definition). "VTP takes the residual bandwidth" '
        "has no threshold in the paper; we read it as the bottleneck staying ≥ 85 % busy with VTP + "
        "TCP (the utilisation vtp-fair asks of two VTP flows)."
    ),
    published=(
        Published("TCP beside VTP (Mbit/s), PER 0 / 1 / 5 %", "5.09 / 1.22 / 0.38", "Table 1"),
        Published("TCP beside TCP (Mbit/s), PER 0 / 1 / 5 %", "5.14 / 1.21 / 0.38", "Table 1"),
    ),
)

VTP_FAIR = VtpFair(
    id="vtp-fair",
    title="Two VTP flows share the bottleneck equally",
    paper=PAPER,
    figure="Fig. 8",
    scenario_file="004-vtp-fair.toml",
    what_runs="Two VTP flows share the bottleneck, PER 0, 1 and 5 %, 300 s (quick mode: 100 s).",
    must_hold="Jain's index ≥ 0.95 over the run; link utilisation ≥ 85 %.",
    explanation=_TOPOLOGY_CHOICES + _VTP + "The paper shows the two rates (Fig. 8) without numbers.",
    published=(Published("two VTP flows", "equal shares, high utilisation", "Fig. 8 and text"),),
)

EXPERIMENTS: tuple[Experiment, ...] = (VTP_ADAPT, VTP_FRIENDLY, VTP_FAIR)
