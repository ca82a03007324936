"""fairstream: a fast deterministic packet-level network simulator for TCP-friendly streaming.

``fairstream.run(path_or_dict)`` runs a scenario and returns a `RunResult` whose tables are polars
DataFrames; ``fairstream.validate(...)`` checks a scenario; ``fairstream.sweep(...)`` runs a grid
of overrides in parallel. The public names are imported on first use, so that importing the
package (or only ``fairstream._core``, as the benchmark worker does) stays light.

The modules ``fairstream run`` and ``validate`` load (this one, cli, api, results, scenario,
tomlio, progress, table) import polars, tomllib, tempfile and even typing only where needed;
``TYPE_CHECKING = False`` stands for ``typing.TYPE_CHECKING`` there. A test
(tests/python/test_lean_imports.py) keeps polars, numpy, pandas and matplotlib out of those commands.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    from ._core import ScenarioError, emu_devices
    from .api import run, validate
    from .emulation import EmulatorUnavailable, emulate, emulator_unavailable
    from .interrupt import Interrupted
    from .realnet import recv, send
    from .results import RunResult
    from .sweeps import SweepResult, sweep

__all__ = [
    "EmulatorUnavailable",
    "Interrupted",
    "RunResult",
    "ScenarioError",
    "SweepResult",
    "__version__",
    "emu_devices",
    "emulate",
    "emulator_unavailable",
    "recv",
    "run",
    "send",
    "sweep",
    "validate",
]

_LAZY = {
    "run": "api",
    "validate": "api",
    "emulate": "emulation",
    "emu_devices": "_core",
    "emulator_unavailable": "emulation",
    "EmulatorUnavailable": "emulation",
    "send": "realnet",
    "recv": "realnet",
    "RunResult": "results",
    "sweep": "sweeps",
    "SweepResult": "sweeps",
    "ScenarioError": "_core",
    "Interrupted": "interrupt",
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
