"""The figure styles the reproductions redraw, as PNG files (matplotlib, Agg backend):
throughput against offered load, cumulative bytes against time, bars of ours beside published;
the first and the last can show the range over the phase replicas (shaded band, whiskers)."""

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
    bands: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
) -> Path:
    """Lines of y against offered load (Figs. 2 and 3 of paper 003); `published` adds open markers;
    `bands` shades, per line label, a (low, high) range at each x in the line's colour."""
    fig, ax = plt.subplots(figsize=(7.6, 4.0))
    for (label, ys), marker in zip(lines.items(), "osd^v", strict=False):
        (line,) = ax.plot(x, ys, marker=marker, label=label)
        if bands and label in bands:
            low, high = bands[label]
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
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
    ranges: tuple[Sequence[float], Sequence[float]] | None = None,
) -> Path:
    """Grouped bars per item: ours beside the published value (Fig. 6 of paper 003); `ranges`
    (low, high per item) adds whiskers to our bars."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    xs = range(len(labels))
    width = 0.38
    yerr = None
    if ranges is not None:
        low, high = ranges
        yerr = [
            [max(o - lo, 0.0) for o, lo in zip(ours, low, strict=True)],
            [max(hi - o, 0.0) for o, hi in zip(ours, high, strict=True)],
        ]
    ax.bar([x - width / 2 for x in xs], ours, width, label="fairstream", yerr=yerr, capsize=4 if yerr else 0)
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
