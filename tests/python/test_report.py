"""The HTML report (jinja2 templates, autoescape on): values from result.json are escaped, headings
name their source without a dangling figure dash, and a report-only experiment is counted apart
from the ones that pass."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fairstream.report import write_report
from fairstream.reproduce.experiment import experiment_verdict, source


def fake_result(exp_id: str, **fields: Any) -> dict[str, Any]:
    """A result.json of an experiment this fairstream does not know (so no figures are drawn)."""
    return {
        "id": exp_id,
        "title": "a title",
        "paper": "003",
        "figure": "Fig. 9",
        "scenario": "x.toml",
        "seed": 1,
        "what_runs": "one run",
        "explanation": "why",
        "comparison": [{"quantity": "q", "ours": 1.5, "published": 2}],
        "checks": [{"description": "holds", "ours": 1.5, "published": 2, "passed": True, "verdict": "pass"}],
        "points": [{"point": "a", "value": 1.5}],
        "passed": 1,
        "total": 1,
        "reported": 0,
        **fields,
    }


def write(out: Path, *results: dict[str, Any]) -> str:
    for r in results:
        (out / r["id"]).mkdir(parents=True)
        (out / r["id"] / "result.json").write_text(json.dumps(r), encoding="utf-8")
    return write_report(out).read_text(encoding="utf-8")


def test_values_are_escaped(tmp_path: Path) -> None:
    evil = '<script>alert("x")</script>'
    html = write(
        tmp_path,
        fake_result(
            "evil",
            title=evil,
            explanation=f"a & b {evil}",
            comparison=[{"quantity": evil, "ours": evil, "published": "<b>"}],
            points=[{evil: evil}],
        ),
    )
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "a &amp; b" in html


def test_cells_are_escaped_as_autoescape_would() -> None:
    from fairstream.report import cell_html
    from markupsafe import Markup, escape

    alone = ["a & b", "a < b", "a > b", "it's", 'say "hi"']  # each character escaped, on its own
    for value in ['<a href="x">it\'s & more</a>', *alone, "12.5 (11–13)", 42, 0.1, True, Markup("<i>x</i>")]:
        cell = {"text": value, "cls": "num 'q'", "title": value, "href": value, "count": value}
        e = {k: str(escape(v)) for k, v in cell.items()}
        expected = (
            f'<td class="{e["cls"]}" title="{e["title"]}"><a href="{e["href"]}">{e["text"]}</a>'
            f' <span class="meta">({e["count"]})</span></td>'
        )
        assert cell_html(cell) == expected, value
    assert cell_html({"text": "a<b", "cls": None, "count": None}) == "<td>a&lt;b</td>"
    assert cell_html({"text": None, "count": 0}) == '<td>None <span class="meta">(0)</span></td>'


def test_headings_name_the_source(tmp_path: Path) -> None:
    html = write(
        tmp_path,
        fake_result("paper-exp"),
        fake_result("validation-exp", paper="validation", figure="—"),
        fake_result("no-figure", paper="004", figure="—"),
    )
    assert '<p class="meta">Paper 003, Fig. 9 · scenario' in html
    assert '<p class="meta">Validation · scenario' in html
    assert '<p class="meta">Paper 004 · scenario' in html
    assert "—  ·" not in html and ", —" not in html and "validation —" not in html
    assert "<td>validation</td>" in html and "<td>paper 003, Fig. 9</td>" in html


def test_a_report_only_experiment_neither_passes_nor_fails(tmp_path: Path) -> None:
    reported = fake_result(
        "reported-only",
        checks=[
            {"description": "ratio (no threshold)", "ours": 3.0, "published": "≈ 3", "passed": None},
            {"description": "index (no threshold)", "ours": 0.8, "published": "—", "passed": None},
        ],
        passed=0,
        total=0,
        reported=2,
    )
    failed = fake_result("failing", passed=0, checks=[{**fake_result("x")["checks"][0], "passed": False}])
    del failed["checks"][0]["verdict"]  # results written before the verdict field existed
    html = write(tmp_path, fake_result("passing"), reported, failed)
    assert "3 experiments: 1 pass, 1 fail, 1 only report (no threshold)." in html
    assert '<td class="reported">none: reported only</td>' in html
    assert html.count('<td class="pass">1 / 1</td>') == 1  # only "passing" is a pass
    assert '<td class="fail">0 / 1</td>' in html
    assert html.count(">reported</td>") == 2 and ">FAIL</td>" in html


def test_experiment_verdict_and_source() -> None:
    assert experiment_verdict({"passed": 2, "total": 2}) == "pass"
    assert experiment_verdict({"passed": 1, "total": 2}) == "fail"
    assert experiment_verdict({"passed": 0, "total": 0, "reported": 2}) == "reported"
    assert source("003", "Fig. 4") == "paper 003, Fig. 4"
    assert source("validation", "—") == "validation"
    assert source("004", "—") == "paper 004"


def test_an_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="fairstream reproduce"):
        write_report(tmp_path)


def test_the_templates_are_package_data() -> None:
    templates = resources.files("fairstream") / "templates"
    assert {"report.html", "macros.html", "report.css"} <= {p.name for p in templates.iterdir()}
