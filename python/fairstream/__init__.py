"""fairstream: a fast deterministic packet-level network simulator for TCP-friendly streaming.

``fairstream.run(path_or_dict)`` runs a scenario and returns a `RunResult` whose tables are polars
DataFrames; ``fairstream.validate(...)`` checks a scenario; ``fairstream.sweep(...)`` runs a grid
of overrides in parallel. The public names are imported on first use, so that importing the
package (or only ``fairstream._core``, as the benchmark worker does) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._core import ScenarioError
    from .api import run, validate
    from .results import RunResult
    from .sweeps import SweepResult, sweep

__all__ = ["RunResult", "ScenarioError", "SweepResult", "__version__", "run", "sweep", "validate"]

_LAZY = {
    "run": "api",
    "validate": "api",
    "RunResult": "results",
    "sweep": "sweeps",
    "SweepResult": "sweeps",
    "ScenarioError": "_core",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib import metadata

        try:
            version = metadata.version("fairstream")
        except metadata.PackageNotFoundError:
            version = "0+unknown"
        globals()["__version__"] = version
        return version
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
