"""`fairstream report DIR`: one HTML page, ``DIR/report.html``, from a reproduce output directory.

A summary table (experiment, checks passed / total) heads the page; then per experiment the
published-vs-ours table, the "what must hold" checks coloured pass/fail, the explanation of where
and why ours differ, the redrawn figures (PNG files in ``DIR/figures/``, linked by relative path)
and the per-point numbers. Plain HTML and CSS.
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from .reproduce import EXPERIMENTS
from .reproduce.runner import load_results
from .table import fmt

REPORT_FILE = "report.html"
FIGURE_DIR = "figures"

_CSS = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; }
body { color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-top: 2px solid #ccc; padding-top: 1em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.6em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { background: #dff3df; color: #145214; } .fail { background: #f8dcdc; color: #7a1010; }
.meta { color: #666; } .note { background: #fafaf0; border-left: 4px solid #cc9; padding: 0.5em 1em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 0.92em; } .error { color: #7a1010; }
"""


def write_report(output_dir: str | os.PathLike[str]) -> Path:
    """Writes ``report.html`` (and its figures) for the results in `output_dir`; returns its path."""
    out = Path(output_dir)
    results = load_results(out)
    if not results:
        raise FileNotFoundError(
            f"{out} holds no <experiment>/result.json; run `fairstream reproduce -o {out}` first"
        )
    sections = [_section(r, out) for r in results]
    generated = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    quick = any(r.get("quick") for r in results)
    body = [
        "<h1>fairstream: reproductions beside the published results</h1>",
        f'<p class="meta">Generated {escape(generated)} from <code>{escape(str(out))}</code>; '
        f"fairstream {escape(str(results[0].get('fairstream_version', '?')))}.</p>",
        '<p class="note"><b>Quick mode:</b> shortened runs and sweeps, for tests; not the reproduction.</p>'
        if quick
        else "",
        _summary_table(results),
        *sections,
    ]
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>fairstream reproduction report</title>"
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(b for b in body if b) + "\n</body></html>\n"
    )
    path = out / REPORT_FILE
    path.write_text(page, encoding="utf-8")
    return path


def _summary_table(results: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for r in results:
        ok = r["passed"] == r["total"]
        rows.append(
            f'<tr><td><a href="#{escape(r["id"])}">{escape(r["id"])}</a></td>'
            f"<td>{escape(str(r['paper']))} {escape(r['figure'])}</td><td>{escape(r['title'])}</td>"
            + _verdict(ok, f"{r['passed']} / {r['total']}", f"{r['passed']} / {r['total']}")
            + "</tr>"
        )
    return _table(["experiment", "paper", "title", "checks passed"], rows)


def _section(result: Mapping[str, Any], out: Path) -> str:
    rid = result["id"]
    parts = [
        f'<section id="{escape(rid)}"><h2>{escape(rid)}: {escape(result["title"])}</h2>',
        f'<p class="meta">Paper {escape(str(result["paper"]))}, {escape(result["figure"])} · scenario '
        f"<code>{escape(result['scenario'])}</code> · seed {escape(fmt(result.get('seed')))} · "
        f'<a href="{escape(rid)}/result.json">result.json</a></p>',
        f"<p>{escape(result['what_runs'])}</p>",
        "<h3>Published and ours</h3>",
        _table(
            ["quantity", "ours", "published"],
            [
                f"<tr><td>{escape(c['quantity'])}</td>{_cell(c['ours'])}{_cell(c['published'])}</tr>"
                for c in result["comparison"]
            ],
        ),
        "<h3>What must hold</h3>",
        _table(
            ["check", "ours", "published", "result"],
            [
                f"<tr><td>{escape(c['description'])}</td>{_cell(c['ours'])}{_cell(c['published'])}"
                + _verdict(c["passed"], "pass", "FAIL")
                + "</tr>"
                for c in result["checks"]
            ],
        ),
        "<h3>Where ours differs, and why</h3>",
        f'<p class="note">{escape(result["explanation"])}</p>',
        _figures(result, out),
        _points(result["points"]),
        "</section>",
    ]
    return "\n".join(parts)


def _figures(result: Mapping[str, Any], out: Path) -> str:
    exp = EXPERIMENTS.get(result["id"])
    if exp is None:
        return '<p class="meta">No figures: this fairstream does not know the experiment.</p>'
    try:
        figures = exp.figures(result, out / result["id"], out / FIGURE_DIR)
    except Exception as err:  # a broken figure must not cost the rest of the report
        print(f"report: figures of {result['id']} failed: {err!r}", file=sys.stderr)
        return f'<p class="error">Figures failed: {escape(repr(err))}</p>'
    html = ["<h3>Figures</h3>"]
    for fig in figures:
        src = fig.path.resolve().relative_to(out.resolve()).as_posix()
        html.append(
            f'<figure><img src="{escape(src)}" alt="{escape(fig.caption)}">'
            f"<figcaption>{escape(fig.caption)}</figcaption></figure>"
        )
    return "\n".join(html)


def _points(points: Sequence[Mapping[str, Any]]) -> str:
    if not points:
        return ""
    headers = list(points[0])
    rows = ["<tr>" + "".join(_cell(p.get(h)) for h in headers) + "</tr>" for p in points]
    return "<details><summary>Our numbers, per point</summary>" + _table(headers, rows) + "</details>"


def _table(headers: Sequence[str], rows: Sequence[str]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>"


def _cell(value: Any) -> str:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return f'<td class="num">{escape(fmt(value))}</td>' if numeric else f"<td>{escape(fmt(value))}</td>"


def _verdict(passed: bool, pass_text: str, fail_text: str) -> str:
    """A cell coloured by the outcome."""
    return f'<td class="{"pass" if passed else "fail"}">{escape(pass_text if passed else fail_text)}</td>'
