"""The figure styles the reproductions redraw, as PNG files (matplotlib, Agg backend):
throughput against offered load, cumulative bytes against time, bars of ours beside published;
the first and the last can show the range over the phase replicas (shaded band, whiskers).

Every figure goes through `save`, which lays it out and then checks it: tick labels of one axis
that overlap (crowded axes, long labels), or a title that meets a tick label or an axis's offset
text, are a `TickLabelOverlap` warning naming the figure, the axis and the labels. The tests turn
that warning into an error (pyproject.toml). A reproduction draws its figures in `style`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import warnings  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from ..results import RunResult  # noqa: E402
from .measure import cumulative_bytes  # noqa: E402

_DPI = 110
#: What a reproduction draws its figures with (`style`). ``axes.titley``: each title at the top
#: of its axes, where matplotlib's automatic placement leaves it unless something sits above the
#: axes (top tick labels, the y axis's offset text: `save` warns of a title that meets one). The
#: placement lays out an axes' y ticks once more for each title at every draw: without it the
#: 45 figures of a reproduction take 2-4 s less CPU on the machine PERFORMANCE.md names, pixel
#: for pixel the same.
STYLE = {"axes.titley": 1.0}
#: PNG compression (zlib level 3, not Pillow's default 6): the reproduction's 45 figures encode in
#: 1.1 s instead of 1.85 s on the machine PERFORMANCE.md names, and take 4.2 MB instead of 4.0.
_PNG = {"compress_level": 3}


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
    dashed: Sequence[str] = (),
) -> Path:
    """Lines of y against offered load (Figs. 2 and 3 of paper 003); `published` adds open markers;
    `bands` shades, per line label, a (low, high) range at each x in the line's colour; the lines
    labelled in `dashed` are drawn dashed (a baseline beside the main lines)."""
    import itertools

    fig, ax = plt.subplots(figsize=(7.6, 4.0))
    for (label, ys), marker in zip(lines.items(), itertools.cycle("osd^v"), strict=False):
        style = "--" if label in dashed else "-"
        (line,) = ax.plot(x, ys, marker=marker, linestyle=style, label=label)
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
    series = cumulative_bytes(run)
    for i, (label, (t, y)) in enumerate(series.items()):
        ax.plot(
            t,
            [b / 1e6 for b in y],
            label=f"{label} ({y[-1] / 1e6:.2f} MB)" if y else label,
            **_distinct(i, len(series), len(t)),
        )
    ax.set(title=title, xlabel="time (s)", ylabel="bytes delivered (MB)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return save(fig, path)


_LINE_STYLES = ("-", "--", "-.", ":")
_MARKERS = "osD^v<>p"


def _distinct(i: int, lines: int, points: int) -> dict[str, Any]:
    """Style of line `i` of `lines` so that lines which coincide stay apart: its own colour, dash
    pattern and marker, the markers spaced along the line and offset from the other lines' (two
    flows that deliver alike, such as tcp0 and tcp3 of paper 003's Fig. 4, no longer hide one
    another)."""
    every = max(points // 8, 1)
    return {
        "color": f"C{i}",
        "linestyle": _LINE_STYLES[i % len(_LINE_STYLES)],
        "marker": _MARKERS[i % len(_MARKERS)],
        "markevery": (i * every // max(lines, 1), every),
        "markersize": 5,
        "markerfacecolor": "none" if i % 2 else f"C{i}",
    }


def bars_beside_published(
    path: Path,
    labels: Sequence[str],
    ours: Sequence[float],
    published: Sequence[float | None],
    *,
    title: str,
    ylabel: str,
    ranges: tuple[Sequence[float], Sequence[float]] | None = None,
    also: Sequence[tuple[str, Sequence[float | None]]] = (),
) -> Path:
    """Grouped bars per item: ours beside the published value (Fig. 6 of paper 003); `ranges`
    (low, high per item) adds whiskers to our bars; `also` adds (label, values) series after them
    (a missing value draws no bar)."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 + 0.7 * len(labels)), 4.0))  # room for each label
    xs = range(len(labels))
    width = 0.76 / (2 + len(also))
    yerr = None
    if ranges is not None:
        low, high = ranges
        yerr = [
            [max(o - lo, 0.0) for o, lo in zip(ours, low, strict=True)],
            [max(hi - o, 0.0) for o, hi in zip(ours, high, strict=True)],
        ]

    def at(k: int) -> list[float]:
        return [x + (k - (1 + len(also)) / 2) * width for x in xs]

    ax.bar(at(0), ours, width, label="fairstream", yerr=yerr, capsize=4 if yerr else 0)
    pub = [p if p is not None else 0.0 for p in published]
    ax.bar(at(1), pub, width, label="published", hatch="//", alpha=0.7)
    for k, (label, values) in enumerate(also, start=2):
        ax.bar(at(k), [v if v is not None else 0.0 for v in values], width, label=label)
    ax.set_xticks(list(xs), labels)
    ax.set(title=title, ylabel=ylabel)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize="small")
    return save(fig, path)


class TickLabelOverlap(UserWarning):
    """Tick labels of one axis of a saved figure overlap: the figure is hard to read."""


def plain_log_ticks(*axes: Any) -> None:
    """Log-scale axes spanning a decade or two, labelled legibly: major ticks at 1, 2 and 5 × each
    power of ten written as plain numbers ("0.02", not "2 × 10⁻²"), the other minor ticks drawn
    but not labelled (matplotlib labels them all on a short log axis, and they collide)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in axes:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())


def log_log(ax: Any, *, xlabel: str, ylabel: str, title: str) -> None:
    """Both axes of `ax` on log scales labelled by `plain_log_ticks`, a grid at every tick and a
    small legend: the finish of a figure that sets a rate or window beside a model's over a decade
    or two of loss rates."""
    ax.set(xscale="log", yscale="log", xlabel=xlabel, ylabel=ylabel, title=title)
    plain_log_ticks(ax.xaxis, ax.yaxis)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")


def style() -> Any:
    """A context in which figures are drawn in `STYLE` (matplotlib's settings as they were
    outside it)."""
    return matplotlib.rc_context(STYLE)


def save(fig: plt.Figure, path: Path) -> Path:
    """Lays out `fig`, writes it to `path` (creating folders) and closes it.

    When x tick labels overlap (many categories, long names) they are turned 30° and the figure
    laid out and written again; overlaps left after that are a `TickLabelOverlap` warning.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # Laid out at the resolution it is saved at: the layout's draw and the file's then share one
    # renderer, and text measured for the one is not measured again for the other (a
    # reproduction's figures: 60 % fewer text measurements, 4-5 % fewer Python calls), and the
    # layout is that of the pixels written.
    fig.set_dpi(_DPI)
    _lay_out(fig)
    fig.savefig(path, dpi=_DPI, pil_kwargs=_PNG)
    overlaps = overlapping_tick_labels(fig)
    if any(" x: " in o for o in overlaps):
        for ax in fig.axes:
            if any(o.startswith(f"axes {_axes_name(ax, fig)!r} x: ") for o in overlaps):
                for label in ax.get_xticklabels(which="both"):
                    label.set(rotation=30, horizontalalignment="right", rotation_mode="anchor")
        _lay_out(fig)
        fig.savefig(path, dpi=_DPI, pil_kwargs=_PNG)
        overlaps = overlapping_tick_labels(fig)
    plt.close(fig)
    if overlaps:
        warnings.warn(
            TickLabelOverlap(f"{path.name}: overlapping tick labels: {'; '.join(overlaps)}"), stacklevel=2
        )
    return path


def _lay_out(fig: plt.Figure) -> None:
    """`fig.tight_layout()`, once. It leaves a placeholder layout engine on the figure, for which
    `savefig` draws the whole figure once more before drawing it for the file, to a layout that
    then changes nothing: removing it takes that draw away (a fifth of the figures' time).

    An axis with no label first gets its (empty) label pinned inside the axes: matplotlib would
    place it beside the tick labels at every draw, laying the ticks out once more to find them,
    and an empty label takes no room either way (most panels of a grid label neither axis)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.label.get_text():
                axis.set_label_coords(0.5, 0.5)
    fig.tight_layout()
    fig.set_layout_engine(None)


def overlapping_tick_labels(fig: plt.Figure) -> list[str]:
    """Each pair of drawn, non-empty tick labels of one axis (x or y, major and minor together)
    whose boxes overlap, as "axes 'title' x: '0.001' and '0.00316'"; empty when none do.

    Uses the layout of the last draw (`save` draws by saving). Rotated labels are compared by the
    rotated rectangles of their text, not by their upright bounding boxes, which overlap sooner.
    """
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        name = _axes_name(ax, fig)
        shapes = {}
        for letter, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = _drawn_tick_labels(axis)
            shapes[letter] = [(label.get_text(), _corners(label, renderer)) for label in labels]
            for i, (text_a, a) in enumerate(shapes[letter]):
                for text_b, b in shapes[letter][i + 1 :]:
                    if _polygons_overlap(a, b):
                        found.append(f"axes {name!r} {letter}: {text_a!r} and {text_b!r}")
        found += _title_clashes(ax, name, renderer, shapes["x"])
    return found


def _title_clashes(
    ax: Any, name: str, renderer: Any, x_labels: list[tuple[str, list[tuple[float, float]]]]
) -> list[str]:
    """What `ax`'s title meets, as "axes 'name' title and '1e6'": an x tick label (`x_labels`:
    text and corners, as `overlapping_tick_labels` found them) or an offset text (a title placed
    at the top of its axes, `STYLE`, is not moved out of their way)."""
    title = ax.title
    if not (title.get_visible() and title.get_text().strip()):
        return []
    box = _corners(title, renderer)
    offsets = [a.offsetText for a in (ax.xaxis, ax.yaxis) if a.offsetText.get_visible()]
    near = [*x_labels, *((t.get_text(), _corners(t, renderer)) for t in offsets if t.get_text().strip())]
    return [f"axes {name!r} title and {text!r}" for text, corners in near if _polygons_overlap(box, corners)]


def _axes_name(ax: Any, fig: plt.Figure) -> str:
    return ax.get_title() or ax.get_label() or f"#{fig.axes.index(ax)}"


def _drawn_tick_labels(axis: Any) -> list[Any]:
    """The visible, non-empty labels of the ticks drawn on `axis` (inside its view interval)."""
    lo, hi = sorted(axis.get_view_interval())
    slack = 1e-9 * (hi - lo)
    labels = []
    for locs, ticks in (
        (axis.get_majorticklocs(), axis.get_major_ticks),
        (axis.get_minorticklocs(), axis.get_minor_ticks),
    ):
        for loc, tick in zip(locs, ticks(len(locs)), strict=True):
            if not lo - slack <= loc <= hi + slack:
                continue
            labels += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text().strip()]
    return labels


def _corners(label: Any, renderer: Any) -> list[tuple[float, float]]:
    """The four corners, in display pixels, of `label`'s text turned by its rotation."""
    import math

    box = label.get_window_extent(renderer)
    angle = math.radians(label.get_rotation() % 180)
    if angle == 0:
        return [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
    # The upright box of a rotated w × h text is (w cos + h sin) × (w sin + h cos): solve for w, h.
    c, s = abs(math.cos(angle)), abs(math.sin(angle))
    det = c * c - s * s
    if abs(det) < 1e-6:  # 45°: w and h are not determined; fall back to the upright box
        return [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
    w = (box.width * c - box.height * s) / det
    h = (box.height * c - box.width * s) / det
    cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
    ux, uy = math.cos(angle), math.sin(angle)  # along the text
    vx, vy = -uy, ux  # across it
    return [
        (cx + sx * w / 2 * ux + sy * h / 2 * vx, cy + sx * w / 2 * uy + sy * h / 2 * vy)
        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]


def _polygons_overlap(
    a: list[tuple[float, float]], b: list[tuple[float, float]], margin: float = 0.5
) -> bool:
    """Whether two convex quadrilaterals overlap by more than `margin` pixels (separating axes)."""
    for poly in (a, b):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0
            length = (nx * nx + ny * ny) ** 0.5 or 1.0
            pa = [(x * nx + y * ny) / length for x, y in a]
            pb = [(x * nx + y * ny) / length for x, y in b]
            if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= margin:
                return False
    return True
