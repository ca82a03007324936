"""Scenario inputs: a file path, TOML text or a dict, turned into the (text, filename) pair that
`fairstream._core` takes; dotted-path overrides of a scenario dict; the scenario files shipped
with the package (``fairstream/scenarios/<kind>/<name>.toml``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path

from . import tomlio

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any, TypeAlias

ScenarioLike: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any]"

#: The immutable values a scenario holds, shared by `copy_doc` rather than copied.
_SCALARS = frozenset({str, int, float, bool, type(None)})

DICT_FILENAME = "<dict>"
TEXT_FILENAME = "<string>"


def load(scenario: ScenarioLike) -> tuple[str, str]:
    """Returns (TOML text, filename for error messages) for a path, TOML text or dict.

    A string is a path when it names an existing file, TOML text when it holds a newline or an
    ``=``, and otherwise a missing file (FileNotFoundError).
    """
    if isinstance(scenario, Mapping):
        return tomlio.dumps(scenario), DICT_FILENAME
    if isinstance(scenario, os.PathLike):
        path = Path(scenario)
        return _read_utf8(path), str(path)
    if isinstance(scenario, str):
        if os.path.isfile(scenario):
            return _read_utf8(Path(scenario)), scenario
        if "\n" in scenario or "=" in scenario:
            return scenario, TEXT_FILENAME
        raise FileNotFoundError(f"scenario file not found: {scenario}")
    raise TypeError(f"a scenario is a path, TOML text or a dict, not {type(scenario).__name__}")


#: The largest scenario file read (the largest shipped is under 20 kB): more is refused rather
#: than read on (a device such as /dev/zero would never end).
MAX_SCENARIO_BYTES = 16 << 20


def _read_utf8(path: Path) -> str:
    """The text of a scenario file; a ValueError naming the file and the byte where it is not
    UTF-8, or saying it is larger than any scenario (`MAX_SCENARIO_BYTES`)."""
    with open(path, "rb") as f:
        data = f.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        raise ValueError(
            f"{path}: more than {MAX_SCENARIO_BYTES >> 20} MiB; a scenario is a TOML file of a few "
            "kilobytes (a flow table's `count` makes many flows)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ValueError(
            f"{path}:{line}: not UTF-8 text (byte {err.start}: {err.reason}); a scenario is a UTF-8 TOML file"
        ) from None


def map_traces(node: Any, change: Callable[[Any], Any], path: str = "") -> Any:
    """`node` (a scenario, any part of one, or the value set at the dotted `path` in one) with
    each file it names for a flow to read (``trace = "clip.csv"``, ``trace = { video = "clip.mp4" }``)
    replaced by `change(file)`: the one place that knows where a scenario names its files."""
    parts = path.split(".")
    if parts[-1] == "trace":  # the value of a flow's `trace` itself
        return map_traces({"trace": node}, change)["trace"]
    if parts[-2:] == ["trace", "video"]:
        return map_traces({"trace": {"video": node}}, change)["trace"]["video"]
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "trace" and isinstance(v, str):
                out[k] = change(v)
            elif k == "trace" and isinstance(v, dict) and isinstance(v.get("video"), str):
                out[k] = {**v, "video": change(v["video"])}
            else:
                out[k] = map_traces(v, change)
        return out
    if isinstance(node, list):
        return [map_traces(v, change) for v in node]
    return node


def to_dict(scenario: ScenarioLike) -> dict[str, Any]:
    """The scenario as a fresh dict (a deep copy when given a dict)."""
    if isinstance(scenario, Mapping):
        return copy_doc(scenario)
    text, _ = load(scenario)
    return tomlio.loads(text)


def copy_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of scenario data: its tables and lists copied, their strings, numbers and
    booleans shared (they are immutable). Anything else (a date) is copied by `copy.deepcopy`. A
    reproduction plans thousands of scenarios from a few, and `copy.deepcopy`'s general machinery
    (its memo, its dispatch per object) cost most of that."""
    return _copied(doc)


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [_copied(v) for v in value]
    if kind is tuple:
        return tuple(_copied(v) for v in value)
    if kind is dict or isinstance(value, Mapping):
        return {k: _copied(v) for k, v in value.items()}
    import copy

    return copy.deepcopy(value)


def with_overrides(doc: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of `doc` with each dotted path (``"flow.0.rate"``) set to its value."""
    out = copy_doc(doc)
    for path, value in overrides.items():
        set_path(out, path, value)
    return out


def with_overrides_shared(doc: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """`with_overrides`, copying only the tables and lists along each overridden path: the result
    shares every other part with `doc`, so neither may be changed afterwards (a sweep plans
    thousands of points this way; `fairstream.tomlio.dumps_shared` then writes each shared table
    once)."""
    out = dict(doc)
    for path, value in overrides.items():
        parts = path.split(".")
        node: Any = out
        for part in parts[:-1]:
            child = (
                node[int(part)]
                if isinstance(node, list) and part.isdigit() and int(part) < len(node)
                else None
            )
            if isinstance(node, MutableMapping):
                child = node.get(part)
            if isinstance(child, Mapping):
                child = dict(child)
            elif isinstance(child, list):
                child = list(child)
            else:
                break  # missing or a value: set_path creates it, or says what is wrong
            if isinstance(node, list):
                node[int(part)] = child
            else:
                node[part] = child
            node = child
        set_path(out, path, value)
    return out


def set_path(doc: MutableMapping[str, Any], path: str, value: Any) -> None:
    """Sets ``doc[a][b][0][c] = value`` for path ``"a.b.0.c"``; list items are chosen by index.

    Missing tables along the way are created; a missing list item is an error (ValueError).
    """
    parts = path.split(".")
    if not path or any(not p for p in parts):
        raise ValueError(f"`{path}` is not a dotted path such as flow.0.rate")
    node: Any = doc
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[:i]) or "the scenario"
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ValueError(f"`{path}`: {where} has {len(node)} entries, no entry `{part}`")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, MutableMapping):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ValueError(f"`{path}`: {where} is a value, not a table or list")


def packaged(kind: str, name: str) -> Path:
    """Path of a scenario file shipped with the package, e.g. ``packaged("bench", "B1.toml")``.

    The files sit beside this module (the package is installed unzipped, as maturin does), so
    the path is built directly rather than through `importlib.resources`.
    """
    path = Path(__file__).parent / "scenarios" / kind / name
    if not path.is_file():
        raise FileNotFoundError(f"no packaged scenario {kind}/{name}")
    return path
