"""Plain-text tables for the terminal, and the one number format every table and report uses."""

from __future__ import annotations

import math
from collections.abc import Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any


def fmt(value: Any, digits: int = 4) -> str:
    """A cell: floats to `digits` significant digits, None and NaN as '—', bools as yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:.{digits}g}"
    return str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned text columns, right-aligned numbers, a rule under the header."""
    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    numeric = [all(_is_number(row[i]) for row in rows) and bool(rows) for i in range(len(headers))]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def is_number(value: Any) -> bool:
    """Whether `value` is an int or a float (a bool is not a number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def span(values: Any, digits: int = 3) -> str:
    """``a–b`` for the range of `values` in `fmt`'s form (one value alone if both ends print alike)."""
    values = list(values)
    lo, hi = fmt(min(values), digits), fmt(max(values), digits)
    return lo if lo == hi else f"{lo}–{hi}"


def _is_number(value: Any) -> bool:
    return value is None or is_number(value)
