"""Statistics the reproductions compute, bit for bit what the standard library's give, faster.

`statistics.pstdev` is exact: it sums the data as fractions and takes the correctly rounded square
root of the exact variance. On a few thousand values per call that is milliseconds of pure Python
(``binomial-friendliness`` calls it 360 times on its bins of bytes sent). `pstdev` here computes the
same exact variance with integer sums where the data are whole numbers, and the same correctly
rounded square root, so every result that depends on it is unchanged.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

#: Significant bits of the integer square root before it is rounded to a float's 53: two more
#: than a float holds, so that rounding it to odd first and then to nearest rounds correctly.
_SQRT_BITS = 55


def pstdev(values: Sequence[float]) -> float:
    """`statistics.pstdev(values)`, the same float. Whole numbers small enough that the sums of
    their squares fit in 62 bits take the integer path; anything else (fractions, NaN, infinities,
    no values) goes to `statistics.pstdev` itself."""
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    n = data.size
    if n and np.isfinite(data).all() and (data == np.trunc(data)).all():
        top = float(np.abs(data).max())
        if top * top * n < 2.0**62:
            ints = data.astype(np.int64)
            total, squares = int(ints.sum()), int((ints * ints).sum())
            # population variance = (n·Σx² − (Σx)²) / n², exactly
            return sqrt_of_fraction(n * squares - total * total, n * n)
    return statistics.pstdev(values)


def sqrt_of_fraction(numerator: int, denominator: int) -> float:
    """√(numerator / denominator), correctly rounded to the nearest float, for numerator ≥ 0 and
    denominator > 0 whose quotient is neither huge nor tiny (a normal float's square). The
    integer square root is taken with at least `_SQRT_BITS` bits, rounded to odd (its last bit set
    when the root is not exact), then converted: the one rounding to 53 bits is then correct."""
    if numerator == 0:
        return 0.0
    shift = (_SQRT_BITS * 2 + 1 + denominator.bit_length() - numerator.bit_length()) // 2
    if shift >= 0:
        p, q = numerator << (2 * shift), denominator
    else:
        p, q = numerator, denominator << (-2 * shift)
    root = math.isqrt(p // q)
    odd = root | (root * root * q != p)
    return math.ldexp(float(odd), -shift)
