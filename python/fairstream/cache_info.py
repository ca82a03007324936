"""``fairstream cache info``: what the run cache holds, as a few lines of text."""

from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB'."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _ago(stamp: float | None, now: float) -> str:
    if stamp is None:
        return "-"
    seconds = max(0.0, now - stamp)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit} ago"
    return f"{seconds:.0f} s ago"


def _state(root: Path) -> str:
    """What `root` is, beside its path, when it is not a directory of the cache's."""
    if root.is_dir():
        return ""
    if root.exists() or root.is_symlink():
        return " (not a directory: no run can be stored there; point FAIRSTREAM_CACHE at a directory)"
    return " (not made yet: the first run stored makes it)"


def format_info(info: dict[str, Any], now: float | None = None) -> str:
    """The text of `fairstream.cache.RunCache.info`."""
    now = time.time() if now is None else now
    lines = [
        f"run cache: {info['root']}{_state(Path(info['root']))}",
        f"this build: {info['build']}",
        f"size: {format_bytes(info['bytes'])}",
    ]
    labels = {"run": "runs", "experiment": "evaluated experiments", "plan": "planned reproductions"}
    for kind in ("run", "experiment", "plan"):
        k = info["kinds"].get(kind)
        if not k:
            lines.append(f"{labels[kind]}: none")
            continue
        lines.append(
            f"{labels[kind]}: {k['entries']} ({format_bytes(k['bytes'])}), "
            f"{k['usable']} usable by this build; last used {_ago(k['newest'], now)}, "
            f"least recently {_ago(k['oldest'], now)}"
        )
    if info["staging"]:
        lines.append(f"being written (or left by a killed process): {info['staging']}")
    lines.append("prune: fairstream cache prune --older-than 30d | --max-size 20GB | --stale | --all")
    return "\n".join(lines)
