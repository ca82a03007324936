"""TOML in and out: `loads` (stdlib `tomllib`, or `tomli` before 3.11) and `dumps` (the core's
writer, `fairstream._core.toml_dumps`: the `toml` crate's, seven times faster than `tomli-w` over
a reproduction's 2 107 scenarios, which it writes before its first run).

`dumps` output parses back to an equal dict. A value TOML cannot hold (None, a set, an object, an
integer beyond 64 bits) is a TypeError that names its key path, such as ``flow.0.rate``, so that
a scenario dict with a hole in it says where.

The parser (and with it `typing` and `datetime`) is imported on first use, or on the first use of
`TOMLDecodeError`: running a scenario file never needs it.
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


def loads(text: str) -> dict[str, Any]:
    """Parses TOML text into a dict."""
    return _parser().loads(text)


def dumps(doc: Mapping[str, Any]) -> str:
    """Serialises a dict to TOML text that `loads` turns back into an equal dict.

    Raises TypeError for values TOML cannot hold (None, sets, objects, integers beyond 64 bits),
    naming the key path.
    """
    from . import _core

    return _core.toml_dumps(doc)


def dumps_shared(doc: Mapping[str, Any], memo: dict[int, tuple[Any, str]]) -> str:
    """`dumps`, for many documents that share their top-level tables (a sweep's points, which
    differ only where they are overridden: `fairstream.scenario.with_overrides_shared`): a table
    (or array of tables) seen before, the same object, is not written again but taken from `memo`
    (filled as it goes; it keeps the objects it names alive). The text differs from `dumps`'s
    only in layout, and loads to the same dict."""
    scalars = {k: v for k, v in doc.items() if not _is_table(v)}
    chunks = [dumps(scalars)] if scalars else []
    for key, value in doc.items():
        if key in scalars:
            continue
        seen = memo.get(id(value))
        if seen is None or seen[0] is not value:
            seen = (value, dumps({key: value}))
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
