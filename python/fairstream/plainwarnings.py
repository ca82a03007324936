"""How fairstream's own warnings are shown: their message alone, one line each (a scenario's
``FILE:LINE:COL: field ...``, like scenario errors; the run cache's ``PATH: ...``), instead of
Python's two-line format, whose second line would quote fairstream's own source.

The command line shows them so (`fairstream.cli.main`), and so do a batch's worker processes
(`fairstream.parallel`), whose warnings reach the same terminal."""

from __future__ import annotations

import sys
import warnings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any


def show_plainly(category: type[Warning] | tuple[type[Warning], ...]) -> None:
    """Shows warnings of `category` as their message alone from now on; other warnings keep
    Python's format. Called again for the same `category` (`fairstream.cli.main` once per
    command, in one interpreter), it leaves the way warnings are shown as it is, rather than
    wrapping it once more each time."""
    if getattr(warnings.showwarning, "plainly", None) == category:
        return
    shown = warnings.showwarning

    def show(message: Warning | str, cat: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(cat, category):
            print(message, file=sys.stderr)
        else:
            shown(message, cat, *rest, **kw)

    show.plainly = category  # type: ignore[attr-defined]
    warnings.showwarning = show


def fairstreams() -> tuple[type[Warning], ...]:
    """fairstream's own warning classes: a scenario's, a damaged run cache entry's, a run cache
    that could not store a run."""
    from ._core import ScenarioWarning
    from .cache import CacheWriteWarning, DamagedEntryWarning

    return (ScenarioWarning, DamagedEntryWarning, CacheWriteWarning)
