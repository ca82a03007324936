"""`fairstream.reproduce.stats`: the same floats as the standard library's, bit for bit."""

from __future__ import annotations

import math
import random
import statistics
from fractions import Fraction

import pytest
from fairstream.reproduce.stats import pstdev, sqrt_of_fraction
from hypothesis import given, settings
from hypothesis import strategies as st

WHOLE = st.integers(min_value=-(2**26), max_value=2**26).map(float)
ANY_FINITE = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@settings(max_examples=400, deadline=None)
@given(st.lists(WHOLE, min_size=1, max_size=300))
def test_pstdev_of_whole_numbers_is_the_standard_librarys(values: list[float]) -> None:
    assert pstdev(values).hex() == statistics.pstdev(values).hex()


@settings(max_examples=200, deadline=None)
@given(st.lists(ANY_FINITE, min_size=1, max_size=50))
def test_pstdev_of_any_floats_is_the_standard_librarys(values: list[float]) -> None:
    assert pstdev(values).hex() == statistics.pstdev(values).hex()


def test_pstdev_of_bins_of_bytes_is_the_standard_librarys() -> None:
    """Data like the binomial experiment's (bytes sent per bin), long, and with large values that
    leave the integer path."""
    rng = random.Random(7)
    for n, top in ((2000, 70_000), (5000, 1_500_000), (3, 2**40), (10, 2**53)):
        values = [float(rng.randrange(top)) for _ in range(n)]
        assert pstdev(values).hex() == statistics.pstdev(values).hex()


@pytest.mark.parametrize("values", [[], [1.0, math.nan], [2.0, math.inf]])
def test_pstdev_does_what_the_standard_library_does_with_no_values_or_non_finite_ones(
    values: list[float],
) -> None:
    """It hands them to `statistics.pstdev`: the same error, or the same value."""
    try:
        expected: object = statistics.pstdev(values)
    except Exception as err:  # e.g. StatisticsError for no values
        expected = type(err)
    try:
        got: object = pstdev(values)
    except Exception as err:
        got = type(err)
    assert repr(got) == repr(expected)


@settings(max_examples=500, deadline=None)
@given(st.integers(min_value=0, max_value=2**200), st.integers(min_value=1, max_value=2**120))
def test_sqrt_of_fraction_is_correctly_rounded(numerator: int, denominator: int) -> None:
    """The nearest float: no float next to it is nearer to the exact root (compared exactly, by
    squares of the midpoints)."""
    value = Fraction(numerator, denominator)
    root = sqrt_of_fraction(numerator, denominator)
    if numerator == 0:
        assert root == 0.0
        return
    below, above = Fraction(math.nextafter(root, 0.0)), Fraction(math.nextafter(root, math.inf))
    low, high = (below + Fraction(root)) / 2, (above + Fraction(root)) / 2
    assert low * low <= value <= high * high
