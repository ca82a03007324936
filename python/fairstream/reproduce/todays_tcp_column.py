"""Beside today's TCP (issue 22): the friendliness experiments of papers 001, 002 and 004 run their
points again with every TCP flow as the `linux` preset (CUBIC, SACK with PRR, delayed ACKs, IW10,
timestamps, 1500-byte packets, a 2172-packet window), and report those numbers beside the paper's
TCP's, unjudged: the papers publish nothing for today's TCP, so there is no number to meet.

`todays_points` makes the extra points (keys suffixed ``-linux``, params ``tcp = "linux"``);
`split` parts the finished runs into the paper's and today's; an experiment evaluates each part
with the same code, keeps the paper's checks as they are, and adds today's part through
`reported_rows` and `reported_checks` (quantity prefixed with `LABEL`, published `NOT_PUBLISHED`,
no threshold).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from ..scenario import copy_doc
from .experiment import Check, Point

#: A flow's keys that say where and when it runs, kept when its protocol is swapped.
PLACEMENT = ("name", "from", "to", "start", "stop")
#: The TCP keys of the papers' flows that the swap replaces by the preset's (any other key is
#: refused: the swap would silently drop it).
REPLACED = frozenset({"protocol", "variant", "control", "packet_size", "window", "preset"})
#: What a swapped TCP flow runs.
TODAYS_TCP: dict[str, Any] = {"protocol": "tcp", "preset": "linux"}
#: A row's or point's `tcp`: the paper's TCP (the default) or today's.
PAPERS, TODAYS = "paper", "linux"
#: How the report names today's column.
LABEL = "TCP = linux preset (CUBIC)"
NOT_PUBLISHED = "— (the paper's TCP only)"
#: The key suffix of a point with today's TCP.
SUFFIX = "-linux"


def is_tcp(flow: Mapping[str, Any]) -> bool:
    return flow.get("protocol", "tcp") == "tcp"


def todays_flow(flow: Mapping[str, Any]) -> dict[str, Any]:
    """A TCP flow's placement (`PLACEMENT`) with `TODAYS_TCP`; a key it would drop is an error."""
    extra = sorted(k for k in flow if k not in PLACEMENT and k not in REPLACED)
    if extra:
        raise ValueError(
            f"flow {flow.get('name')!r}: cannot swap to the linux preset, it sets {', '.join(extra)} "
            f"(only {', '.join(sorted(REPLACED))} are replaced)"
        )
    out = copy_doc({k: flow[k] for k in PLACEMENT if k in flow})
    out.update(TODAYS_TCP)
    return out


def with_todays_tcp(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of scenario `doc` with every TCP flow swapped to the linux preset, the others kept."""
    out = copy_doc(doc)
    out["flow"] = [todays_flow(f) if is_tcp(f) else f for f in out["flow"]]
    return out


def todays_points(points: Sequence[Point]) -> list[Point]:
    """`points` again with today's TCP: key + `SUFFIX`, params + ``tcp = "linux"``."""
    return [Point(p.key + SUFFIX, {**p.params, "tcp": TODAYS}, with_todays_tcp(p.scenario)) for p in points]


def tcp_of(point: Point) -> str:
    """`TODAYS` for a point of `todays_points`, else `PAPERS`."""
    return str(point.params.get("tcp", PAPERS))


R = TypeVar("R")


def split(runs: Sequence[tuple[Point, R]]) -> tuple[list[tuple[Point, R]], list[tuple[Point, R]]]:
    """(the paper's runs, today's runs), each in order."""
    return [r for r in runs if tcp_of(r[0]) == PAPERS], [r for r in runs if tcp_of(r[0]) == TODAYS]


def reported_rows(comparison: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Comparison rows of today's TCP: the quantity prefixed with `LABEL`, nothing published."""
    return [
        {**row, "quantity": f"{LABEL}: {row['quantity']}", "published": NOT_PUBLISHED} for row in comparison
    ]


def reported_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks of today's TCP as report-only lines: same measure, no threshold, nothing published."""
    return [
        Check(
            f"{LABEL}: {c.description.removesuffix(' (reported, no threshold)')} (reported, not judged)",
            c.ours,
            NOT_PUBLISHED,
            None,
        )
        for c in checks
        if not c.self_check
    ]


def present(result: Mapping[str, Any]) -> bool:
    """Whether a result.json has runs with today's TCP (one written before it has none)."""
    return any(key.endswith(SUFFIX) for key in result.get("runs", {}))


def column_note() -> str:
    """What the rows and checks marked `LABEL` are."""
    return (
        f'Rows and checks marked "{LABEL}" rerun the same points with every TCP flow as the simulator\'s '
        '`preset = "linux"` (docs/scenarios.md): CUBIC with HyStart++, SACK with PRR, delayed ACKs, '
        "an initial window of 10, timestamps, 1500-byte packets and a window that never limits it, "
        "the paper's TCP keys dropped. The paper published nothing for such a TCP: these are reported, "
        "not judged, beside the paper's TCP's rows, which stay as they were."
    )
