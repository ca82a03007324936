"""What a router alone can fix: paper 003's ``collapse`` and ``unfair-udp`` sweeps run again with
per-flow fair queueing (``kind = "fq"``, deficit round robin) at the T1 instead of drop-tail.

The paper cures collapse and unfairness with ATM ABR, rate control that reaches back to the
sources. It leaves open what a router could do on its own. A fair queue at the T1 gives TCP its
share of the T1 whatever the UDP source sends (``fq-unfair-udp``), but in ``collapse`` it still
carries UDP packets across the T1 that the 512 kbps link downstream will drop: the T1 capacity
they use is lost to everyone, which only a source that learns of the downstream bottleneck avoids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..lazy import on_first_use
from ..results import RunResult
from .experiment import Check, Point, Published
from .paper003 import (
    _COMMON_CHOICES,
    T1_LINK,
    UDP_SINK_KBPS,
    Collapse,
    UdpLoadSweep,
    UnfairUdp,
    _full_load,
)

if TYPE_CHECKING:
    import polars as pl
else:
    pl = on_first_use("polars")

#: The fair queue put at both directions of the T1 (chosen): the same 50-packet buffer as the
#: drop-tail runs, and no flow may hold more than half of it (Linux ``fq`` drops an arrival over
#: either limit, so a full-rate UDP flow must not be able to fill the whole buffer).
FQ_QUEUE = {"kind": "fq", "limit": 50, "flow_limit": 25, "quantum": "1500B"}

#: TCP's fair share of the T1 against one UDP flow, and the least we accept as "keeps it" (chosen).
FAIR_SHARE = 0.5
KEEPS_SHARE = 0.4

#: UDP loads (× T1) from which the UDP flow alone could take more than its fair share.
OVERLOADED_FROM = 0.5

_FQ_CHOICE = (
    "The T1's queue is a per-flow fair queue (deficit round robin, quantum 1500 B) holding 50 packets "
    "in all and at most 25 of one flow (chosen; the drop-tail runs hold 50). "
)


def with_fq(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with the fair queue at the T1 (both directions), in place; returns it."""
    for link in doc["topology"]["link"]:
        if sorted(link.get("between", [link.get("from"), link.get("to")])) == ["N1", "N2"]:
            link["queue"] = dict(FQ_QUEUE)
    return doc


def _overloaded(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["udp_load"] >= OVERLOADED_FROM - 1e-9]


class _FairQueueSweep(UdpLoadSweep):
    """A paper 003 load sweep with the fair queue at the T1."""

    def points(self, quick: bool) -> list[Point]:
        return [Point(p.key, p.params, with_fq(p.scenario)) for p in super().points(quick)]

    def extra_columns(self, run: RunResult, warmup_s: float, t1_bps: float, tcp: float) -> dict[str, Any]:
        """``udp_t1``: UDP's share of the T1's transmissions (what the T1 carried, less TCP's)."""
        rows = run.link_series.filter((pl.col("link") == T1_LINK) & (pl.col("t_start") >= warmup_s - 1e-9))
        span = run.summary["duration_s"] - warmup_s
        carried = float(rows["bytes_forwarded"].sum()) * 8.0 / span / t1_bps
        return {"udp_t1": max(carried - tcp, 0.0)}

    def _share_check(self, rows: Sequence[dict[str, Any]]) -> Check:
        worst = min(r["tcp"] for r in _overloaded(rows))
        return Check(
            f"TCP keeps ≥ {KEEPS_SHARE:g} of T1 (fair share {FAIR_SHARE:g}) at every UDP load ≥ "
            f"{OVERLOADED_FROM:g} × T1",
            worst,
            "not studied (drop-tail: TCP → ≈ 0)",
            worst >= KEEPS_SHARE,
        )


@dataclass(frozen=True)
class FqCollapse(_FairQueueSweep, Collapse):
    """``collapse`` with the fair queue: TCP keeps its share, but the T1 still carries doomed UDP."""

    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        full = _full_load(rows)
        cap = UDP_SINK_KBPS / 1500
        wasted = full["udp_t1"] - full["udp"]
        comparison = [
            {"quantity": "TCP at UDP load = T1 (× T1)", "ours": full["tcp"], "published": "not studied"},
            {"quantity": "UDP carried across the T1 (× T1)", "ours": full["udp_t1"], "published": "—"},
            {"quantity": "UDP delivered to R2 (× T1)", "ours": full["udp"], "published": f"≤ {cap:.3f}"},
            {"quantity": "T1 capacity spent on UDP dropped later (× T1)", "ours": wasted, "published": "—"},
            {"quantity": "total delivered (× T1)", "ours": full["total"], "published": "—"},
        ]
        checks = [
            self._share_check(rows),
            Check(
                "what a router cannot fix: the T1 still carries UDP packets the 512 kbps link drops "
                "(≥ 5 % of T1 at full UDP load)",
                wasted,
                "—",
                wasted >= 0.05,
            ),
        ]
        return comparison, checks

    def conclusion(self) -> str:
        return "fair queueing keeps TCP's share of the T1, but UDP packets doomed downstream still use it"


@dataclass(frozen=True)
class FqUnfairUdp(_FairQueueSweep, UnfairUdp):
    """``unfair-udp`` with the fair queue: TCP keeps its share at every UDP load."""

    def judge(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Check]]:
        full = _full_load(rows)
        low_total = min(r["total"] for r in _overloaded(rows))
        comparison = [
            {"quantity": "TCP at UDP load = T1 (× T1)", "ours": full["tcp"], "published": "not studied"},
            {"quantity": "UDP at UDP load = T1 (× T1)", "ours": full["udp"], "published": "—"},
            {
                "quantity": f"lowest total at UDP load ≥ {OVERLOADED_FROM:g} (× T1)",
                "ours": low_total,
                "published": "—",
            },
        ]
        checks = [
            self._share_check(rows),
            Check(
                f"the T1 stays busy: total ≥ 0.9 × T1 at every UDP load ≥ {OVERLOADED_FROM:g}",
                low_total,
                "—",
                low_total >= 0.9,
            ),
        ]
        return comparison, checks

    def conclusion(self) -> str:
        return "with fair queueing at the T1 TCP keeps its share at every UDP load"


_OPEN = Published("fair queueing at the bottleneck", "not studied (the paper's cure is ATM ABR)", "—")

FQ_COLLAPSE = FqCollapse(
    id="fq-collapse",
    title="Collapse with a fair queue at the T1: what a router alone can fix",
    paper="003",
    figure="Fig. 2 (variant)",
    scenario_file="003-collapse.toml",
    what_runs=(
        "As `collapse` (TCP S1→R1 and CBR UDP S2→R2 over the T1, UDP then through 512 kbps), with a per-flow "
        "fair queue at the T1 instead of drop-tail; UDP rate swept over 0, 0.1, …, 1 of the T1 rate."
    ),
    must_hold=(
        f"TCP keeps ≥ {KEEPS_SHARE:g} of T1 at UDP loads ≥ {OVERLOADED_FROM:g}; the T1 still carries UDP "
        "packets dropped downstream (≥ 5 % of T1 at full load)."
    ),
    explanation=(
        _COMMON_CHOICES
        + _FQ_CHOICE
        + "A question the paper leaves open. The fair queue stops the UDP flow from taking TCP's share of "
        "the T1, so the unfairness goes; but it cannot know that half of what it forwards for UDP will be "
        "dropped at the 512 kbps link, so that part of the T1 is still wasted: the collapse is mitigated, "
        "not cured. Only rate control that reaches the source (ABR in the paper; TFRC-like control at "
        "the source) avoids sending those packets at all."
    ),
    published=(_OPEN,),
)

FQ_UNFAIR_UDP = FqUnfairUdp(
    id="fq-unfair-udp",
    title="TCP against unresponsive UDP with a fair queue at the bottleneck",
    paper="003",
    figure="Fig. 3 (variant)",
    scenario_file="003-unfair-udp.toml",
    what_runs=(
        "As `unfair-udp` (one T1 bottleneck, TCP against CBR UDP swept over 0, 0.1, …, 1 of the T1 rate), "
        "with a per-flow fair queue at the T1 instead of drop-tail."
    ),
    must_hold=(
        f"TCP keeps ≥ {KEEPS_SHARE:g} of T1 at UDP loads ≥ {OVERLOADED_FROM:g}; the T1 stays ≥ 90 % busy."
    ),
    explanation=(
        _COMMON_CHOICES
        + _FQ_CHOICE
        + "With one bottleneck a fair queue is all that is needed: TCP gets its half of the T1 whatever "
        "the UDP source sends, and the UDP flow gets the rest."
    ),
    published=(_OPEN,),
    tolerance=1.0,
)

EXPERIMENTS = (FQ_COLLAPSE, FQ_UNFAIR_UDP)
