"""Figure layout checks (reproduce/plots.py): overlapping tick labels are found (upright and
rotated), crowded x labels are turned until they fit, what still overlaps is a warning, short
log axes get plain labels, and lines that coincide keep distinct styles."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from fairstream.reproduce import plots
from fairstream.reproduce.plots import TickLabelOverlap, overlapping_tick_labels

LABELS = ["0.001", "0.00316", "0.01", "0.0316", "0.1"]


def drawn(width: float, rotation: float = 0) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(width, 2.0))
    ax.set_title("t")
    ax.set_xticks(range(len(LABELS)), LABELS, rotation=rotation)
    fig.tight_layout()
    fig.canvas.draw()
    return fig


@pytest.mark.parametrize(
    ("width", "rotation", "crowded"), [(2.0, 0, True), (6.0, 0, False), (2.5, 30, False), (1.2, 30, True)]
)
def test_overlapping_tick_labels(width: float, rotation: float, crowded: bool) -> None:
    fig = drawn(width, rotation)
    found = overlapping_tick_labels(fig)
    plt.close(fig)
    assert bool(found) is crowded, found
    if crowded:
        assert "axes 't' x: '0.001' and '0.00316'" in found


def test_labels_outside_the_view_are_not_counted() -> None:
    fig, ax = plt.subplots(figsize=(3.0, 2.0))
    ax.set_xticks([0, 1, 100, 100.01], ["a", "b", "hidden", "hidden too"])
    ax.set_xlim(-0.5, 1.5)
    fig.canvas.draw()
    assert overlapping_tick_labels(fig) == []
    plt.close(fig)


def test_save_turns_crowded_x_labels(tmp_path: Path) -> None:
    fig, ax = plt.subplots(figsize=(3.0, 2.5))
    ax.bar(range(6), range(6))
    ax.set_xticks(range(6), [f"label {i}" for i in range(6)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", TickLabelOverlap)
        plots.save(fig, tmp_path / "bars.png")
    assert {label.get_rotation() for label in ax.get_xticklabels()} == {30.0}
    assert (tmp_path / "bars.png").stat().st_size > 0


def test_save_warns_about_what_turning_cannot_fix(tmp_path: Path) -> None:
    fig, ax = plt.subplots(figsize=(3.0, 1.2))
    ax.set_yticks(range(12), [f"row {i}" for i in range(12)])
    with pytest.warns(
        TickLabelOverlap, match=r"crowded\.png: overlapping tick labels: axes '#0' y: 'row 0' and 'row 1'"
    ):
        plots.save(fig, tmp_path / "crowded.png")
    assert (tmp_path / "crowded.png").is_file()  # written all the same


def test_in_the_style_a_title_stays_put_and_what_it_meets_is_a_warning(tmp_path: Path) -> None:
    """In `plots.style` a title sits at the top of its axes (matplotlib's placement would move it
    above the y axis's offset text or top tick labels): the same figure otherwise, and `save`
    warns of a title that meets such a text."""

    def plain(path: Path) -> Path:
        fig, ax = plt.subplots(figsize=(4.0, 3.0))
        ax.plot([0, 1, 2], [3, 1, 2])
        ax.set(title="a title", xlabel="x", ylabel="y")
        return plots.save(fig, path)

    with plots.style():
        styled = plt.imread(plain(tmp_path / "styled.png"))
    assert (plt.imread(plain(tmp_path / "auto.png")) == styled).all()  # nothing above the axes
    for place in ("offset", "top"):
        with plots.style():
            fig, ax = plt.subplots(figsize=(3.0, 2.0))
            ax.plot([0, 1], [1e7, 1e7 + 1])  # y labelled beside an offset text, "1e7" atop the axis
            ax.set_title("a long title, the width of the axes")
            if place == "top":
                ax.ticklabel_format(useOffset=False, style="plain")
                ax.xaxis.tick_top()
            with pytest.warns(TickLabelOverlap, match=rf"{place}\.png: .*axes 'a long title.*' title and '"):
                plots.save(fig, tmp_path / f"{place}.png")


def test_pinning_empty_axis_labels_changes_no_pixel(tmp_path: Path) -> None:
    """`save` pins the empty labels of a grid's inner panels inside their axes (so that no draw
    places them): the file is the one matplotlib's own placement gives."""

    def grid() -> plt.Figure:
        fig, axes = plt.subplots(2, 2, figsize=(6.0, 4.0), sharex=True)
        for i, row in enumerate(axes):
            for j, ax in enumerate(row):
                ax.plot([0, 1, 2], [i, j, i + j])
                ax.set_title(f"panel {i}{j}")
        axes[1][0].set(xlabel="time (s)", ylabel="rate")
        axes[0][0].set_ylabel("rate")
        return fig

    pinned = grid()
    plots.save(pinned, tmp_path / "pinned.png")
    assert pinned.axes[3].xaxis.label.get_position() == (0.5, 0.5)  # pinned, not placed
    placed = grid()
    placed.set_dpi(plots._DPI)  # `save` lays out at the resolution it writes
    placed.tight_layout()
    placed.savefig(tmp_path / "placed.png", dpi=plots._DPI)
    plt.close(placed)
    assert (plt.imread(tmp_path / "pinned.png") == plt.imread(tmp_path / "placed.png")).all()


def test_plain_log_ticks() -> None:
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    ax.plot([0.004, 0.01, 0.02, 0.048], [2.0, 1.1, 0.75, 0.37], "o-")
    ax.set(xscale="log", yscale="log")
    plots.plain_log_ticks(ax.xaxis, ax.yaxis)
    fig.tight_layout()
    fig.canvas.draw()
    xs = [t.get_text() for t in plots._drawn_tick_labels(ax.xaxis)]
    assert xs == ["0.005", "0.01", "0.02"] or xs == ["0.005", "0.01", "0.02", "0.05"]
    assert [t.get_text() for t in plots._drawn_tick_labels(ax.yaxis)] == ["0.5", "1", "2"]
    assert overlapping_tick_labels(fig) == []
    plt.close(fig)


def test_coinciding_lines_keep_distinct_styles() -> None:
    styles = [plots._distinct(i, 4, 400) for i in range(4)]
    assert len({(s["linestyle"], s["marker"]) for s in styles}) == 4
    assert len({s["markevery"][0] for s in styles}) == 4  # markers offset along the lines
    assert len({s["color"] for s in styles}) == 4


def test_four_flows_that_deliver_alike_stay_apart(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Paper 003's Fig. 4: tcp0 and tcp3 delivered almost the same and one line hid the other."""
    same = ([0.0, 1.0, 2.0, 3.0], [0, 1_000_000, 2_000_000, 3_000_000])
    monkeypatch.setattr(plots, "cumulative_bytes", lambda run: {f"tcp{i}": same for i in range(4)})
    figures: list[plt.Figure] = []
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig) or path)
    plots.cumulative_delivered(tmp_path / "fig4.png", None, title="t")
    lines = figures[0].axes[0].get_lines()
    assert len({(line.get_linestyle(), line.get_marker()) for line in lines}) == 4
    assert [t.get_text() for t in figures[0].axes[0].get_legend().get_texts()][0] == "tcp0 (3.00 MB)"
    plt.close(figures[0])
