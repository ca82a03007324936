"""The FIFO audit: recomputes, from a run's packet trace, when a work-conserving link would have
started each transmission, and counts the packets it sent later (or earlier) than that.

For each link, packets leave in the order they were accepted, and the *k*-th transmission is due
at the earliest instant ``t`` with

- ``t ≥`` its arrival at the link (its ``+`` row);
- ``t ≥`` the previous transmission's start plus that packet's serialisation time at the rate in
  force when it started (rounded to the nearest nanosecond, as the engine does);
- with a token bucket (``queue.kind = "tbf"``): ``t ≥`` the instant the bucket holds the packet's
  size in tokens. The bucket (depth ``burst``) starts full and fills at ``rate``; it is charged at
  each departure, and tokens are counted from the previous departure (tc-tbf(8), and
  ``crates/net/src/queue/tbf.rs``). With a ``peak_rate``, a second bucket of depth ``mtu`` filled at
  the peak rate must hold the packet too;
- with a capacity schedule: the rate in force at ``t`` is not zero (a pause holds the queue).

The previous start and the token state follow the *actual* departures, so each packet is judged
on its own: one that leaves more than ``tol_ns`` after its due instant is *late* (a queue waited
beside an idle transmitter), one that leaves before it is *early*. A packet accepted but never
sent is late if it was due before the run ended. The order of departures is checked against the
order of acceptance (a ``+`` row not followed by a ``d`` row of the same packet at that link).

`audit_link` works on any DataFrame with the trace's columns ``t_ns``, ``packet_id``, ``event``
and ``size`` (rows of one link, in trace order), so it can be tested on made-up traces;
`audit_run` audits every link of a finished run, taking each link's rate, schedule and queue from
the run's link summary (typed columns: no unit is parsed here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..lazy import on_first_use
from ..results import RunResult

if TYPE_CHECKING:
    import numpy as np
    import polars as pl
else:
    np = on_first_use("numpy")
    pl = on_first_use("polars")

#: Tolerance of the audit: a start more than this after (or before) its due instant is flagged.
TOL_NS = 1

NS_PER_S = 1_000_000_000
#: Token units per byte: the engine counts tokens in nanobits (10⁻⁹ bit).
NANOBITS_PER_BYTE = 8 * NS_PER_S
#: "Never" in nanoseconds (a zero rate with no step back up), still an int64.
NEVER_NS = 2**62
#: The rules that can set a packet's due start (`LinkAudit.binding`).
RULES = ("arrival", "link", "tokens", "pause")


@dataclass(frozen=True)
class TokenBucket:
    """A Linux-``tbf`` queue's buckets: `rate` and `burst`, and the optional peak bucket."""

    rate_bps: int
    burst_bytes: int
    peak_bps: int | None = None
    mtu_bytes: int = 1500


@dataclass(frozen=True)
class LinkModel:
    """What the audit needs to know of a link: its base rate, capacity steps and token bucket.

    `steps` are ``(t_ns, bps)`` pairs: from ``t_ns`` on the link runs at ``bps`` (a later step at
    the same instant wins, as in the engine).
    """

    name: str
    rate_bps: int
    steps: tuple[tuple[int, int], ...] = ()
    tbf: TokenBucket | None = None
    #: The steps' instants; the rate from each (the base rate first); and from each step on, the
    #: first step to a non-zero rate (`NEVER_NS` when none comes). Set once from `steps`.
    _times: np.ndarray = field(init=False, repr=False, compare=False)
    _rates: np.ndarray = field(init=False, repr=False, compare=False)
    _resumes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        steps = tuple(sorted(self.steps, key=lambda s: s[0]))
        times = np.array([t for t, _ in steps], dtype=np.int64)
        resumes = np.full(len(steps) + 1, NEVER_NS, dtype=np.int64)
        for i in range(len(steps) - 1, -1, -1):
            resumes[i] = times[i] if steps[i][1] > 0 else resumes[i + 1]
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "_times", times)
        object.__setattr__(self, "_rates", np.array([self.rate_bps, *(r for _, r in steps)], dtype=np.int64))
        object.__setattr__(self, "_resumes", resumes)

    @property
    def constant(self) -> bool:
        return not self.steps

    def rates_at(self, t_ns: np.ndarray) -> np.ndarray:
        """The rate in force at each instant of `t_ns`."""
        return self._rates[np.searchsorted(self._times, t_ns, side="right")]

    def unpaused(self, t_ns: np.ndarray) -> np.ndarray:
        """Each instant of `t_ns`, or the end of the pause it falls in (the first step after it to
        a non-zero rate; `NEVER_NS` when none comes)."""
        later = self._resumes[np.searchsorted(self._times, t_ns, side="right")]
        return np.where(self.rates_at(t_ns) == 0, later, t_ns)


def tx_ns(size_bytes: Any, bps: Any) -> Any:
    """Nanoseconds to serialise `size_bytes` at `bps`, rounded to the nearest (the engine's rule);
    integers, or numpy arrays of them element by element."""
    return (size_bytes * 8 * NS_PER_S + bps // 2) // bps


def freed_ns(starts: np.ndarray, sizes: np.ndarray, bps: np.ndarray) -> np.ndarray:
    """When a link that started sending each packet at `starts` at rates `bps` is free again
    (`tx_ns` each; `NEVER_NS` where the rate is zero)."""
    return np.where(bps > 0, starts + tx_ns(sizes, np.where(bps > 0, bps, 1)), NEVER_NS)


@dataclass
class LinkAudit:
    """The audit of one link: packets checked, and those that broke the rule."""

    link: str
    packets: int = 0
    late: int = 0
    early: int = 0
    reordered: int = 0
    stranded: int = 0
    max_late_ns: int = 0
    max_early_ns: int = 0
    #: actual − due start, ns, of every transmission (the figure's histogram).
    deviations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    #: up to a few offending packets: (packet_id, actual_ns, due_ns).
    examples: list[tuple[int, int, int]] = field(default_factory=list)
    #: how many due starts each rule set: the packet's arrival (an idle link), the previous
    #: transmission (a busy link), the token bucket, or the end of a pause.
    binding: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RULES, 0))

    @property
    def ok(self) -> bool:
        return self.late == 0 and self.early == 0 and self.reordered == 0

    def to_row(self) -> dict[str, Any]:
        return {
            "link": self.link,
            "packets": self.packets,
            "late": self.late,
            "early": self.early,
            "reordered": self.reordered,
            "stranded": self.stranded,
            "max_late_ns": self.max_late_ns,
            "max_early_ns": self.max_early_ns,
        }


@dataclass(frozen=True)
class Rows:
    """Trace rows of one kind (arrivals accepted, or transmissions) of one link, in trace order:
    each row's instant (ns), packet id and size."""

    t_ns: np.ndarray
    packet_id: np.ndarray
    size: np.ndarray

    def __getitem__(self, rows: np.ndarray | slice) -> Rows:
        """The rows `rows` selects (a mask, indices or a slice)."""
        return Rows(self.t_ns[rows], self.packet_id[rows], self.size[rows])

    @classmethod
    def none(cls) -> Rows:
        """No rows."""
        return cls(*(np.zeros(0, dtype=np.int64),) * 3)


def split_trace(trace: pl.DataFrame) -> dict[int, tuple[Rows, Rows]]:
    """A trace (columns ``t_ns``, ``packet_id``, ``event``, ``size`` and, for more than one link,
    ``link_id``) as each link's accepted arrivals (``+`` rows of packets the link did not drop:
    no ``d`` row of the same packet there) and transmissions (``-`` rows), by link id."""
    link = pl.col("link_id").cast(pl.Int64) if "link_id" in trace.columns else pl.lit(0, pl.Int64)
    cols = trace.select(
        pl.col("t_ns").cast(pl.Int64),
        pl.col("packet_id").cast(pl.Int64),
        pl.col("size").cast(pl.Int64),
        link.alias("link"),
        *((pl.col("event") == e).alias(e) for e in "+-d"),
    )
    rows = Rows(*(cols[c].to_numpy() for c in ("t_ns", "packet_id", "size")))
    links = cols["link"].to_numpy()
    width = int(links.max()) + 1 if len(links) else 1
    if width <= 1 << 16:
        links = links.astype(np.uint16)  # sorted stably by radix sort, in linear time
    plus, sent, drop = (cols[e].to_numpy() for e in "+-d")
    at_link = rows.packet_id * width + links  # a packet at a link, as one number
    kept = plus.copy()
    kept[plus] = ~np.isin(at_link[plus], at_link[drop])
    accepted, transmitted = _by_link(rows, links, kept), _by_link(rows, links, sent)
    return {
        link_id: (accepted.get(link_id, Rows.none()), transmitted.get(link_id, Rows.none()))
        for link_id in np.flatnonzero(np.bincount(links, minlength=1)).tolist()  # every link in the trace
    }


def _by_link(rows: Rows, links: np.ndarray, mask: np.ndarray) -> dict[int, Rows]:
    """The rows `mask` selects, by link (each link's in trace order)."""
    which = np.flatnonzero(mask)
    which = which[np.argsort(links[which], kind="stable")]
    ids = links[which]
    starts = np.flatnonzero(np.diff(ids, prepend=-1))
    ends = [*starts[1:].tolist(), len(ids)]
    return {
        link_id: rows[which[i:j]]
        for link_id, i, j in zip(ids[starts].tolist(), starts.tolist(), ends, strict=True)
    }


def audit_link(
    rows: pl.DataFrame | tuple[Rows, Rows], model: LinkModel, end_ns: int | None = None, tol_ns: int = TOL_NS
) -> LinkAudit:
    """Audits the trace rows of one link (in trace order; or its accepted arrivals and its
    transmissions, as `split_trace` gives them) against `model`.

    `end_ns`: when the run ended; a packet accepted but not sent by then is late if it was due
    before. None skips that check.
    """
    if isinstance(rows, pl.DataFrame):
        links = list(split_trace(rows).values())
        if len(links) > 1:
            raise ValueError(f"{model.name}: the rows are of {len(links)} links (audit_run splits a run's)")
        rows = links[0] if links else (Rows.none(), Rows.none())
    accepted, sent = rows
    out = LinkAudit(model.name)
    acc_ids = accepted.packet_id
    sent_ids = sent.packet_id
    n = len(sent_ids)
    out.packets = n
    if n > len(acc_ids):
        raise ValueError(f"{model.name}: {n} transmissions but only {len(acc_ids)} packets accepted")
    out.reordered = int(np.count_nonzero(acc_ids[:n] != sent_ids))
    arrival_of = _arrivals(acc_ids, accepted.t_ns, model.name)
    actual = sent.t_ns
    sizes = sent.size
    arrivals = arrival_of(sent_ids)
    if model.constant and model.tbf is None:
        due, _ = _due_constant(actual, arrivals, sizes, model.rate_bps)
        state = None
        waits = due > arrivals
        out.binding = {"arrival": int(n - waits.sum()), "link": int(waits.sum()), "tokens": 0, "pause": 0}
    else:
        due, state = _due_general(actual, arrivals, sizes, model, out.binding)
    dev = actual - due
    out.deviations = dev
    late = dev > tol_ns
    early = dev < -tol_ns
    out.late = int(late.sum())
    out.early = int(early.sum())
    out.max_late_ns = int(dev.max()) if n and dev.max() > 0 else 0
    out.max_early_ns = int(-dev.min()) if n and dev.min() < 0 else 0
    bad = np.flatnonzero(late | early)[:5]
    out.examples = [(int(sent_ids[i]), int(actual[i]), int(due[i])) for i in bad]
    if end_ns is not None and len(acc_ids) > n:
        head = int(acc_ids[n])
        head_size = int(accepted.size[n])
        head_due = _next_due(model, int(arrival_of(acc_ids[n : n + 1])[0]), head_size, actual, sizes, state)
        if head_due < end_ns - tol_ns:
            out.stranded = 1
            out.late += 1
            out.max_late_ns = max(out.max_late_ns, end_ns - head_due)
            if len(out.examples) < 5:
                out.examples.append((head, -1, head_due))
    return out


def _arrivals(ids: np.ndarray, t_ns: np.ndarray, link: str) -> Callable[[np.ndarray], np.ndarray]:
    """A lookup of the arrival (``+`` row's `t_ns`) of each accepted packet by id (the last row
    of an id seen twice); an id never accepted is a ValueError naming the link."""
    order = np.argsort(ids, kind="stable")
    keys, times = ids[order], t_ns[order]

    def of(wanted: np.ndarray) -> np.ndarray:
        at = np.searchsorted(keys, wanted, side="right") - 1
        found = at >= 0
        found[found] = keys[at[found]] == wanted[found]
        if not found.all():
            raise ValueError(f"{link}: packet {int(wanted[~found][0])} sent but never accepted")
        return times[at]

    return of


def _due_constant(
    actual: np.ndarray, arrivals: np.ndarray, sizes: np.ndarray, bps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Due starts on a constant-rate FIFO link, max(arrival, previous start + its serialisation),
    and the instants the link freed."""
    free = np.zeros_like(actual)
    if len(actual):
        free[1:] = actual[:-1] + tx_ns(sizes[:-1], bps)
    return np.maximum(arrivals, free), free


@dataclass
class _Buckets:
    """Token state as of the last departure (nanobits), as the engine keeps it."""

    t_c: int
    tokens: int
    peak_tokens: int


def _conformance(tb: TokenBucket, st: _Buckets, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """For each departure in turn, the first instant at which the bucket(s) held its size in
    tokens (`NEVER_NS` at most), charging `st` with the departures at their actual starts (the one
    place the buckets are modelled).

    The bucket is charged at each departure and counts tokens from the previous one (the later
    of the two instants: `st.t_c` never goes back), so its level after departure k is
    ``min(level + rate × dt, full) − cost``, for all departures at once by `_levels`."""
    starts, sizes = np.asarray(starts, dtype=np.int64), np.asarray(sizes, dtype=np.int64)
    if not len(starts):
        return np.zeros(0, dtype=np.int64)
    t_c = np.maximum.accumulate(np.maximum(starts, st.t_c))
    since = t_c - st.t_c
    before_t = np.concatenate([[st.t_c], t_c[:-1]])  # where each departure's tokens are counted from
    # rate × time overflows 64 bits at high rates over long runs: Python integers then
    reach = max(tb.rate_bps, tb.peak_bps or 0) * int(since[-1]) + int(sizes.sum()) * NANOBITS_PER_BYTE
    if reach + 2 * max(abs(st.tokens), abs(st.peak_tokens)) >= 1 << 60:
        since, sizes, before_t = (x.astype(object) for x in (since, sizes, before_t))
    costs = sizes * NANOBITS_PER_BYTE

    def ready(rate: int, depth_bytes: int, level: int) -> tuple[np.ndarray, int]:
        """When one bucket held each departure's cost, and its level after the last."""
        before, after = _levels(rate, depth_bytes * NANOBITS_PER_BYTE, level, since, costs)
        lacking = before < costs
        if not rate:
            return np.where(lacking, NEVER_NS, before_t), after
        return np.where(lacking, before_t - (before - costs) // rate, before_t), after  # ceiling division

    due, st.tokens = ready(tb.rate_bps, tb.burst_bytes, st.tokens)
    if tb.peak_bps is not None:
        peak_due, st.peak_tokens = ready(tb.peak_bps, tb.mtu_bytes, st.peak_tokens)
        due = np.maximum(due, peak_due)
    st.t_c = int(t_c[-1])
    return np.minimum(due, NEVER_NS).astype(np.int64)


def _levels(rate: int, full: int, level: int, since: np.ndarray, costs: np.ndarray) -> tuple[np.ndarray, int]:
    """A bucket's level before each departure, and after the last, from `level` at the first
    one's reference instant, `since` that instant (each departure's, nondecreasing) and each
    departure's cost: ``after_k = min(after_{k-1} + rate × (since_k − since_{k-1}), full) − cost_k``.

    With ``R_k = rate × since_k`` and ``C_k`` the costs up to k, ``after_k − R_k + C_k`` is a
    running minimum: of `level` and of ``full − R_j + C_{j-1}`` over j ≤ k."""
    filled = rate * since
    charged = np.cumsum(costs)
    floor = np.minimum.accumulate(np.concatenate([[level], full - filled + (charged - costs)]))[1:]
    after = floor + filled - charged
    return np.concatenate([[level], after[:-1]]), int(after[-1])


def _unpause(model: LinkModel, t: int) -> int:
    """`t`, or the end of the pause `t` falls in."""
    return int(model.unpaused(np.array([t], dtype=np.int64))[0])


def _initial_buckets(model: LinkModel) -> _Buckets | None:
    tb = model.tbf
    if tb is None:
        return None
    return _Buckets(0, tb.burst_bytes * NANOBITS_PER_BYTE, tb.mtu_bytes * NANOBITS_PER_BYTE)


def _due_general(
    actual: np.ndarray, arrivals: np.ndarray, sizes: np.ndarray, model: LinkModel, binding: dict[str, int]
) -> tuple[np.ndarray, tuple[int, _Buckets | None]]:
    """Due starts with a token bucket and/or a capacity schedule; counts the rule that set each
    into `binding`. The link's and the bucket's state follow the actual departures, so every rule
    is an array operation but the bucket's (its tokens are clamped at each departure: one packet
    at a time, in Python integers, which do not overflow)."""
    n = len(actual)
    freed = freed_ns(actual, sizes, model.rates_at(actual))
    free = np.concatenate([np.zeros(1, dtype=np.int64), freed[:-1]]) if n else freed
    due = np.maximum(arrivals, free)
    rule = np.where(arrivals >= free, 0, 1)  # indices into RULES
    st = _initial_buckets(model)
    if model.tbf is not None and st is not None:
        conform = _conformance(model.tbf, st, actual, sizes)
        later = conform > due
        due, rule = np.where(later, conform, due), np.where(later, 2, rule)
    unpaused = model.unpaused(due)
    rule = np.where(unpaused != due, 3, rule)
    for i, name in enumerate(RULES):
        binding[name] += int(np.count_nonzero(rule == i))
    return unpaused, (int(freed[-1]) if n else 0, st)


def _next_due(
    model: LinkModel,
    arrival: int,
    size: int,
    actual: np.ndarray,
    sizes: np.ndarray,
    state: tuple[int, _Buckets | None] | None,
) -> int:
    """When the first packet left waiting at the end was due."""
    if state is None:
        free = int(actual[-1]) + tx_ns(int(sizes[-1]), model.rate_bps) if len(actual) else 0
        return max(arrival, free)
    free, st = state
    d = max(arrival, free)
    if model.tbf is not None and st is not None:
        uncharged = replace(st)  # a copy: the head has not left
        d = max(d, int(_conformance(model.tbf, uncharged, np.array([st.t_c]), np.array([size]))[0]))
    return _unpause(model, d)


# --- link models from a run -----------------------------------------------------------------------


def model_from_summary(link: dict[str, Any]) -> LinkModel:
    """The audit's model of a link as the run's summary gives it (``summary.json``'s ``links``):
    its base rate, its capacity schedule and, for a token bucket, the bucket's parameters, every
    one a number the run wrote (docs/results.md)."""
    steps = tuple(zip(link.get("schedule_t_ns") or [], link.get("schedule_bps") or [], strict=True))
    tbf = None
    if link.get("queue_kind") == "tbf":
        peak = link.get("tbf_peak_bps")
        tbf = TokenBucket(
            int(link["tbf_rate_bps"]),
            int(link["tbf_burst_bytes"]),
            int(peak) if peak is not None else None,
            int(link["tbf_mtu_bytes"]) if peak is not None else TokenBucket.mtu_bytes,
        )
    return LinkModel(link["name"], round(link["rate_bps"]), steps, tbf)


def link_models(run: RunResult) -> dict[str, LinkModel]:
    """Every link of `run`, by name, from its summary."""
    return {link["name"]: model_from_summary(link) for link in run.summary["links"]}


def audit_run(run: RunResult, tol_ns: int = TOL_NS) -> list[LinkAudit]:
    """Audits every link of `run` (which must have recorded ``[record] packets = true``). Only the
    columns the audit reads are read from the trace, once, and split by link."""
    try:
        rows = run.lazy("packets").select("t_ns", "packet_id", "event", "size", "link_id").collect()
    except (FileNotFoundError, pl.exceptions.ColumnNotFoundError):
        rows = None
    if rows is None or rows.is_empty():
        raise ValueError(f"{run.output_dir}: no packet trace with t_ns (set [record] packets = true)")
    end_ns = round(run.summary["duration_s"] * NS_PER_S)
    models = link_models(run)
    names = {link["link_id"]: link["name"] for link in run.summary["links"]}
    out = [
        audit_link(both, models[names[link_id]], end_ns, tol_ns)
        for link_id, both in split_trace(rows).items()
    ]
    return sorted(out, key=lambda a: a.link)


def totals(audits: Sequence[LinkAudit]) -> dict[str, int]:
    """Sums over links: packets, late, early, reordered, stranded."""
    keys = ("packets", "late", "early", "reordered", "stranded")
    return {k: sum(getattr(a, k) for a in audits) for k in keys}
