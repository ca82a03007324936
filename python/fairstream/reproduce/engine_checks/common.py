"""What the engine checks share: the paper tag, scenario helpers."""

from __future__ import annotations

import math
from typing import Any

from ...scenario import packaged

PAPER = "validation"


def _link(doc: dict[str, Any], src: str, dst: str) -> dict[str, Any]:
    """The explicit link table from `src` to `dst` of a scenario dict."""
    for link in doc["topology"]["link"]:
        if link.get("from") == src and link.get("to") == dst:
            return link
    raise KeyError(f"scenario {doc.get('name')!r} has no link {src}->{dst}")


def _float(value: Any) -> float:
    return float(value) if value is not None else math.nan


def _load_packaged(name: str) -> dict[str, Any]:
    from ... import tomlio

    return tomlio.loads(packaged("papers", name).read_text(encoding="utf-8"))
