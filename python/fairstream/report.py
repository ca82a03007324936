"""`fairstream report DIR`: one HTML page, ``DIR/report.html``, from a reproduce output directory.

A summary table (experiment, checks passed / total, report-only checks, phase replicas and
phase-sensitive checks) heads the page; then per experiment the published-vs-ours table, the
"what must hold" checks coloured pass / fail / reported, the explanation of where and why ours
differ, what the phase replicas found, the redrawn figures (PNG files in ``DIR/figures/``, linked
by relative path) and the per-point numbers. Plain HTML and CSS.

The canonical run's numbers and verdicts are the headline; beside each number and check stands
its range (min–max) over the phase replicas (`reproduce.runner`), and a check whose verdict is
not the same in every run is marked "phase-sensitive: k of n replicas fail" (or pass). Results
written before replicas existed render as before, without those columns.
"""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from . import output
from .reproduce import EXPERIMENTS
from .reproduce.experiment import verdict
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
.reported { background: #e8eef8; color: #24406e; } .stable { color: #555; }
.sensitive { background: #ffe9b3; color: #6a4300; font-weight: 600; }
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
    output.add_entries(out, [REPORT_FILE, FIGURE_DIR])  # fairstream's, so a rerun may replace them
    return path


def _summary_table(results: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for r in results:
        ok = r["passed"] == r["total"]
        sensitive = _sensitive_count(r)
        replicas = _replica_count(r)
        rows.append(
            f'<tr><td><a href="#{escape(r["id"])}">{escape(r["id"])}</a></td>'
            f"<td>{escape(str(r['paper']))} {escape(r['figure'])}</td><td>{escape(r['title'])}</td>"
            + (
                _verdict(ok, f"{r['passed']} / {r['total']}", f"{r['passed']} / {r['total']}")
                if r["total"] or not r.get("reported")
                else '<td class="reported">none: reported only</td>'
            )
            + _cell(r.get("reported", 0))
            + _cell(replicas)
            + (
                f'<td class="num sensitive">{sensitive}</td>'
                if sensitive
                else f'<td class="num">{"0" if replicas else "—"}</td>'
            )
            + "</tr>"
        )
    table = _table(
        [
            "experiment",
            "paper",
            "title",
            "checks passed",
            "reported only",
            "phase replicas",
            "phase-sensitive",
        ],
        rows,
    )
    total = sum(_sensitive_count(r) for r in results)
    experiments = sum(_sensitive_count(r) > 0 for r in results)
    if not any(_replica_count(r) for r in results):
        line = "No phase replicas ran: each verdict rests on one run."
    elif total:
        line = (
            f'<span class="sensitive">{total} phase-sensitive check{"s" if total != 1 else ""}</span> in '
            f"{experiments} experiment{'s' if experiments != 1 else ''}: a verdict that is not the same in "
            "every run. The verdicts above are the canonical runs'."
        )
    else:
        line = "No check is phase-sensitive: every check has the same verdict in every run."
    return table + f'<p class="meta">{line} {_REPLICA_LEGEND}</p>'


_REPLICA_LEGEND = (
    "A phase replica runs every point of an experiment again with another seed and each link's "
    "propagation delay lengthened by a fixed random fraction of a packet time; "
    "ranges beside our numbers are min–max over the replicas."
)


def _replica_count(result: Mapping[str, Any]) -> int:
    return int((result.get("phase") or {}).get("count", 0))


def _sensitive_count(result: Mapping[str, Any]) -> int:
    return sum(bool(c.get("phase_sensitive")) for c in result["checks"])


def _section(result: Mapping[str, Any], out: Path) -> str:
    rid = result["id"]
    parts = [
        f'<section id="{escape(rid)}"><h2>{escape(rid)}: {escape(result["title"])}</h2>',
        f'<p class="meta">Paper {escape(str(result["paper"]))}, {escape(result["figure"])} · scenario '
        f"<code>{escape(result['scenario'])}</code> · seed {escape(fmt(result.get('seed')))} · "
        f'<a href="{escape(rid)}/result.json">result.json</a></p>',
        f"<p>{escape(result['what_runs'])}</p>",
        "<h3>Published and ours</h3>",
        _comparison(result),
        "<h3>What must hold</h3>",
        _checks(result),
        "<h3>Where ours differs, and why</h3>",
        f'<p class="note">{escape(result["explanation"])}</p>',
        _phase(result),
        _figures(result, out),
        _points(result["points"]),
        "</section>",
    ]
    return "\n".join(parts)


def _comparison(result: Mapping[str, Any]) -> str:
    """Quantity, ours, the replicas' range of ours (when replicas ran), published."""
    spread = _replica_count(result) > 0
    rows = [
        f"<tr><td>{escape(c['quantity'])}</td>{_cell(c['ours'])}"
        + (_spread_cell(c.get("replicas")) if spread else "")
        + f"{_cell(c['published'])}</tr>"
        for c in result["comparison"]
    ]
    headers = (
        ["quantity", "ours", "replicas (min–max)", "published"]
        if spread
        else ["quantity", "ours", "published"]
    )
    return _table(headers, rows)


def _checks(result: Mapping[str, Any]) -> str:
    """Check, ours, the replicas' range, published, the canonical verdict, and the phase mark."""
    spread = _replica_count(result) > 0
    rows = [
        f"<tr><td>{escape(c['description'])}</td>{_cell(c['ours'])}"
        + (_spread_cell(c.get("replicas")) if spread else "")
        + _cell(c["published"])
        + _check_verdict(c)
        + (_phase_mark(c) if spread else "")
        + "</tr>"
        for c in result["checks"]
    ]
    headers = ["check", "ours", "published", "result"]
    if spread:
        headers = ["check", "ours", "replicas (min–max)", "published", "result", "phase"]
    return _table(headers, rows)


def _check_verdict(check: Mapping[str, Any]) -> str:
    word = check.get("verdict") or verdict(check.get("passed"))
    if word == "reported":
        return '<td class="reported" title="reported, no threshold: neither a pass nor a fail">reported</td>'
    return _verdict(word == "pass", "pass", "FAIL")


def _phase_mark(check: Mapping[str, Any]) -> str:
    """'phase-sensitive: k of n replicas fail' (or pass), or how many replicas agree."""
    rep = check.get("replicas") or {}
    n = rep.get("count", 0)
    if not n:
        return "<td>—</td>"
    passed, failed = rep.get("passed", 0), rep.get("failed", 0)
    canonical = check.get("verdict") or verdict(check.get("passed"))
    if check.get("phase_sensitive"):
        if canonical == "pass":
            text = f"phase-sensitive: {failed} of {n} replicas fail"
        elif canonical == "fail":
            text = f"phase-sensitive: {passed} of {n} replicas pass"
        else:
            text = f"phase-sensitive: {passed} of {n} replicas pass, {failed} fail"
        return f'<td class="sensitive">{escape(text)}</td>'
    if passed == n:
        text = f"stable: {n} of {n} replicas pass"
    elif failed == n:
        text = f"stable: {n} of {n} replicas fail"
    else:
        text = f"reported in {n} replicas"
    return f'<td class="stable">{escape(text)}</td>'


def _spread_cell(rep: Mapping[str, Any] | None) -> str:
    """min–max of the replicas' numeric values, with how many; — when there are none."""
    values = (rep or {}).get("values") or []
    if not values:
        return "<td>—</td>"
    lo, hi = fmt(rep.get("min")), fmt(rep.get("max"))
    text = lo if lo == hi else f"{lo} – {hi}"
    return f'<td class="num">{escape(text)} <span class="meta">({len(values)})</span></td>'


def _phase(result: Mapping[str, Any]) -> str:
    """How the replicas ran, the experiment's notes on what they show, and replicas that failed."""
    phase = result.get("phase") or {}
    n = phase.get("count", 0)
    if not n:
        if "phase" in result:
            return (
                '<p class="meta">No phase replicas ran for this experiment: its verdicts rest on one run.</p>'
            )
        return ""
    sensitive = _sensitive_count(result)
    seeds = ", ".join(
        f"{result['seed'] + r['seed_offset']}"
        if isinstance(result.get("seed"), int)
        else f"+{r['seed_offset']}"
        for r in phase.get("replicas", [])
    )
    html = [
        "<h3>Phase sensitivity</h3>",
        f"<p>Besides the canonical run (seed {escape(fmt(result.get('seed')))}, no perturbation), "
        f"{n} phase replica{'s' if n != 1 else ''} ran every point again, with seed{'s' if n != 1 else ''} "
        f"{escape(seeds)} and each link's propagation delay lengthened by a fixed random amount below "
        f"{escape(fmt(phase.get('perturb_delays')))} × the transmission time of a 1500-byte packet at its "
        "rate. "
        + (
            f'<span class="sensitive">{sensitive} check{"s are" if sensitive != 1 else " is"} phase-sensitive'
            "</span>: the verdict differs between runs."
            if sensitive
            else "Every check has the same verdict in every run."
        )
        + "</p>",
    ]
    html += [_sensitive_detail(result, c) for c in result["checks"] if c.get("phase_sensitive")]
    html += [f'<p class="note">{escape(note)}</p>' for note in phase.get("notes", [])]
    html += [
        f'<p class="error">Replica {r["replica"]} could not be evaluated: {escape(str(r["error"]))}</p>'
        for r in phase.get("replicas", [])
        if r.get("error")
    ]
    return "\n".join(html)


def _sensitive_detail(result: Mapping[str, Any], check: Mapping[str, Any]) -> str:
    """One phase-sensitive check, run by run: the canonical verdict and value, then each replica's."""
    seed = result.get("seed")
    step = (result.get("phase") or {}).get("seed_step")
    runs = [f"canonical (seed {fmt(seed)}): {_verdict_word(check)} at {fmt(check['ours'])}"]
    for run in (check.get("replicas") or {}).get("runs", []):
        n = run["replica"]
        where = f" (seed {seed + n * step})" if isinstance(seed, int) and isinstance(step, int) else ""
        runs.append(f"replica {n}{where}: {_verdict_word(run)} at {fmt(run['ours'])}")
    return (
        f'<p><span class="sensitive">phase-sensitive</span> {escape(check["description"])}: '
        + escape("; ".join(runs))
        + ".</p>"
    )


def _verdict_word(check: Mapping[str, Any]) -> str:
    word = check.get("verdict") or verdict(check.get("passed"))
    return "FAIL" if word == "fail" else word


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
