"""Paper 000's metrics (fairstream.reproduce.h2h_metrics) on hand-made series with hand-computed
answers."""

from __future__ import annotations

import math

import pytest
from fairstream.reproduce import h2h_metrics as m
from hypothesis import given
from hypothesis import strategies as st


def test_normalised_difference_is_tcp_minus_udp_over_the_bottleneck():
    assert m.normalised_difference(100e3, 250e3, 300e3) == pytest.approx(-0.5)
    assert m.normalised_difference(300e3, 0.0, 600e3) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="bottleneck"):
        m.normalised_difference(1, 1, 0)


def test_least_squares_and_correlation():
    xs = [0.02, 0.05, 0.1, 0.2]
    ys = [1 - 2 * x for x in xs]
    slope, intercept = m.least_squares(xs, ys)
    assert (slope, intercept) == (pytest.approx(-2.0), pytest.approx(1.0))
    assert m.correlation(xs, ys) == pytest.approx(-1.0)
    # y = x² on symmetric points: no linear relation at all.
    assert m.correlation([-2, -1, 0, 1, 2], [4, 1, 0, 1, 4]) == pytest.approx(0.0)
    # Hand-computed: x = 1, 2, 3; y = 2, 1, 4: r = 2 / (√2 · √(14/3)·...) = 0.6547
    assert m.correlation([1, 2, 3], [2, 1, 4]) == pytest.approx(0.654654, abs=1e-6)
    assert math.isnan(m.correlation([1, 1, 1], [1, 2, 3]))
    assert math.isnan(m.least_squares([1, 1], [1, 2])[0])


def test_tcp_friendly_rate():
    # 1.22 · 1500 B · 8 / (0.1 s · √0.01) = 1.464 Mbit/s
    assert m.tcp_friendly_bps(0.1, 0.01) == pytest.approx(1_464_000)
    assert m.tcp_friendly_bps(0.2, 0.04) == pytest.approx(1_464_000 / 4)
    assert m.tcp_friendly_bps(0.1, 0.0) == math.inf
    assert m.is_unfriendly(400e3, 0.2, 0.04)
    assert not m.is_unfriendly(300e3, 0.2, 0.04)
    assert not m.is_unfriendly(10e6, 0.2, 0.0)
    with pytest.raises(ValueError, match="loss"):
        m.tcp_friendly_bps(0.1, 1.5)


def test_average_over_the_active_span():
    bps = [0, 0, 100, 200, 0, 300, 0, 0]
    assert m.active_span(bps) == (2, 6)
    assert m.average_bps(bps) == pytest.approx(150.0)
    assert m.average_bps([0, 0]) == 0.0


def test_smoothness():
    bps = [0, 100, 200, 100, 0, 100, 100, 0]
    ratios = m.consecutive_ratios(bps)
    # 200/100, 100/200, (100→0 and 0→100 undefined), 100/100
    assert ratios == [2.0, 0.5, 1.0]
    assert m.median_abs_log_ratio(ratios) == pytest.approx(math.log(2))
    assert m.median_abs_log_ratio([1.0, 1.0]) == 0.0
    assert math.isnan(m.median_abs_log_ratio([]))
    xs, fs = m.cdf([3, 1, 2, 2])
    assert xs == [1, 2, 2, 3]
    assert fs == [0.25, 0.5, 0.75, 1.0]


def test_buffering_ratio():
    # 1 s bins: 20 s at 600, then 100 at 100 until 200 s; the peak 10 s window is 600.
    bps = [600.0] * 20 + [100.0] * 180
    assert m.buffering_ratio(bps, 1.0) == pytest.approx(6.0)
    # A window straddling the step: the largest is still wholly inside the first 20 s.
    bps = [0.0] * 5 + [500.0] * 10 + [200.0] * 185
    assert m.buffering_ratio(bps, 1.0) == pytest.approx(2.5)
    # The peak is only looked for in the first 80 s.
    bps = [100.0] * 85 + [900.0] * 10 + [100.0] * 105
    assert m.buffering_ratio(bps, 1.0) == pytest.approx(1.0)
    # Half-second bins: the same windows in seconds.
    bps = [300.0] * 40 + [100.0] * 360
    assert m.buffering_ratio(bps, 0.5) == pytest.approx(3.0)
    # The late average stops where the flow stopped delivering.
    bps = [400.0] * 20 + [100.0] * 130 + [0.0] * 50
    assert m.buffering_ratio(bps, 1.0) == pytest.approx(4.0)
    assert math.isnan(m.buffering_ratio([100.0] * 90, 1.0)), "ends before 100 s"
    # Shorter windows for time-scaled clips.
    assert m.buffering_ratio([50.0] * 2 + [10.0] * 18, 1.0, window_s=2, early_s=8, late_from_s=10) == 5.0


def test_scale_changes_and_time_below():
    assert m.scale_changes([4, 4, 3, 2, 2, 3]) == 3
    assert m.scale_changes([2]) == 0
    t = [0.0, 2.0, 4.5, 9.0]
    rates = [450e3, 225e3, 100e3, 45e3]
    assert m.time_below(t, rates, 150e3) == 4.5
    assert m.time_below(t, rates, 35e3) == math.inf
    assert m.time_below(t, rates, 500e3) == 0.0
    assert m.fraction([True, False, False, True]) == 0.5
    assert math.isnan(m.fraction([]))


def test_tail_counts_see_doublings_halvings_and_stalls() -> None:
    # Pairs over the active span (100 … 60): 100→200 (×2, tail), 200→150, 150→0 (stall, tail),
    # 0→0 (no rate, left out), 0→100 (resumes, tail), 100→60 (0.6, not ≤ 1/2).
    bps = [0, 100, 200, 150, 0, 0, 100, 60, 0]
    assert m.tail_counts(bps) == (5, 3)
    assert m.tail_counts(bps, factor=1.3) == (5, 5)  # 0.75 and 0.6 are both ≤ 1/1.3
    assert m.tail_counts([]) == (0, 0)
    assert m.tail_counts([50, 50, 50]) == (2, 0)


def test_cdf_at_points() -> None:
    assert m.cdf_at([0.5, 1.0, 1.0, 2.0], [0.25, 1.0, 1.5, 4.0]) == [0.0, 0.75, 0.75, 1.0]
    assert all(math.isnan(x) for x in m.cdf_at([], [1.0]))


def _span_by_loop(bps: list[float]) -> tuple[int, int]:
    active = [i for i, b in enumerate(bps) if b > 0]
    return (active[0], active[-1] + 1) if active else (0, 0)


def _ratios_by_loop(bps: list[float]) -> list[float]:
    a, b = _span_by_loop(bps)
    s = bps[a:b]
    return [y / x for x, y in zip(s, s[1:], strict=False) if x > 0 and y > 0]


def _tails_by_loop(bps: list[float], factor: float) -> tuple[int, int]:
    a, b = _span_by_loop(bps)
    s = bps[a:b]
    pairs = tails = 0
    for x, y in zip(s, s[1:], strict=False):
        if x <= 0 and y <= 0:
            continue
        pairs += 1
        if x <= 0 or y <= 0 or y / x >= factor or y / x <= 1 / factor:
            tails += 1
    return pairs, tails


bins = st.lists(
    st.one_of(
        st.just(0.0), st.floats(min_value=1.0, max_value=1e7, allow_nan=False), st.sampled_from([1e5, 2e5])
    ),
    max_size=60,
)


@given(bins, st.sampled_from([2.0, 1.5, 4.0]))
def test_the_array_forms_give_what_a_loop_over_the_bins_gives_bit_for_bit(
    bps: list[float], factor: float
) -> None:
    """`active_span`, `consecutive_ratios` and `tail_counts` work on arrays; a bin-by-bin loop over
    the same series, as they were written first, gives the same values to the last bit."""
    assert m.active_span(bps) == _span_by_loop(bps)
    assert m.consecutive_ratios(bps) == _ratios_by_loop(bps)
    assert m.tail_counts(bps, factor) == _tails_by_loop(bps, factor)
