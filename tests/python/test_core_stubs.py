"""python/fairstream/_core.pyi describes the built extension: the same public names, the same
members of `Simulation`, the same parameters (names, kinds, defaults) and exception bases.

The stub is plain Python (bodies are docstrings), so it is executed into a module of its own and
compared through `inspect` with the real `fairstream._core`.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path

import fairstream._core as core
import pytest

STUB = Path(core.__file__).with_name("_core.pyi")


@pytest.fixture(scope="module")
def stub() -> types.ModuleType:
    module = types.ModuleType("_core_stub")
    exec(compile(STUB.read_text(encoding="utf-8"), str(STUB), "exec"), module.__dict__)
    return module


def public(names: list[str]) -> set[str]:
    return {n for n in names if not n.startswith("_")}


def defined_in_stub(stub: types.ModuleType) -> set[str]:
    """The names the stub defines itself (not those it imports for its annotations)."""
    imported = {"os", "Callable", "Mapping", "Sequence", "Any", "Final", "final"}
    return public([n for n in vars(stub) if n not in imported])


def parameters(func: object, *, method: bool = False) -> list[tuple[str, object, object]]:
    """(name, kind, default) of each parameter; a method's `self` left out."""
    params = list(inspect.signature(func).parameters.values())
    if method:
        params = params[1:]
    return [(p.name, p.kind, p.default) for p in params]


def test_the_stub_names_every_export_and_nothing_else(stub: types.ModuleType) -> None:
    assert defined_in_stub(stub) == public(dir(core))
    assert "__version__" in stub.__annotations__ and isinstance(core.__version__, str)


def test_functions_have_the_same_parameters(stub: types.ModuleType) -> None:
    functions = [n for n in public(dir(core)) if inspect.isbuiltin(getattr(core, n))]
    assert len(functions) >= 7
    for name in functions:
        assert parameters(getattr(stub, name)) == parameters(getattr(core, name)), name


def test_simulation_has_the_same_members(stub: types.ModuleType) -> None:
    real, described = core.Simulation, stub.Simulation
    assert public(dir(real)) == public(dir(described))
    assert parameters(described.__init__, method=True) == parameters(real)
    for name in public(dir(real)):
        attr = inspect.getattr_static(real, name)
        if inspect.isdatadescriptor(attr):  # a #[getter]
            assert isinstance(inspect.getattr_static(described, name), property), name
        else:
            assert parameters(getattr(described, name), method=True) == parameters(
                getattr(real, name), method=True
            ), name


def test_exceptions_have_the_same_bases(stub: types.ModuleType) -> None:
    for name in ("ScenarioError", "ScenarioWarning"):
        assert getattr(stub, name).__bases__ == getattr(core, name).__bases__
