"""Paper 000's metrics (Section V) as pure functions over series: what the ``h2h-*`` reproductions
compute from each head-to-head run (one clip over UDP, the same clip over TCP).

- `normalised_difference`: (TCP avg − UDP avg) / bottleneck, per clip (Figs. 6-9);
- `least_squares` and `correlation`: the line and coefficient of the difference against RTT and
  against loss (Figs. 10-13);
- `tcp_friendly_bps` and `is_unfriendly`: the TCP-friendly rate T = 1.22·s / (R·√p), s = 1500 B,
  and whether a flow's average is above it (Table I);
- `consecutive_ratios`, `median_abs_log_ratio`, `tail_counts`, `cdf_at`, `cdf`: smoothness, the
  ratio of consecutive 500 ms bandwidths (Fig. 21), and how many ratios lie in its tails;
- `buffering_ratio`: the largest 10 s average in the first 80 s over the average from 100 s to the
  end (Fig. 15);
- `scale_changes` and `time_below`: media scaling, changes of the encoded level per clip and the time
  until the encoded rate is below the bottleneck (Figs. 16-18).

Bandwidth series are bit/s per bin of equal width, from ``flow_series`` (see `active_span`); no
function here reads a run, so each is tested on hand-made series.
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..lazy import on_first_use

if TYPE_CHECKING:
    import numpy as np
else:
    np = on_first_use("numpy")

#: The packet size of paper 000's TCP-friendly check (its largest recorded packet), bytes.
FRIENDLY_PACKET_BYTES = 1500
#: The constant of the TCP-friendly rate (paper 000, eq. in Section V-E, after Floyd and Fall).
FRIENDLY_CONSTANT = 1.22


def normalised_difference(tcp_avg_bps: float, udp_avg_bps: float, bottleneck_bps: float) -> float:
    """(TCP average − UDP average) / bottleneck: negative when UDP got more."""
    if bottleneck_bps <= 0:
        raise ValueError(f"bottleneck {bottleneck_bps} bit/s: expected a rate above 0")
    return (tcp_avg_bps - udp_avg_bps) / bottleneck_bps


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line of `ys` against `xs`; NaNs when `xs` has fewer
    than two distinct values."""
    if len(set(xs)) < 2:
        return math.nan, math.nan
    fit = statistics.linear_regression(xs, ys)
    return fit.slope, fit.intercept


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson's correlation coefficient; NaN when either series is constant or has fewer than two
    values."""
    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return math.nan
    return statistics.correlation(xs, ys)


def tcp_friendly_bps(rtt_s: float, loss: float, packet_bytes: int = FRIENDLY_PACKET_BYTES) -> float:
    """T = 1.22·s / (R·√p) in bit/s: the most an aggressive TCP gets at round trip `rtt_s` and loss
    rate `loss`; infinite without loss (no bound)."""
    if rtt_s <= 0:
        raise ValueError(f"round-trip time {rtt_s} s: expected a time above 0")
    if not 0 <= loss <= 1:
        raise ValueError(f"loss rate {loss}: expected a fraction from 0 to 1")
    if loss == 0:
        return math.inf
    return FRIENDLY_CONSTANT * packet_bytes * 8 / (rtt_s * math.sqrt(loss))


def is_unfriendly(
    avg_bps: float, rtt_s: float, loss: float, packet_bytes: int = FRIENDLY_PACKET_BYTES
) -> bool:
    """Whether a flow's average is above the TCP-friendly rate of its path."""
    return avg_bps > tcp_friendly_bps(rtt_s, loss, packet_bytes)


def active_span(bps: Sequence[float]) -> tuple[int, int]:
    """(first, last + 1): the bins from the first to the last with anything delivered; (0, 0) when
    nothing was."""
    active = np.flatnonzero(np.asarray(bps, dtype=float) > 0)
    return (int(active[0]), int(active[-1]) + 1) if active.size else (0, 0)


def _active_pairs(bps: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """(earlier, later) bins of each consecutive pair over the active span, as arrays."""
    a, b = active_span(bps)
    s = np.asarray(bps[a:b], dtype=float)
    return s[:-1], s[1:]


def average_bps(bps: Sequence[float]) -> float:
    """The average over the flow's active span (`active_span`): what the clip got while it
    streamed, not diluted by the time after it ended; 0 when nothing was delivered."""
    a, b = active_span(bps)
    return statistics.fmean(bps[a:b]) if b > a else 0.0


def consecutive_ratios(bps: Sequence[float]) -> list[float]:
    """b[i+1] / b[i] over the active span, for the pairs where both are above zero (a ratio to or
    from an empty bin is undefined; the paper plots the ratio of bandwidths)."""
    x, y = _active_pairs(bps)
    both = (x > 0) & (y > 0)
    return (y[both] / x[both]).tolist()


def median_abs_log_ratio(ratios: Sequence[float]) -> float:
    """The median of |ln ratio|: 0 for a perfectly smooth flow; NaN for no ratios."""
    if not ratios:
        return math.nan
    return statistics.median(abs(math.log(r)) for r in ratios)


#: Paper 000's own example of a rough step: "if the data rate is 200 Kbps for one time interval and
#: 400 Kbps the next time interval, the smoothness would be 2" (0.5 back down): a ratio this far
#: from 1, either way, is in the tail that "TCP often far less smooth than UDP" speaks of.
TAIL_FACTOR = 2.0


def tail_counts(bps: Sequence[float], factor: float = TAIL_FACTOR) -> tuple[int, int]:
    """(pairs, pairs in the tails) of consecutive bins over the active span: a pair is in the tails
    when its ratio is at least `factor` or at most 1/`factor`. A pair with one empty bin (the stream
    stalled, or resumed) is a step of infinite ratio and counts in the tails; a pair of two empty
    bins carries no rate and is left out."""
    x, y = _active_pairs(bps)
    either = (x > 0) | (y > 0)
    both = (x > 0) & (y > 0)
    ratio = np.divide(y, x, out=np.ones_like(y), where=both)
    steep = ~both | (ratio >= factor) | (ratio <= 1 / factor)
    return int(np.count_nonzero(either)), int(np.count_nonzero(either & steep))


def cdf_at(values: Sequence[float], points: Sequence[float]) -> list[float]:
    """The empirical CDF of `values` at each of `points`: the fraction of values at or below it
    (NaN for no values)."""
    xs = sorted(values)
    if not xs:
        return [math.nan for _ in points]
    return [bisect.bisect_right(xs, p) / len(xs) for p in points]


def cdf(values: Sequence[float]) -> tuple[list[float], list[float]]:
    """(sorted values, fraction ≤ each): the empirical CDF to plot."""
    xs = sorted(values)
    n = len(xs)
    return xs, [(k + 1) / n for k in range(n)]


def buffering_ratio(
    bps: Sequence[float],
    bin_s: float,
    window_s: float = 10.0,
    early_s: float = 80.0,
    late_from_s: float = 100.0,
) -> float:
    """The largest `window_s` average among the windows inside the first `early_s` of the series,
    over the average from `late_from_s` to the end of the active span (paper 000, Section V-D:
    10 s, 80 s, 100 s). NaN when the flow ends before `late_from_s` or gets nothing after it."""
    if bin_s <= 0:
        raise ValueError(f"bin width {bin_s} s: expected a time above 0")
    per_window = max(1, round(window_s / bin_s))
    early = bps[: round(early_s / bin_s)]
    _, end = active_span(bps)
    late = bps[round(late_from_s / bin_s) : end]
    if len(early) < per_window or not late:
        return math.nan
    late_avg = statistics.fmean(late)
    if late_avg <= 0:
        return math.nan
    peak = max(statistics.fmean(early[i : i + per_window]) for i in range(len(early) - per_window + 1))
    return peak / late_avg


def scale_changes(levels: Sequence[float]) -> int:
    """How many times the encoded level changed (the first value is the start, not a change)."""
    return sum(1 for x, y in zip(levels, levels[1:], strict=False) if x != y)


def time_below(times: Sequence[float], rates_bps: Sequence[float], bottleneck_bps: float) -> float:
    """The first time at which the encoded rate (a step series: `rates_bps[i]` from `times[i]` on)
    is below the bottleneck; infinite if it never is."""
    return next((t for t, r in zip(times, rates_bps, strict=True) if r < bottleneck_bps), math.inf)


def fraction(flags: Sequence[bool]) -> float:
    """The fraction of true values; NaN for none."""
    return sum(flags) / len(flags) if flags else math.nan
