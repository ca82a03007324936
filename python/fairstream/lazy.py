"""Modules imported when first used, not when named: polars and numpy for the experiments'
evaluations.

A reproduction's parent process imports every experiment's module to draft its points, but never
evaluates one on a machine with workers: their evaluations run on the workers. Importing polars
and numpy there took about 0.2 s before the first worker could start planning
(docs/PERFORMANCE.md). A module that needs them only inside its functions names them with
`on_first_use`:

    if TYPE_CHECKING:
        import polars as pl
    else:
        pl = on_first_use("polars")

The first attribute read imports the module and copies its namespace into the stand-in, so every
later read is a plain attribute lookup.
"""

from __future__ import annotations

import importlib
import types
from typing import Any


class _OnFirstUse(types.ModuleType):
    """A stand-in for the module of its name, until an attribute is read from it."""

    def __getattr__(self, attribute: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attribute)


def on_first_use(name: str) -> types.ModuleType:
    """A stand-in for the module `name` that imports it when first read from (see the module's
    doc); ``sys.modules`` holds the real module once it is imported, never the stand-in."""
    return _OnFirstUse(name)
