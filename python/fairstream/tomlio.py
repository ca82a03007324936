"""TOML in and out: `loads` (stdlib `tomllib`, or `tomli` before 3.11) and `dumps` (`tomli-w`).

`dumps` output parses back to an equal dict. A value TOML cannot hold (None, a set, an object)
is a TypeError that names its key path, such as ``flow.0.rate``, so that a scenario dict with a
hole in it says where.

Both libraries (and with them `typing` and `datetime`) are imported on first use, or on the
first use of `TOMLDecodeError`: running a scenario file never needs them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any

    if sys.version_info >= (3, 11):
        from tomllib import TOMLDecodeError
    else:
        from tomli import TOMLDecodeError

__all__ = ["TOMLDecodeError", "dumps", "loads"]

#: The scalar types written (TOML's dates and times aside: scenarios hold none).
_SCALARS = (str, bool, int, float)


def loads(text: str) -> dict[str, Any]:
    """Parses TOML text into a dict."""
    return _parser().loads(text)


def dumps(doc: Mapping[str, Any]) -> str:
    """Serialises a dict to TOML text that `loads` turns back into an equal dict.

    Raises TypeError for values TOML cannot hold (None, sets, objects), naming the key path.
    """
    import tomli_w

    return tomli_w.dumps(_plain(doc, ()))


def dumps_shared(doc: Mapping[str, Any], memo: dict[int, tuple[Any, str]]) -> str:
    """`dumps`, for many documents that share their top-level tables (a sweep's points, which
    differ only where they are overridden: `fairstream.scenario.with_overrides_shared`): a table
    (or array of tables) seen before, the same object, is not written again but taken from `memo`
    (filled as it goes; it keeps the objects it names alive). The text differs from `dumps`'s
    only in layout, and loads to the same dict."""
    import tomli_w

    scalars = {k: v for k, v in doc.items() if not _is_table(v)}
    chunks = [tomli_w.dumps(_plain(scalars, ()))] if scalars else []
    for key, value in doc.items():
        if key in scalars:
            continue
        seen = memo.get(id(value))
        if seen is None or seen[0] is not value:
            seen = (value, tomli_w.dumps(_plain({key: value}, ())))
            memo[id(value)] = seen
        chunks.append(seen[1])
    return "\n".join(chunks)


def _is_table(value: Any) -> bool:
    """Whether a top-level value is written as a table or an array of tables (after every plain
    key: `dumps_shared` writes the plain keys first)."""
    if isinstance(value, Mapping):
        return True
    return isinstance(value, list | tuple) and bool(value) and all(isinstance(v, Mapping) for v in value)


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


def _plain(value: Any, path: tuple[str, ...]) -> Any:
    """`value` as the dicts and lists `tomli_w` takes (any Mapping, tuples too), checked on the way:
    a value TOML cannot hold is a TypeError naming its key path."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"TOML keys must be strings, got {key!r} at {_dotted(path)}")
            out[key] = _plain(item, (*path, key))
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, (*path, str(i))) for i, item in enumerate(value)]
    if isinstance(value, _SCALARS):
        return value
    raise TypeError(f"cannot write {type(value).__name__} value {value!r} at {_dotted(path)} as TOML")


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path) if path else "<root>"
