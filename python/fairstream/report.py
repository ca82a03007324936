"""`fairstream report DIR`: one HTML page, ``DIR/report.html``, from a reproduce output directory.

A summary table (experiment, its verdict by the rule of `fairstream.verdicts`, checks that pass /
judged, phase-sensitive checks, report-only checks, self-checks, phase replicas) heads the page,
with a tally of experiments that pass, fail, are phase-sensitive or only report and the rule
itself; then per experiment the published-vs-ours table, the "what must hold" checks coloured by
the rule's verdict (the canonical run's and the replicas' beside it), the explanation of where
and why ours differ, what the phase replicas found, the redrawn figures (PNG files in
``DIR/figures/``, linked by relative path) and the per-point numbers. Plain HTML and CSS.

The page is a jinja2 template (package data ``fairstream/templates/report.html``, with autoescape
on: every value from result.json is escaped); this module turns each result.json into the plain
texts, CSS classes and table cells the template lays out. Each experiment's section is a template
of its own (``section.html``): a reproduction renders it where it evaluates the experiment, on a
worker, into ``<id>/report-section.html``, and its page stitches them together; ``fairstream
report DIR`` renders every section anew.

The canonical run's numbers are the headline; beside each number and check stands its range
(min–max) over the phase replicas (`reproduce.runner`). A check's verdict is the rule's: pass or
fail when the canonical run and three quarters of the replicas agree, else "phase-sensitive".
Results written before replicas (or the rule) existed render as before.

A reproduction stopped by Ctrl-C leaves ``DIR/INCOMPLETE`` (`fairstream.interrupt`): its text
heads the page in a warning, and the experiments it names are not in the tables.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import output
from .interrupt import read_marker
from .reproduce import EXPERIMENTS
from .reproduce.experiment import experiment_verdict, source, verdict
from .reproduce.runner import load_results
from .table import fmt, is_number
from .verdicts import RULE

REPORT_FILE = "report.html"
FIGURE_DIR = "figures"
#: An experiment's section of the page, under its directory: rendered where it is evaluated
#: (`section_html`), so that a reproduction's page is the sections stitched together.
SECTION_FILE = "report-section.html"

#: A table cell, as the template's `cell` macro takes it: text, and optionally cls (CSS classes),
#: title (a tooltip), href (a link) and count (a "(n)" after the text).
Cell = dict[str, Any]


def write_report(output_dir: str | os.PathLike[str], *, rendered_sections: bool = False) -> Path:
    """Writes ``report.html`` (and its figures) for the results in `output_dir`; returns its path.

    `rendered_sections`: an experiment's section is taken from its ``SECTION_FILE`` where there is
    one, as the reproduction that has just written `output_dir` rendered it with this code (an
    experiment restored from the run cache comes with the section the same code rendered);
    otherwise each section is rendered here (``fairstream report DIR``, whatever wrote DIR)."""
    from markupsafe import Markup

    out = Path(output_dir)
    results = load_results(out)
    incomplete = read_marker(out)
    if not results:
        if incomplete:
            raise FileNotFoundError(f"{out}: no experiment was evaluated; {incomplete}")
        written = output.read_marker(out)
        if written is not None and written.get("command") != "reproduce":
            raise FileNotFoundError(
                f"{out} holds the results of `fairstream {written.get('command')}`; a report is "
                "written for a reproduction's (`fairstream reproduce -o DIR`)"
            )
        raise FileNotFoundError(
            f"{out} holds no <experiment>/result.json; run `fairstream reproduce -o {out}` first"
        )
    page = render(
        "report.html",
        generated=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        out=str(out),
        version=str(results[0].get("fairstream_version", "?")),
        quick=any(r.get("quick") for r in results),
        incomplete=incomplete,
        summary=_summary(results),
        sections=[Markup(_section_of(r, out, rendered_sections)) for r in results],
    )
    path = out / REPORT_FILE
    path.write_text(page, encoding="utf-8")
    output.add_entries(out, [REPORT_FILE, FIGURE_DIR])  # fairstream's, so a rerun may replace them
    return path


def section_html(result: Mapping[str, Any], out: Path) -> str:
    """The experiment's section of the page, for its `result` as read from its result.json in the
    output directory `out` (its figures, playout and links are found from there)."""
    return render("section.html", s=_section(result, out))


def _section_of(result: Mapping[str, Any], out: Path, rendered: bool) -> str:
    if rendered:
        try:
            return (out / result["id"] / SECTION_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
    return section_html(result, out)


def render(template: str, **context: Any) -> str:
    """Renders a template of ``fairstream/templates`` with autoescape on."""
    return _environment().get_template(template).render(**context)


@functools.cache
def _environment() -> Any:
    """The templates' environment, made once per process: it keeps each template compiled (an
    evaluation renders its experiment's section)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("fairstream", "templates"),
        autoescape=True,
        undefined=StrictUndefined,  # a misspelt name in a template is an error, not an empty string
        keep_trailing_newline=True,
    )
    env.filters["cells"] = row_html
    return env


def row_html(row: Sequence[Cell]) -> Any:
    """A table row's cells as markup (the template's tables use this filter, one call per row: a
    report has tens of thousands of cells, and a macro call, then a filter call, each took most of
    its rendering time)."""
    from markupsafe import Markup

    return Markup("".join(map(cell_html, row)))


def cell_html(c: Cell) -> str:
    """A table cell as markup: ``<td>`` with its class and title, its text (a link when it has an
    href) and its count, each escaped."""
    attrs = ""
    if c.get("cls"):
        attrs += f' class="{_escape(c["cls"])}"'
    if c.get("title"):
        attrs += f' title="{_escape(c["title"])}"'
    inner = _escape(c["text"])
    if c.get("href"):
        inner = f'<a href="{_escape(c["href"])}">{inner}</a>'
    if c.get("count") is not None:
        inner += f' <span class="meta">({_escape(c["count"])})</span>'
    return f"<td{attrs}>{inner}</td>"


#: The characters `markupsafe.escape` replaces: text without any is already escaped.
_SPECIAL = re.compile("[&<>'\"]")


def _escape(value: Any) -> str:
    """`value` as `markupsafe.escape` gives it, as text (markup, with ``__html__``, as it is).
    Most cells hold nothing to escape: those skip making a `Markup` of every piece."""
    if hasattr(value, "__html__"):
        return str(value.__html__())
    text = value if type(value) is str else str(value)
    if not _SPECIAL.search(text):
        return text
    from markupsafe import escape

    return str(escape(text))


# --- the summary at the top ------------------------------------------------------------------------


def _summary(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    rows = []
    for r in results:
        sensitive, replicas = _sensitive_count(r), _replica_count(r)
        rows.append(
            [
                {"text": r["id"], "href": f"#{r['id']}"},
                _text(source(r["paper"], r["figure"])),
                _text(r["title"]),
                _verdict_cell(experiment_verdict(r)),
                _experiment_cell(r),
                {"text": str(sensitive), "cls": "num sensitive"}
                if sensitive
                else {"text": "0" if replicas else "—", "cls": "num"},
                _cell(r.get("reported", 0)),
                _self_checks_cell(r),
                _cell(replicas),
            ]
        )
    verdicts = [experiment_verdict(r) for r in results]
    tally = ", ".join(
        f"{verdicts.count(word)} {label}"
        for word, label in (
            ("pass", "pass"),
            ("fail", "fail"),
            ("phase-sensitive", "phase-sensitive"),
            ("reported", "only report (no threshold)"),
        )
        if verdicts.count(word)
    )
    return {
        "headers": [
            "experiment",
            "source",
            "title",
            "verdict",
            "checks pass / judged",
            "phase-sensitive",
            "reported only",
            "self-checks",
            "phase replicas",
        ],
        "rows": rows,
        "tally": f"{len(results)} experiment{'s' if len(results) != 1 else ''}: {tally}.",
        "rule": RULE,
        "any_replicas": any(_replica_count(r) for r in results),
        "sensitive": sum(_sensitive_count(r) for r in results),
        "sensitive_experiments": sum(_sensitive_count(r) > 0 for r in results),
    }


def _self_checks_cell(result: Mapping[str, Any]) -> Cell:
    """Self-checks passed / in all (they measure no run), or — without any."""
    counts = result.get("verdicts") or {}
    if not counts.get("self_checks"):
        return _text("—")
    ok = counts["self_checks_passed"] == counts["self_checks"]
    return {
        "text": f"{counts['self_checks_passed']} / {counts['self_checks']}",
        "cls": "pass" if ok else "fail",
    }


def _verdict_cell(word: str) -> Cell:
    """An experiment's or a check's rule verdict, coloured."""
    text = {"fail": "FAIL", "reported": "reported only"}.get(word, word)
    cls = {"phase-sensitive": "sensitive"}.get(word, word)
    return {"text": text, "cls": cls}


def _experiment_cell(result: Mapping[str, Any]) -> Cell:
    """Judged checks that pass by the rule / judged checks (the canonical run's counts for a result
    written before the rule); "none: reported only" when its checks only report."""
    word = experiment_verdict(result)
    if word == "reported":
        return {"text": "none: reported only", "cls": "reported"}
    counts = result.get("verdicts")
    if counts is None:
        return {"text": f"{result['passed']} / {result['total']}", "cls": word}
    judged = counts["pass"] + counts["fail"] + counts["phase-sensitive"]
    cls = {"phase-sensitive": "sensitive"}.get(word, word)
    return {"text": f"{counts['pass']} / {judged}", "cls": cls}


def _replica_count(result: Mapping[str, Any]) -> int:
    return int((result.get("phase") or {}).get("count", 0))


def _sensitive_count(result: Mapping[str, Any]) -> int:
    return sum(bool(c.get("phase_sensitive")) and not c.get("self_check") for c in result["checks"])


# --- one experiment ----------------------------------------------------------------------------------


def _section(result: Mapping[str, Any], out: Path) -> dict[str, Any]:
    where = source(result["paper"], result["figure"])
    section = {
        "id": result["id"],
        "title": result["title"],
        "source": where[:1].upper() + where[1:],
        "scenario": result["scenario"],
        "seed": fmt(result.get("seed")),
        "what_runs": result["what_runs"],
        "comparison": _comparison(result),
        "checks": _checks(result),
        "explanation": result["explanation"],
        "phase": _phase(result),
        "no_replicas": "phase" in result,
        "points": _points(result["points"]),
        "playout": _playout(out / result["id"]),
        "figures": [],
        "figures_unknown": False,
        "figures_error": None,
    }
    section.update(_figures(result, out))
    return section


def _comparison(result: Mapping[str, Any]) -> dict[str, Any]:
    """Quantity, ours, the replicas' range of ours (when replicas ran), published."""
    spread = _replica_count(result) > 0
    rows = [
        [
            _text(c["quantity"]),
            _cell(c["ours"]),
            *([_spread_cell(c.get("replicas"))] if spread else []),
            _cell(c["published"]),
        ]
        for c in result["comparison"]
    ]
    headers = (
        ["quantity", "ours", "replicas (min–max)", "published"]
        if spread
        else ["quantity", "ours", "published"]
    )
    return {"headers": headers, "rows": rows}


def _checks(result: Mapping[str, Any]) -> dict[str, Any]:
    """Check, ours, the replicas' range, published, the canonical verdict, and the phase mark."""
    spread = _replica_count(result) > 0
    rows = [
        [
            _text(c["description"]),
            _cell(c["ours"]),
            *([_spread_cell(c.get("replicas"))] if spread else []),
            _cell(c["published"]),
            _check_verdict(c),
            *([_phase_mark(c)] if spread else []),
        ]
        for c in result["checks"]
    ]
    headers = ["check", "ours", "published", "result"]
    if spread:
        headers = ["check", "ours", "replicas (min–max)", "published", "result", "phase"]
    return {"headers": headers, "rows": rows}


def _verdict_of(check: Mapping[str, Any]) -> str:
    return check.get("verdict") or verdict(check.get("passed"))


def _check_verdict(check: Mapping[str, Any]) -> Cell:
    """The rule's verdict (the canonical run's for a result written before the rule); a self-check's
    own."""
    word = check.get("rule") or _verdict_of(check)
    if check.get("self_check"):
        ok = check.get("passed")
        return {
            "text": f"self-check: {'pass' if ok else 'FAIL'}",
            "cls": "pass" if ok else "fail",
            "title": "measures no run: checks our own code, counted apart",
        }
    if word == "reported":
        return {
            "text": "reported",
            "cls": "reported",
            "title": "reported, no threshold: neither a pass nor a fail",
        }
    return _verdict_cell(word)


def _phase_mark(check: Mapping[str, Any]) -> Cell:
    """'phase-sensitive: k of n replicas fail' (or pass), or how many replicas agree."""
    rep = check.get("replicas") or {}
    n = rep.get("count", 0)
    if not n:
        return _text("—")
    passed, failed = rep.get("passed", 0), rep.get("failed", 0)
    canonical = _verdict_of(check)
    if check.get("rule") in ("pass", "fail") and check.get("split"):
        agree = passed if canonical == "pass" else failed
        return {"text": f"holds: canonical {canonical}, {agree} of {n} replicas agree", "cls": "stable"}
    if check.get("phase_sensitive"):
        if canonical == "pass":
            text = f"phase-sensitive: {failed} of {n} replicas fail"
        elif canonical == "fail":
            text = f"phase-sensitive: {passed} of {n} replicas pass"
        else:
            text = f"phase-sensitive: {passed} of {n} replicas pass, {failed} fail"
        return {"text": text, "cls": "sensitive"}
    if passed == n:
        text = f"stable: {n} of {n} replicas pass"
    elif failed == n:
        text = f"stable: {n} of {n} replicas fail"
    else:
        text = f"reported in {n} replica{'s' if n != 1 else ''}"
    return {"text": text, "cls": "stable"}


def _spread_cell(rep: Mapping[str, Any] | None) -> Cell:
    """min–max of the replicas' numeric values, with how many; — when there are none."""
    values = (rep or {}).get("values") or []
    if not values:
        return _text("—")
    lo, hi = fmt(rep.get("min")), fmt(rep.get("max"))
    return {"text": lo if lo == hi else f"{lo} – {hi}", "cls": "num", "count": len(values)}


def _phase(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """How the replicas ran, the experiment's notes on what they show, and replicas that failed;
    None when none ran."""
    phase = result.get("phase") or {}
    n = phase.get("count", 0)
    if not n:
        return None
    seeds = ", ".join(
        f"{result['seed'] + r['seed_offset']}"
        if isinstance(result.get("seed"), int)
        else f"+{r['seed_offset']}"
        for r in phase.get("replicas", [])
    )
    return {
        "count": n,
        "seeds": seeds,
        "perturb": fmt(phase.get("perturb_delays")),
        "sensitive": _sensitive_count(result),
        "split": sum(bool(c.get("split")) and not c.get("phase_sensitive") for c in result["checks"]),
        "details": [
            _sensitive_detail(result, c)
            for c in result["checks"]
            if c.get("phase_sensitive") or c.get("split")
        ],
        "notes": list(phase.get("notes", [])),
        "errors": [
            {"replica": r["replica"], "error": str(r["error"])}
            for r in phase.get("replicas", [])
            if r.get("error")
        ],
    }


def _sensitive_detail(result: Mapping[str, Any], check: Mapping[str, Any]) -> dict[str, str]:
    """One phase-sensitive (or split) check, run by run: the canonical verdict and value, then each
    replica's."""
    seed = result.get("seed")
    step = (result.get("phase") or {}).get("seed_step")
    runs = [f"canonical (seed {fmt(seed)}): {_verdict_word(check)} at {fmt(check['ours'])}"]
    for run in (check.get("replicas") or {}).get("runs", []):
        n = run["replica"]
        where = f" (seed {seed + n * step})" if isinstance(seed, int) and isinstance(step, int) else ""
        runs.append(f"replica {n}{where}: {_verdict_word(run)} at {fmt(run['ours'])}")
    sensitive = bool(check.get("phase_sensitive"))
    return {
        "description": check["description"],
        "runs": "; ".join(runs),
        "word": "phase-sensitive" if sensitive else f"split, {check.get('rule', '')} by the rule",
        "cls": "sensitive" if sensitive else "stable",
    }


def _verdict_word(check: Mapping[str, Any]) -> str:
    word = _verdict_of(check)
    return "FAIL" if word == "fail" else word


def _figures(result: Mapping[str, Any], out: Path) -> dict[str, Any]:
    """The experiment's figures as {src, caption}, or why not: those `fairstream reproduce` drew
    as it evaluated the experiment (listed in ``<id>/figures.json``), else drawn now into
    ``DIR/figures``."""
    drawn = _drawn(out, result["id"])
    if drawn is not None:
        return drawn
    exp = EXPERIMENTS.get(result["id"])
    if exp is None:
        return {"figures_unknown": True}
    from .reproduce.campaign import draw

    figures = draw(exp, result, out, "report")  # a broken figure must not cost the rest of the report
    return {"figures_error": figures["error"]} if "error" in figures else figures


def _drawn(out: Path, exp_id: str) -> dict[str, Any] | None:
    """The figures listed in ``<id>/figures.json`` when they are all there, or the error drawing
    them gave; None without that file."""
    import json

    from .reproduce.campaign import FIGURES_FILE

    try:
        listed = json.loads((out / exp_id / FIGURES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if "error" in listed:
        return {"figures_error": listed["error"]}
    figures = listed.get("figures", [])
    if not all((out / f["src"]).is_file() for f in figures):
        return None
    return {"figures": figures}


def _playout(exp_dir: Path) -> dict[str, Any] | None:
    """The playout summary of the streamer flows in the experiment's runs (`reproduce.media`), if
    any: a table, and how many rows were left out."""
    from .reproduce.media import dataset_report_rows, report_rows

    runs = exp_dir / "runs"
    dirs = sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    if not dirs and (exp_dir / "data" / "dataset.json").is_file():  # the canonical points of its dataset
        rows, more = dataset_report_rows(exp_dir / "data")
    else:
        rows, more = report_rows(dirs)
    table = _points(rows)
    return None if table is None else {**table, "more": more}


def _points(points: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    if not points:
        return None
    headers = list(points[0])
    return {"headers": headers, "rows": [[_cell(p.get(h)) for h in headers] for p in points]}


def _cell(value: Any) -> Cell:
    """A value in `fmt`'s form; numbers right-aligned."""
    return {"text": fmt(value), "cls": "num" if is_number(value) else None}


def _text(text: str) -> Cell:
    return {"text": text, "cls": None}
