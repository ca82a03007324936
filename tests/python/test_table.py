"""Terminal tables (rich): alignment, cells shown literally (markup, escape sequences), no
wrapping in a log, and fitting a narrow terminal."""

from __future__ import annotations

import pytest
from fairstream import table
from fairstream.table import fmt, format_table


def test_numbers_right_text_left_and_a_rule_under_the_header() -> None:
    text = format_table(["flow", "Mbit/s", "note"], [["tcp0", 1.5, None], ["udp-long-name", 20, "x"]])
    lines = text.splitlines()
    assert lines[0].split() == ["flow", "Mbit/s", "note"]
    assert set(lines[1]) == {"─"}
    assert lines[2].startswith("tcp0 ") and lines[3].startswith("udp-long-name")
    ends = [line.index(v) + len(v) for line, v in zip(lines[2:], ["1.5", "20"], strict=True)]
    assert ends[0] == ends[1] == lines[0].index("Mbit/s") + len("Mbit/s")  # right-aligned
    assert "—" in lines[2]  # None as a dash, not counted as text


def test_cells_are_literal_text() -> None:
    text = format_table(["flow"], [["[bold]x[/bold]"], ["evil\x1b[2J\x07"], ["caf\u00e9 \u00d7"]])
    assert "[bold]x[/bold]" in text  # rich markup is not interpreted
    assert "\x1b" not in text and "\x07" not in text  # an escape sequence never reaches the terminal
    assert "evil\\x1b[2J\\x07" in text
    assert "café ×" in text


def test_no_wrapping_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table, "_terminal_width", lambda: None)
    long = "word " * 60
    text = format_table(["title", "n"], [[long.strip(), 1]])
    assert len(text.splitlines()) == 3


def test_a_narrow_terminal_wraps_the_text_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table, "_terminal_width", lambda: 40)
    text = format_table(["id", "title"], [["unfair-tcp4", "Unfairness amongst four TCP flows on a T1 link"]])
    assert all(len(line) <= 40 for line in text.splitlines())
    assert "unfair-tcp4" in text and "T1" in text


def test_fmt() -> None:
    assert fmt(None) == fmt(float("nan")) == "—"
    assert fmt(True) == "yes"
    assert fmt(1 / 3) == "0.3333"
    assert fmt(7) == "7"


def test_numbers_are_not_broken_on_a_narrow_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    row = ["a fairly long flow name here", 123456789012, 9876543210]
    for width in (20, 40):  # narrower than the numbers: not squeezed; room for them: text wraps
        monkeypatch.setattr(table, "_terminal_width", lambda width=width: width)
        text = format_table(["flow", "bytes sent", "bytes delivered"], [row])
        assert "123456789012" in text and "9876543210" in text, text  # whole, not "123…"
        assert "…" not in text
