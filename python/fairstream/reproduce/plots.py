"""The figure styles the reproductions redraw, as PNG files (matplotlib, Agg backend):
throughput against offered load, cumulative bytes against time, bars of ours beside published."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from ..results import RunResult  # noqa: E402
from .measure import cumulative_bytes  # noqa: E402

_DPI = 110


def load_sweep(
    path: Path,
    x: Sequence[float],
    lines: Mapping[str, Sequence[float]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    published: Sequence[tuple[float, float, str]] = (),
) -> Path:
    """Lines of y against offered load (Figs. 2 and 3 of paper 003); `published` adds open markers."""
    fig, ax = plt.subplots(figsize=(7.6, 4.0))
    for (label, ys), marker in zip(lines.items(), "osd^v", strict=False):
        ax.plot(x, ys, marker=marker, label=label)
    for i, (px, py, label) in enumerate(published):
        ax.plot(
            [px],
            [py],
            linestyle="none",
            marker="*",
            markersize=13,
            markerfacecolor="none",
            color=f"C{i + len(lines)}",
            label=label,
        )
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel, xlim=(-0.02, 1.03), ylim=(-0.03, 1.05))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, path)


def cumulative_delivered(path: Path, run: RunResult, *, title: str) -> Path:
    """One line per flow of the wire bytes delivered so far, in MB, against time (Fig. 4 of
    paper 003)."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for label, (t, y) in cumulative_bytes(run).items():
        ax.plot(t, [b / 1e6 for b in y], label=label)
    ax.set(title=title, xlabel="time (s)", ylabel="bytes delivered (MB)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return save(fig, path)


def bars_beside_published(
    path: Path,
    labels: Sequence[str],
    ours: Sequence[float],
    published: Sequence[float | None],
    *,
    title: str,
    ylabel: str,
) -> Path:
    """Grouped bars per item: ours beside the published value (Fig. 6 of paper 003)."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    xs = range(len(labels))
    width = 0.38
    ax.bar([x - width / 2 for x in xs], ours, width, label="fairstream")
    pub = [p if p is not None else 0.0 for p in published]
    ax.bar([x + width / 2 for x in xs], pub, width, label="published", hatch="//", alpha=0.7)
    ax.set_xticks(list(xs), labels)
    ax.set(title=title, ylabel=ylabel)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize="small")
    return save(fig, path)


def save(fig: plt.Figure, path: Path) -> Path:
    """Lays out `fig`, writes it to `path` (creating folders) and closes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path
