"""Plain-text tables for the terminal (drawn by rich), and the one number format every table and
report uses."""

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
    """A plain-text table (rich): a rule under the header, numbers right-aligned, text left.

    Cells are `fmt`'s text, shown literally: rich markup in a name stays text, and control
    characters (an escape sequence in a flow's name, say) are printed escaped, never sent to the
    terminal. Columns are squeezed and wrapped to stdout's width on a terminal; off one (a pipe,
    a log) no row is wrapped.
    """
    import io

    from rich import box
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    cells = [[_printable(fmt(v)) for v in row] for row in rows]
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, show_header=True)
    for i, header in enumerate(headers):
        numeric = bool(rows) and all(_is_number(row[i]) for row in rows)
        # A number is never cut short or broken: on a narrow terminal the text columns give way.
        width = max(len(row[i]) for row in cells) if numeric else None
        table.add_column(
            Text(_printable(header)), justify="right" if numeric else "left", no_wrap=numeric, min_width=width
        )
    for row in cells:
        table.add_row(*(Text(cell) for cell in row))
    out = io.StringIO()
    console = Console(file=out, width=100_000, color_system=None, force_terminal=False, legacy_windows=False)
    width = _terminal_width()
    # Squeezed to the terminal only when every column still fits (each text column as wide as
    # its longest word); else one line per row, which the terminal wraps, losing nothing.
    if width and Measurement.get(console, console.options, table).minimum <= width:
        console.width = width
    console.print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


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


#: Control characters (C0, DEL, C1) and the Python escapes they are shown as, such as ``\\x1b``.
_ESCAPED_CONTROLS = {
    c: chr(c).encode("unicode_escape").decode("ascii") for c in [*range(0x20), *range(0x7F, 0xA0)]
}


def _printable(text: str) -> str:
    """`text` with its control characters written as escapes."""
    return text.translate(_ESCAPED_CONTROLS)


def _terminal_width() -> int | None:
    """stdout's width when it is a terminal, else None."""
    import os
    import sys

    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else None
    except (AttributeError, ValueError, OSError):
        return None
