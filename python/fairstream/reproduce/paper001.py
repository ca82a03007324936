"""Paper 001 (Chung and Claypool, flow-controlled multimedia over UDP: MM_APP and MPEG_APP).

Experiments ``mm-share`` (Fig. 4: six FTP flows over TCP Reno, two MM_APP and two MPEG_APP flows on
a 6 Mbit/s RED bottleneck) and ``mm-jitter`` (Fig. 5: the inter-arrival times of TCP against
MM_APP), run from ``scenarios/papers/001-*.toml``. mm-share also prints paper 001's scale tables
(Table 2, both GOP patterns) and the rate of each MPEG_APP scale as our media model computes it,
beside the paper's estimates.

Throughput counts wire bytes (headers included) delivered to the receiver in the window.
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
from ..scenario import copy_doc, packaged
from ..table import fmt
from . import todays_tcp_column as todays
from .experiment import SPLIT_PRONE_REPLICAS, Check, Evaluation, Experiment, Figure, Point, Published
from .media import playout_rows
from .rate_control_validation import metric_series, time_average

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")

PAPER = "001"

#: The two measurement windows of Fig. 4, seconds.
WINDOWS: tuple[tuple[float, float], ...] = ((5.0, 15.0), (15.0, 25.0))
#: The bottleneck, kbit/s, and the fair share in each window: 6 Mbit/s over 7, then over 10 flows.
CAPACITY_KBPS = 6000.0
FAIR_SHARE_KBPS = {WINDOWS[0]: CAPACITY_KBPS / 7, WINDOWS[1]: CAPACITY_KBPS / 10}
#: The paper's fair shares as printed.
FAIR_SHARE_PUBLISHED = (857.1, 600.0)

#: Our flow names (the scenario's), the paper's labels, and whether the flow is a media flow.
FLOWS: tuple[str, ...] = ("ftp1", "ftp2", "ftp3", "ftp4", "ftp5", "ftp6", "mm1", "mm2", "mpeg1", "mpeg2")
LABELS = {
    **{f"ftp{k}": f"FTP-TCP{k}" for k in range(1, 7)},
    "mm1": "MM-UDP1",
    "mm2": "MM-UDP2",
    "mpeg1": "MPEG-UDP1",
    "mpeg2": "MPEG-UDP2",
}
MEDIA = ("mm1", "mm2", "mpeg1", "mpeg2")
#: The flows that join at 15 s.
LATE = ("ftp6", "mm2", "mpeg2")

#: Fig. 4's table, kbit/s, per flow: (5-15 s, 15-25 s); None where the flow had not started.
FIG4: dict[str, tuple[float | None, float]] = {
    "ftp1": (733.2, 505.2),
    "ftp2": (888.0, 464.4),
    "ftp3": (717.6, 552.0),
    "ftp4": (958.8, 412.8),
    "ftp5": (841.2, 428.4),
    "ftp6": (None, 367.2),
    "mm1": (868.8, 669.6),
    "mm2": (None, 727.8),
    "mpeg1": (809.6, 826.8),
    "mpeg2": (None, 647.2),
}

#: Fig. 2(b): the paper's estimated MPEG_APP rate of scales 0 to 4, kbit/s.
PUBLISHED_SCALE_KBPS = (352.0, 544.0, 736.0, 896.0, 1056.0)
#: The stream of Fig. 2(a): pattern 1 at 30 frame/s, I 11000 B, P 8000 B, B 2000 B; packets of at most
#: 1500 bytes (the paper's UDP maximum).
MPEG_STREAM = {
    "frame_rate": 30.0,
    "i_bytes": 11_000,
    "p_bytes": 8_000,
    "b_bytes": 2_000,
    "max_packet_bytes": 1500,
}

#: Table 2 as the paper prints it, scale 0 first: the frames sent, "." for a frame left out.
TABLE2: dict[str, tuple[str, ...]] = {
    "IBBPBBPBB": ("I........", "I..P.....", "I..P..P..", "I.BP.BP.B", "IBBPBBPBB"),
    "IBBPBBPBBPBB": ("I...........", "I..P........", "I..P..P..P..", "I.BP.BP.BP.B", "IBBPBBPBBPBB"),
}

#: The per-flow columns mm-share repeats, prefixed ``linux_``, for the run with today's TCP.
LINUX_COLUMNS = ("kbps", "share", "scale")

#: Fig. 5 starts measuring after the start-up, as Fig. 4 does (chosen: the same 5 s).
JITTER_FROM_S = 5.0


def window_label(w: tuple[float, float]) -> str:
    return f"{w[0]:g}-{w[1]:g} s"


def kbps(run: RunResult, flow: str, window: tuple[float, float]) -> float:
    """kbit/s of wire bytes `flow` delivered over `window` (from the interval series)."""
    t0, t1 = window
    s = run.flow_series.filter(
        (pl.col("flow") == flow) & (pl.col("t_start") >= t0 - 1e-9) & (pl.col("t_start") < t1 - 1e-9)
    )
    return float(s["bytes_delivered"].sum()) * 8 / (t1 - t0) / 1e3


def mean_scale(run: RunResult, flow: str, window: tuple[float, float]) -> float:
    """The time-average of a media sender's scale over `window`."""
    t, v = metric_series(run, flow, "scale")
    return time_average(t, v, *window)


def mean_kbps(rows: Sequence[Mapping[str, Any]], flows: Sequence[str], k: int) -> float:
    """The mean throughput over window `k` of the `flows` among mm-share's per-flow `rows` that ran."""
    return statistics.fmean(r[f"kbps_{k}"] for r in rows if r["flow"] in flows and r[f"kbps_{k}"] is not None)


def scale_rates() -> tuple[list[float], list[float]]:
    """Our MPEG_APP rate per scale, kbit/s, scale 0 first: (encoded, on the wire)."""
    encoded, wire = _core.mpeg_scale_rates("IBBPBBPBB", **MPEG_STREAM)
    return [x / 1e3 for x in encoded], [x / 1e3 for x in wire]


def _run(exp_dir: Path, result: Mapping[str, Any], key: str) -> RunResult:
    return RunResult(exp_dir / result["runs"][key])


def _span(values: Sequence[float], digits: int = 2) -> str:
    return f"{min(values):.{digits}f} to {max(values):.{digits}f}"


def _held(what: str, held: Sequence[bool]) -> str:
    """Whether `what` held in each run (canonical first), in words."""
    n, k = len(held), sum(held)
    if k == n:
        return f"{what} holds in all {n} runs."
    canonical = "the canonical run and " if held[0] else "not the canonical run but "
    replicas = f"{k - held[0]} of {n - 1} replicas"
    return f"{what} holds in {k} of {n} runs ({canonical}{replicas}): it depends on phase."


# ---------------------------------------------------------------------------------------------
# mm-share


@dataclass(frozen=True)
class MmShare(Experiment):
    """Fig. 4: every flow gets a share; the media flows are greedier but starve no one."""

    starved: float = 0.4
    greedy: float = 1.6

    def points(self, quick: bool) -> list[Point]:
        # The run is 25 s of ten flows, well under a second: the quick form is the full one. Beside
        # today's TCP: the same mix with the FTP flows as the linux preset (CUBIC).
        paper = [Point("mix", {}, self.base_scenario())]
        return paper + todays.todays_points(paper)

    @staticmethod
    def _flow_rows(run: RunResult) -> list[dict[str, Any]]:
        """Per flow: its throughput, share of the fair share and (media) mean scale per window."""
        rows: list[dict[str, Any]] = []
        for flow in FLOWS:
            row: dict[str, Any] = {"flow": flow, "label": LABELS[flow]}
            for k, w in enumerate(WINDOWS):
                active = not (k == 0 and flow in LATE)
                ours = kbps(run, flow, w) if active else None
                row[f"kbps_{k}"] = ours
                row[f"share_{k}"] = ours / FAIR_SHARE_KBPS[w] if ours is not None else None
                row[f"published_{k}"] = FIG4[flow][k]
                if flow in MEDIA:
                    row[f"scale_{k}"] = mean_scale(run, flow, w) if active else None
            rows.append(row)
        return rows

    def _shares(
        self, rows: Sequence[Mapping[str, Any]], fair_share: bool = True
    ) -> tuple[list[dict[str, Any]], list[Check]]:
        """Fig. 4's table (each flow per window, and the fair share) and the share checks."""
        comparison: list[dict[str, Any]] = []
        for k, w in enumerate(WINDOWS):
            for r in rows:
                if r[f"kbps_{k}"] is not None:
                    comparison.append(
                        {
                            "quantity": f"{r['label']}, {window_label(w)} (kbit/s)",
                            "ours": r[f"kbps_{k}"],
                            "published": r[f"published_{k}"],
                        }
                    )
            if fair_share:
                comparison.append(
                    {
                        "quantity": f"fair share, {window_label(w)} (kbit/s)",
                        "ours": FAIR_SHARE_KBPS[w],
                        "published": FAIR_SHARE_PUBLISHED[k],
                    }
                )
        checks = []
        for k, w in enumerate(WINDOWS):
            active = [r for r in rows if r[f"share_{k}"] is not None]
            low = min(active, key=lambda r: r[f"share_{k}"])
            checks.append(
                Check(
                    f"{window_label(w)}: no flow starved, each ≥ {self.starved * 100:g} % of the fair share "
                    f"({FAIR_SHARE_KBPS[w]:.1f} kbit/s); ours: the lowest share, {low['label']}",
                    low[f"share_{k}"],
                    min(FIG4[r["flow"]][k] or math.inf for r in active) / FAIR_SHARE_PUBLISHED[k],
                    low[f"share_{k}"] >= self.starved,
                )
            )
        for k, w in enumerate(WINDOWS):
            media = [r for r in rows if r["flow"] in MEDIA and r[f"share_{k}"] is not None]
            high = max(media, key=lambda r: r[f"share_{k}"])
            published_high = max(FIG4[r["flow"]][k] or 0.0 for r in media) / FAIR_SHARE_PUBLISHED[k]
            checks.append(
                Check(
                    f"{window_label(w)}: every media flow ≤ {self.greedy:g} × the fair share; ours: the "
                    f"highest, {high['label']}",
                    high[f"share_{k}"],
                    round(published_high, 3),
                    high[f"share_{k}"] <= self.greedy,
                )
            )
        return comparison, checks

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        paper_runs, todays_runs = todays.split(runs)
        run = paper_runs[0][1]
        rows = self._flow_rows(run)
        comparison, checks = self._shares(rows)
        encoded, wire = scale_rates()
        for s in reversed(range(5)):
            comparison.append(
                {
                    "quantity": f"MPEG_APP scale {s} rate, kbit/s: encoded frames (on the wire)",
                    "ours": f"{encoded[s]:.1f} ({wire[s]:.1f})",
                    "published": PUBLISHED_SCALE_KBPS[s],
                }
            )
        # The media flows' playout: the receivers play through the streamer's player (a live player,
        # 1 s of prebuffer; paper 001 describes none), as paper 000's flows do.
        playout = {p["flow"]: p for p in playout_rows(run.summary)}
        for flow in MEDIA:
            p = playout.get(flow)
            if p is None:
                continue
            comparison.append(
                {
                    "quantity": f"{LABELS[flow]}: frames delivered / decodable at their turn / late; "
                    "stalls (s stalled)",
                    "ours": f"{p['frames_delivered']} / {p['frames_decodable']} / {p['frames_late']}; "
                    f"{p['stalls']} ({fmt(p['stall_time_s'], 3)})",
                    "published": "— (no player in the paper)",
                }
            )
        table_ok = True
        for pattern, published in TABLE2.items():
            ours_rows = _core.mpeg_policy_table(pattern)
            table_ok &= tuple(ours_rows) == published
            for s in reversed(range(5)):
                comparison.append(
                    {
                        "quantity": f"Table 2, {pattern}, scale {s}: frames sent",
                        "ours": ours_rows[s],
                        "published": published[s],
                    }
                )

        checks.append(
            Check(
                "MPEG_APP's frames per scale are Table 2's, for both GOP patterns (self-check: our frame "
                "selection against the paper's table, no run)",
                "equal" if table_ok else "different",
                "Table 2",
                table_ok,
                self_check=True,
            )
        )

        notes = self._notes(rows, encoded, wire)
        if todays_runs:
            linux = self._flow_rows(todays_runs[0][1])
            linux_comparison, linux_checks = self._shares(linux, fair_share=False)
            comparison += todays.reported_rows(linux_comparison)
            checks += todays.reported_checks(linux_checks)
            notes += [self._todays_note(rows, linux), todays.column_note()]
            # Today's numbers as columns of the same per-flow rows.
            for row, theirs in zip(rows, linux, strict=True):
                row.update({f"linux_{k}": v for k, v in theirs.items() if k.split("_")[0] in LINUX_COLUMNS})
        return Evaluation(rows, comparison, checks, {}, notes)

    @staticmethod
    def _todays_note(rows: Sequence[Mapping[str, Any]], linux: Sequence[Mapping[str, Any]]) -> str:
        tcp = [f for f in FLOWS if f.startswith("ftp")]
        return (
            "With the FTP flows as the linux preset (CUBIC) instead of the paper's Reno: "
            + "; ".join(
                f"over {window_label(w)} the media flows averaged {mean_kbps(linux, MEDIA, k):.0f} kbit/s "
                f"(beside Reno {mean_kbps(rows, MEDIA, k):.0f}) and the FTP flows "
                f"{mean_kbps(linux, tcp, k):.0f} (Reno {mean_kbps(rows, tcp, k):.0f})"
                for k, w in enumerate(WINDOWS)
            )
            + "."
        )

    def _notes(
        self, rows: Sequence[Mapping[str, Any]], encoded: Sequence[float], wire: Sequence[float]
    ) -> list[str]:
        def published_mean(flows: Sequence[str], k: int) -> float:
            return statistics.fmean(v for f in flows if (v := FIG4[f][k]) is not None)

        tcp = [f for f in FLOWS if f.startswith("ftp")]
        parts = []
        for k, w in enumerate(WINDOWS):
            scales = [r[f"scale_{k}"] for r in rows if r["flow"] in MEDIA and r.get(f"scale_{k}") is not None]
            parts.append(
                f"over {window_label(w)} the media flows averaged {mean_kbps(rows, MEDIA, k):.0f} kbit/s "
                f"(paper {published_mean(MEDIA, k):.0f}) and the FTP flows {mean_kbps(rows, tcp, k):.0f} "
                f"(paper {published_mean(tcp, k):.0f}), the media senders at a mean scale of "
                f"{statistics.fmean(scales):.2f}"
            )
        return [
            "Throughput is wire bytes delivered per window. As in the paper, the media flows are greedier "
            "than TCP, more so once three more flows join: "
            + "; ".join(parts)
            + ". A rate-based sender that steps up 200 kbit/s per loss-free RTT and halves per "
            "loss episode holds a higher rate than Reno under RED's random drops, as the paper explains; "
            "where our numbers differ from Fig. 4's, the paper's single run (no seed; RED parameters only "
            "'one of the sets recommended by Floyd and Jacobson'; its MM_APP frame size and the details of "
            "its scaling rule unstated) leaves too much open to expect agreement to the digit.",
            "MPEG_APP's rate per scale, ours: the bytes of the frames each scale sends in one 9-frame GOP "
            "(0.3 s at 30 frame/s), "
            + " / ".join(f"{x:.1f}" for x in encoded)
            + " kbit/s for scales 0 to 4, or "
            + " / ".join(f"{x:.1f}" for x in wire)
            + " kbit/s on the wire (frames split into packets of at most 1500 bytes, 50 bytes of IP, UDP "
            "and media headers each); the paper estimates 352 / 544 / 736 / 896 / 1056. Its steps between "
            "scales 4, 3 and 2 (160 kbit/s, three B frames of 2000 B per GOP) are ours, but its two lower "
            "steps (192 kbit/s for one P frame of 8000 B, ours 213) and its scale 0 (352 kbit/s would be 4 I "
            "frames of 11000 B per second, not 30/9) do not follow from the sizes it gives; how it estimated "
            "them is not said.",
        ]

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        evs = [canonical, *replicas]
        parts = []
        for k, w in enumerate(WINDOWS):
            lows = [
                min((r for r in e.points if r[f"share_{k}"] is not None), key=lambda r: r[f"share_{k}"])
                for e in evs
            ]
            highs = [
                max(r[f"share_{k}"] for r in e.points if r["flow"] in MEDIA and r[f"share_{k}"] is not None)
                for e in evs
            ]
            starved = [lw[f"share_{k}"] < self.starved for lw in lows]
            who = sorted({lw["label"] for lw, st in zip(lows, starved, strict=True) if st})
            low_span = _span([lw[f"share_{k}"] for lw in lows])
            parts.append(
                f"over {window_label(w)} the lowest flow gets {low_span} of the fair share"
                + (f" (below {self.starved * 100:g} %: {', '.join(who)})" if who else "")
                + f" and the greediest media flow {_span(highs)}"
            )
        return [
            f"Phase sensitivity, over the canonical run and {len(replicas)} phase replicas: "
            + "; ".join(parts)
            + ". "
            + _held(
                f"That no flow falls below {self.starved * 100:g} % of the fair share in either window",
                [
                    all(
                        r[f"share_{k}"] >= self.starved
                        for k in range(len(WINDOWS))
                        for r in e.points
                        if r[f"share_{k}"] is not None
                    )
                    for e in evs
                ],
            )
            + " The windows are 10 s long, as the paper's: a few loss events more or less move one TCP "
            "flow's share a long way."
        ]

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        rows = result["points"]
        out = []
        for k, w in enumerate(WINDOWS):
            shown = [r for r in rows if r[f"kbps_{k}"] is not None]
            linux = f"linux_kbps_{k}" in shown[0]
            path = plots.bars_beside_published(
                fig_dir / f"{self.id}-{k + 1}.png",
                [r["label"].replace("-", "\n") for r in shown],
                [r[f"kbps_{k}"] for r in shown],
                [r[f"published_{k}"] for r in shown],
                title=f"{self.id}: throughput {window_label(w)} (Fig. 4's table; fair share "
                f"{FAIR_SHARE_KBPS[w]:.1f} kbit/s)",
                ylabel="kbit/s",
                also=[
                    ("fairstream, FTP over the linux preset (CUBIC)", [r[f"linux_kbps_{k}"] for r in shown])
                ]
                if linux
                else [],
            )
            out.append(
                Figure(
                    path,
                    f"Fig. 4's table beside ours, {window_label(w)}: each flow's delivered throughput "
                    f"(wire bytes), kbit/s; the fair share is {FAIR_SHARE_KBPS[w]:.1f} kbit/s."
                    + (
                        " The third bar: the same mix with the FTP flows as the linux preset (CUBIC) "
                        "instead of Reno (no published number)."
                        if linux
                        else ""
                    ),
                )
            )

        run = _run(exp_dir, result, "mix")
        fig, axes = plt.subplots(3, 1, figsize=(9.0, 8.5), sharex=True)
        for ax, flows, title in (
            (axes[0], [f for f in FLOWS if f.startswith("ftp")], "FTP over TCP Reno"),
            (axes[1], list(MEDIA), "MM_APP and MPEG_APP"),
        ):
            for flow in flows:
                s = run.flow_series.filter(pl.col("flow") == flow).sort("t_start")
                width = (s["t_end"] - s["t_start"]).to_list()
                y = [b * 8 / wd / 1e3 for b, wd in zip(s["bytes_delivered"].to_list(), width, strict=True)]
                ax.plot(s["t_end"].to_list(), y, linewidth=0.9, label=LABELS[flow])
            ax.set_title(title, fontsize="small")
            ax.set_ylabel("kbit/s per 0.5 s", fontsize="small")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="x-small", ncol=3, loc="upper right")
        for flow in MEDIA:
            t, v = metric_series(run, flow, "scale")
            if t:
                axes[2].step(t + [25.0], v + [v[-1]], where="post", linewidth=0.9, label=LABELS[flow])
        axes[2].set_title("the media senders' scale", fontsize="small")
        axes[2].set_ylabel("scale", fontsize="small")
        axes[2].set_yticks(range(5))
        axes[2].set_xlabel("time (s)")
        axes[2].grid(alpha=0.3)
        axes[2].legend(fontsize="x-small", ncol=4, loc="lower right")
        fig.suptitle(f"{self.id}: delivered throughput and scale over time", fontsize="medium")
        out.append(
            Figure(
                plots.save(fig, fig_dir / f"{self.id}-time.png"),
                "Each flow's delivered throughput per 0.5 s and the media senders' scale: the paper shows "
                "only the table.",
            )
        )
        return out


# ---------------------------------------------------------------------------------------------
# mm-jitter


def arrival_times(run: RunResult, flow: str, since: float = JITTER_FROM_S) -> list[float]:
    """When `flow`'s data packets reached its receiver (from the packet trace), from `since` on."""
    summary = run.summary
    dst = next(f["dst"] for f in summary["flows"] if f["name"] == flow)
    flow_id = next(f["flow_id"] for f in summary["flows"] if f["name"] == flow)
    link = next(lk["link_id"] for lk in summary["links"] if lk["dst"] == dst)
    p = run.packets.filter(
        (pl.col("event") == "r")
        & (pl.col("link_id") == link)
        & (pl.col("flow_id") == flow_id)
        & ~pl.col("reverse")
    ).sort("t_ns")
    return [t for t in p["t"].to_list() if t >= since]


def gaps(times: Sequence[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


@dataclass(frozen=True)
class MmJitter(Experiment):
    """Fig. 5: TCP's inter-arrival times vary far more than MM_APP's."""

    mix_scenario: str = "001-mm-share.toml"

    def points(self, quick: bool) -> list[Point]:
        mix = tomlio.loads(packaged("papers", self.mix_scenario).read_text(encoding="utf-8"))
        mix = copy_doc(mix)
        mix["record"]["packets"] = ["receive"]  # what `arrival_times` reads
        return [
            Point("pair", {"setting": "pair", "tcp": "ftp1", "media": "mm1"}, self.base_scenario()),
            Point("mix", {"setting": "mix", "tcp": "ftp1", "media": "mm1"}, mix),
        ]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = []
        for point, run in runs:
            row: dict[str, Any] = {"setting": point.params["setting"]}
            for role in ("tcp", "media"):
                flow = point.params[role]
                g = gaps(arrival_times(run, flow))
                row[f"{role}_flow"] = flow
                row[f"{role}_packets"] = len(g) + 1
                row[f"{role}_mean_ms"] = statistics.fmean(g) * 1e3 if g else math.nan
                row[f"{role}_sd_ms"] = statistics.pstdev(g) * 1e3 if len(g) > 1 else math.nan
                row[f"{role}_max_ms"] = max(g) * 1e3 if g else math.nan
            tcp = next(f for f in run.summary["flows"] if f["name"] == point.params["tcp"])
            row["tcp_dropped"] = tcp["packets_dropped"]
            player = next((p for p in playout_rows(run.summary) if p["flow"] == point.params["media"]), {})
            row["media_frames_decodable"] = player.get("frames_decodable")
            row["media_frames_late"] = player.get("frames_late")
            row["media_stalls"] = player.get("stalls")
            row["media_jitter_ms"] = player["jitter_s"] * 1e3 if player.get("jitter_s") is not None else None
            row["tcp_timeouts"] = run.metrics.filter(
                (pl.col("flow") == point.params["tcp"]) & (pl.col("metric") == "timeout")
            ).height
            rows.append(row)
        described = {
            "pair": "one TCP and one MM_APP flow alone (EXPERIMENTS.md)",
            "mix": "FTP-TCP1 and MM-UDP1 in the mm-share mix",
        }
        comparison, checks = [], []
        for r in rows:
            where = described[r["setting"]]
            comparison += [
                {
                    "quantity": f"{where}: std. dev. of inter-arrival time, TCP / MM_APP (ms)",
                    "ours": f"{r['tcp_sd_ms']:.2f} / {r['media_sd_ms']:.2f}",
                    "published": "TCP far more variable (Fig. 5)",
                },
                {
                    "quantity": f"{where}: largest inter-arrival gap, TCP / MM_APP (ms); TCP timeouts",
                    "ours": f"{r['tcp_max_ms']:.0f} / {r['media_max_ms']:.0f}; {r['tcp_timeouts']}",
                    "published": "TCP's timeouts add huge peaks",
                },
                {
                    "quantity": f"{where}: MM_APP's player: frames decodable / late; stalls; RFC 3550 "
                    "jitter of its frames (ms)",
                    "ours": f"{r['media_frames_decodable']} / {r['media_frames_late']}; {r['media_stalls']}; "
                    f"{fmt(r['media_jitter_ms'], 3)}",
                    "published": "— (no player in the paper)",
                },
            ]
            checks.append(
                Check(
                    f"{where}: std. dev. of inter-arrival time, MM_APP < TCP",
                    round(r["media_sd_ms"] / r["tcp_sd_ms"], 4) if r["tcp_sd_ms"] else math.nan,
                    "MM_APP < TCP",
                    r["media_sd_ms"] < r["tcp_sd_ms"],
                )
            )
        pair = next(r for r in rows if r["setting"] == "pair")
        notes = [
            "Inter-arrival times are between consecutive data packets of a flow reaching its receiver, "
            f"from {JITTER_FROM_S:g} s on (the start-up left out, as in Fig. 4); a check's value is MM_APP's "
            "standard deviation over TCP's.",
            "Alone, the two flows hardly load the 6 Mbit/s bottleneck (TCP's 20-packet window allows "
            f"about {20 * 1500 * 8 / 0.062 / 1e6:.1f} Mbit/s at the 62 ms round trip, MM_APP at most 1.1): "
            f"TCP lost {pair['tcp_dropped']} packets and had {pair['tcp_timeouts']} timeouts, so its jitter "
            "is the burstiness of a window sent at once and clocked by ACKs. The spikes of the paper's "
            "Fig. 5 come from timeouts, which need congestion: the mix (the mm-share run with the packet "
            "trace on) shows them.",
        ]
        return Evaluation(rows, comparison, checks, {}, notes)

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        evs = [canonical, *replicas]
        notes = []
        for setting, where in (("pair", "Alone"), ("mix", "In the mm-share mix")):
            rows = [next(r for r in e.points if r["setting"] == setting) for e in evs]
            notes.append(
                f"{where}, over the canonical run and {len(replicas)} phase replicas, the standard deviation "
                f"of TCP's inter-arrival time is {_span([r['tcp_sd_ms'] for r in rows])} ms and MM_APP's "
                f"{_span([r['media_sd_ms'] for r in rows])} ms. "
                + _held("MM_APP < TCP", [r["media_sd_ms"] < r["tcp_sd_ms"] for r in rows])
            )
        notes.append(
            "Without congestion (the pair) TCP's jitter is a matter of phase: a 20-packet window that the "
            "ACK clock has spread evenly over the round trip arrives as smoothly as MM_APP's paced packets, "
            "one that still travels as a train does not. With congestion (the mix) TCP's losses and "
            "timeouts make it far more variable in every run, as the paper's Fig. 5 shows."
        )
        return notes

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        import matplotlib.pyplot as plt

        from . import plots

        fig, axes = plt.subplots(2, 1, figsize=(9.0, 6.5))
        titles = {"pair": "TCP and MM_APP alone", "mix": "FTP-TCP1 and MM-UDP1 in the mm-share mix"}
        for ax, r in zip(axes, result["points"], strict=True):
            run = _run(exp_dir, result, r["setting"])
            for role, label in (("tcp", "TCP"), ("media", "MM_APP")):
                t = arrival_times(run, r[f"{role}_flow"])
                ax.plot(t[1:], [g * 1e3 for g in gaps(t)], ".", markersize=2.0, label=label)
            ax.set_title(titles[r["setting"]], fontsize="small")
            ax.set_ylabel("inter-arrival (ms)", fontsize="small")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize="x-small", markerscale=4)
        axes[-1].set_xlabel("time (s)")
        fig.suptitle(
            f"{self.id}: inter-packet arrival times (paper 001 {self.figure} redrawn)", fontsize="medium"
        )
        return [
            Figure(
                plots.save(fig, fig_dir / f"{self.id}.png"),
                f"{self.figure} redrawn: the time between consecutive packet arrivals at the receiver, TCP "
                "against MM_APP, alone (top) and in the mm-share mix (bottom).",
            )
        ]


# ---------------------------------------------------------------------------------------------

_TOPOLOGY = (
    "Each source and sink on its own 10 Mbit/s / 5 ms link to n0 / n1; n0 -- n1 at 6 Mbit/s / 20 ms with "
    "RED (Floyd and Jacobson's recommended parameters: w_q 0.002, min_th 5, max_th 15 packets, max_p 1/50, "
    "a 50-packet limit), on both directions of the link (the paper says RED at n1; our queues belong to a "
    "link's transmitter and the data cross n0 → n1). FTP over TCP Reno with a 20-packet window and "
    "1500-byte packets; MM_APP at 300 / 500 / 700 / 900 / 1100 kbit/s with 1000-byte frames (chosen: "
    "ns-2 MmApp's default); MPEG_APP on the 30 frame/s IBBPBBPBB stream of Fig. 2 (I 11000 B, P 8000 B, "
    "B 2000 B), packets of at most 1500 bytes. The receiver halves the scale on a loss or a timeout "
    "(TOI = RTT if RTT > Max_Intrvl, else Max_Intrvl + RTT/2) and raises it one step after a loss-free RTT; "
    "losses within one RTT of a decrease do not halve again (our reading of the paper's Reno analogy, "
    "docs/scenarios.md). The flows of t = 0 start within 0.5 s, those of t = 15 s within 15-15.5 s "
    "(chosen). "
)

MM_SHARE = MmShare(
    id="mm-share",
    phase_replicas=SPLIT_PRONE_REPLICAS,
    title="MM_APP and MPEG_APP share a RED bottleneck with TCP without starving it",
    paper=PAPER,
    figure="Fig. 4",
    scenario_file="001-mm-share.toml",
    what_runs=(
        "t = 0: 5 FTP (TCP Reno), 1 MM_APP, 1 MPEG_APP; t = 15 s: +1 FTP, +1 MM_APP, +1 MPEG_APP; 25 s. "
        "Throughput over 5-15 s and 15-25 s. The same mix again with the FTP flows as the linux preset "
        "(CUBIC), reported beside. Also our MPEG_APP rate per scale and Table 2."
    ),
    must_hold=(
        "No flow starved (each ≥ 40 % of the fair share) and media flows ≤ 1.6 × the fair share, in both "
        "windows; the table printed beside the paper's."
    ),
    explanation=_TOPOLOGY
    + "Fair share: 6 Mbit/s over the 7 flows of 5-15 s (857.1 kbit/s) and the 10 of 15-25 s (600 kbit/s).",
    published=(
        Published(
            "Fig. 4 table, 5-15 s / 15-25 s (kbit/s)",
            "FTP 733-959 / 367-552; MM 869 / 670, 728; MPEG 810 / 827, 647",
            "Fig. 4",
        ),
        Published("fair share (kbit/s)", "857.1 / 600.0", "Fig. 4"),
        Published("MPEG_APP rate per scale 0-4 (kbit/s)", "352 / 544 / 736 / 896 / 1056", "Fig. 2(b)"),
    ),
)

MM_JITTER = MmJitter(
    id="mm-jitter",
    phase_replicas=SPLIT_PRONE_REPLICAS,
    title="TCP's inter-arrival times vary far more than MM_APP's",
    paper=PAPER,
    figure="Fig. 5",
    scenario_file="001-mm-jitter.toml",
    what_runs=(
        "One TCP flow and one MM_APP flow through the same bottleneck, 25 s; and the same pair of flows in "
        "the mm-share mix (its FTP-TCP1 and MM-UDP1), where the bottleneck is congested. Inter-arrival "
        "times at the receivers from 5 s on."
    ),
    must_hold="Std. dev. of inter-arrival time: MM_APP < TCP.",
    explanation=_TOPOLOGY
    + "The paper does not say which run Fig. 5 comes from; EXPERIMENTS.md asks for one TCP and one MM_APP "
    "flow, and we add the mm-share mix, which has the congestion that makes TCP time out.",
    published=(Published("TCP vs MM_APP jitter", "TCP far more variable, with timeout spikes", "Fig. 5"),),
)

EXPERIMENTS: tuple[Experiment, ...] = (MM_SHARE, MM_JITTER)
