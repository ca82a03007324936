"""TOML in and out: `loads` (stdlib `tomllib`, or `tomli` before 3.11) and a small `dumps` writer.

The writer covers what scenario files use: strings, integers, floats, booleans, lists, tables
(``[name]`` at the top level, inline tables deeper) and arrays of tables (``[[flow]]`` at the top
level and ``[[topology.link]]`` one level down). Output parses back to an equal dict.

The parser (and with it `typing` and `datetime`) is imported on the first `loads`, or the first
use of `TOMLDecodeError`: running a scenario file never needs it.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    if sys.version_info >= (3, 11):
        from tomllib import TOMLDecodeError
    else:
        from tomli import TOMLDecodeError

__all__ = ["TOMLDecodeError", "dumps", "loads"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def loads(text: str) -> dict[str, Any]:
    """Parses TOML text into a dict."""
    return _parser().loads(text)


def __getattr__(name: str) -> Any:
    if name == "TOMLDecodeError":
        return _parser().TOMLDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _parser() -> Any:
    """The TOML parser module: `tomllib`, or `tomli` before Python 3.11."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - exercised on 3.10 only

    return tomli  # pragma: no cover


def dumps(doc: Mapping[str, Any]) -> str:
    """Serialises a dict to TOML text that `loads` turns back into an equal dict.

    Raises TypeError for values TOML cannot hold (None, sets, objects), naming the key path.
    """
    lines: list[str] = []
    _emit_table(lines, doc, path=(), where=(), depth=0)
    return "\n".join(lines).strip("\n") + "\n"


def _emit_table(
    lines: list[str], table: Mapping[str, Any], path: tuple[str, ...], where: tuple[str, ...], depth: int
) -> None:
    """Writes a table body: plain keys first, then (at depth 0 and 1) sub-tables and table arrays.

    `path` names the table in headers; `where` also counts array items, for error messages.
    """
    nested: list[tuple[str, Any]] = []
    for key, value in table.items():
        if not isinstance(key, str):
            raise TypeError(f"TOML keys must be strings, got {key!r} at {_dotted(where)}")
        if (depth == 0 and isinstance(value, Mapping)) or (depth <= 1 and _is_table_array(value)):
            nested.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(value, (*where, key))}")
    for key, value in nested:
        sub = (*path, key)
        if isinstance(value, Mapping):
            lines.extend(["", f"[{_dotted(sub)}]"])
            _emit_table(lines, value, sub, (*where, key), depth + 1)
        else:
            for i, element in enumerate(value):
                lines.extend(["", f"[[{_dotted(sub)}]]"])
                _emit_table(lines, element, sub, (*where, key, str(i)), depth + 1)


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def _value(value: Any, path: tuple[str, ...]) -> str:
    """Formats one value inline (inline tables and arrays recurse)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        items = ", ".join(f"{_key(k)} = {_value(v, (*path, k))}" for k, v in value.items())
        return "{ " + items + " }"
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        return "[" + ", ".join(_value(v, (*path, str(i))) for i, v in enumerate(value)) + "]"
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} at {_dotted(path)} as TOML")


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(_key(k) for k in path) if path else "<root>"
