"""The text `fairstream bench` prints: the side-by-side agreement of fairstream and ns-3, the
timing table with medians and ranges, and the scaling row (from the rows `fairstream.bench`
measures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import bench_ns3
from .bench import DROPS_TOLERANCE, GOODPUT_TOLERANCE, JAIN_TOLERANCE, pct, relative
from .table import fmt, format_table

#: Flows shown one per line in the agreement table; beyond that, a summary line.
MAX_FLOW_LINES = 8


def _timing(spread: Mapping[str, Any] | None) -> str | None:
    if spread is None:
        return None
    if len(spread["all"]) == 1:
        return fmt(spread["median"], 3)
    return f"{fmt(spread['median'], 3)} ({fmt(spread['min'], 3)}–{fmt(spread['max'], 3)})"


def _mbit(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e6


def format_agreement(row: Mapping[str, Any]) -> str:
    """One benchmark's side-by-side results and the verdict."""
    a = row["agreement"]
    verdict = "AGREE" if a["agree"] else "DISAGREE: " + "; ".join(a["failed"])
    lines = [f"{row['benchmark']} ({row['description']}): {verdict}"]
    fs_flows = {f["name"]: f for f in row["fairstream"]["flows"]}
    ns_flows = {f["name"]: f for f in row["ns3"]["flows"]}
    tcp = any("retransmits" in f for f in ns_flows.values())
    headers = ["", "fairstream", "ns-3", "diff", "ok"]
    if tcp:
        headers += ["retransmits fs / ns-3", "ns-3 timeouts"]
    rows = []
    if len(a["flows"]) <= MAX_FLOW_LINES:
        for f in a["flows"]:
            cells = [
                f"{f['name']} Mbit/s",
                _mbit(f["fairstream_bps"]),
                _mbit(f["ns3_bps"]),
                pct(f["diff"]),
                f["ok"],
            ]
            if tcp:
                n = ns_flows[f["name"]]
                cells += [
                    f"{fs_flows[f['name']].get('retransmits')} / {n.get('retransmits')}",
                    n.get("timeouts"),
                ]
            rows.append(cells)
    else:
        within = sum(f["ok"] for f in a["flows"])
        total_fs = sum(int(f.get("goodput_bytes") or 0) for f in fs_flows.values())
        total_ns = sum(int(f.get("goodput_bytes") or 0) for f in ns_flows.values())
        cells = [
            f"all {len(a['flows'])} flows: MB delivered",
            total_fs / 1e6,
            total_ns / 1e6,
            pct(relative(total_fs, total_ns)),
            f"{within} of {len(a['flows'])} flows within ±{GOODPUT_TOLERANCE:.0%}",
        ]
        if tcp:
            fs_rtx = sum(int(f.get("retransmits") or 0) for f in fs_flows.values())
            ns_rtx = sum(int(f.get("retransmits") or 0) for f in ns_flows.values())
            cells += [f"{fs_rtx} / {ns_rtx}", sum(int(f.get("timeouts") or 0) for f in ns_flows.values())]
        rows.append(cells)
    j, d = a["jain"], a["drops"]
    blank = [None, None] if tcp else []
    rows.append(["Jain's index", j["fairstream"], j["ns3"], f"{j['diff']:+.4f}", j["ok"], *blank])
    rows.append(["bottleneck drops", d["fairstream"], d["ns3"], pct(d["diff"]), d["ok"], *blank])
    lines.append(_indent(format_table(headers, rows)))
    return "\n".join(lines)


def format_report(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> str:
    """The whole `fairstream bench` report: the machine, agreement, simulation and process times."""
    out = [_header(meta)]
    compared = [r for r in rows if r.get("agreement")]
    if compared:
        out.append(
            f"Agreement: the same scenario in both simulators; criteria: goodput of every flow within "
            f"±{GOODPUT_TOLERANCE:.0%}, Jain's index within {JAIN_TOLERANCE:g}, bottleneck drops within "
            f"±{DROPS_TOLERANCE:.0%} (differences relative to fairstream)"
        )
        out.extend(format_agreement(r) for r in compared)
        out.append("")
    with_ns3 = bool(compared)
    repeat = rows[0]["repeat"] if rows else 0
    out.append(
        "Simulation time, in-process (fairstream: build + run"
        + ("; ns-3: set-up + Simulator::Run(), bindings import excluded" if with_ns3 else "")
        + f"); median (min–max) of {repeat}"
    )
    headers = ["benchmark", "fairstream s", "events", "events/s"]
    if with_ns3:
        headers += [
            "ns-3 s",
            "of which Run() s",
            "ns-3 events",
            "ns-3 events/s",
            "ns-3 ÷ fairstream",
            "Run() ÷ fairstream",
        ]
    table = []
    for r in rows:
        fs, n3 = r["fairstream"], r.get("ns3")
        cells = [r["benchmark"], _timing(fs["sim_s"]), fs["events"], _round(fs["events_per_s"])]
        if with_ns3:
            cells += [
                _timing(n3["sim_s"]) if n3 else None,
                _timing(n3["run_s"]) if n3 else None,
                n3["events"] if n3 else None,
                _round(n3["events_per_s"]) if n3 else None,
                f"{r['speedup']:.0f}×" if n3 else None,
                f"{n3['run_s']['median'] / fs['sim_s']['median']:.0f}×" if n3 else None,
            ]
        table.append(cells)
    out.append(format_table(headers, table))
    out.append("")
    out.append(
        "Whole process: `python -m fairstream run SCENARIO -o DIR` (start-up, simulation, Parquet "
        "written)"
        + (" vs the ns-3 child (start-up, bindings import, set-up, run)" if with_ns3 else "")
        + "; peak = the process's peak resident memory; run adds = resident memory the simulation "
        "added (after the run minus after the imports)"
    )
    headers = ["benchmark", "fairstream s", "peak MB", "run adds MB"]
    if with_ns3:
        headers += ["ns-3 s", "of which import s", "peak MB", "run adds MB", "ns-3 ÷ fairstream"]
    table = []
    for r in rows:
        fs, n3 = r["fairstream"], r.get("ns3")
        cells = [r["benchmark"], _timing(fs["process_s"]), fs["process_peak_mb"], fs["state_mb"]]
        if with_ns3:
            ratio = n3["process_s"]["median"] / fs["process_s"]["median"] if n3 else None
            cells += [
                _timing(n3["process_s"]) if n3 else None,
                _timing(n3["import_s"]) if n3 else None,
                n3["process_peak_mb"] if n3 else None,
                n3["state_mb"] if n3 else None,
                f"{ratio:.0f}×" if ratio else None,
            ]
        table.append(cells)
    out.append(format_table(headers, table))
    out.extend(_footer(rows, meta))
    return "\n".join(out)


def format_scaling(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> str:
    """The scaling table: B2's shape at each flow count."""
    with_ns3 = any(r.get("ns3") for r in rows)
    repeat = len(rows[0]["sim_s"]["all"]) if rows else 0
    headers = [
        "flows",
        "events",
        "fairstream s",
        "of which build s",
        "events/s",
        "run's events/s",
        "÷ first",
        "peak MB",
        "run adds MB",
        "kB per flow",
    ]
    if with_ns3:
        headers += ["ns-3 s", "ns-3 events", "ns-3 events/s", "ns-3 run adds MB"]
    table = []
    for r in rows:
        cells = [
            r["flows"],
            r["events"],
            _timing(r["sim_s"]),
            r["build_s"]["median"],
            _round(r["events_per_s"]),
            _round(r["run_events_per_s"]),
            r.get("slowdown"),
            r["peak_mb"],
            r["state_mb"],
            r.get("kib_per_flow"),
        ]
        if with_ns3:
            n = r.get("ns3") or {}
            cells += [n.get("sim_s"), n.get("events"), _round(n.get("events_per_s")), n.get("state_mb")]
        table.append(cells)
    title = (
        f"Scaling: B2's shape (100 Mbps dumbbell, {rows[0]['duration_s']:g} s) with N flows; "
        f"fairstream build + run, median (min–max) of {repeat}"
        if rows
        else "Scaling"
    )
    legend = (
        "events/s: over build + run; run's events/s: over the run alone (the build left out); "
        "÷ first: the first row's run's events/s over this row's (1 is flat); kB per flow: what the "
        "run added beyond the first row's, per flow added"
    )
    return "\n".join([_header(meta), title, format_table(headers, table), legend, *_footer([], meta)])


def _round(x: float | None) -> int | None:
    return None if x is None else round(x)


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _header(meta: Mapping[str, Any]) -> str:
    m = meta["machine"]
    idle = meta["idle"]
    load = "unknown" if idle["load"] is None else f"{idle['load']:.2f}"
    lines = [f"machine: {m['cpu']}, {m['cpu_count']} CPUs, {m['platform']}, Python {m['python']}"]
    lines.append(
        f"1-min load before measuring: {load}"
        + ("" if idle["idle"] is None else (" (idle)" if idle["idle"] else " (NOT idle)"))
    )
    ns3 = meta.get("ns3")
    if ns3:
        lines.append(f"ns-3: {ns3['version']}, {ns3['build']}")
    return "\n".join(lines) + "\n"


def _footer(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[str]:
    notes = []
    if meta.get("duration"):
        notes.append(f"(durations shortened to {meta['duration']}: a smoke test, not a measurement)")
    if meta["idle"]["idle"] is False:
        notes.append(
            f"warning: the machine was not idle (1-min load {meta['idle']['load']:.2f} ≥ "
            f"{meta['idle']['threshold']:g}); the times are unreliable"
        )
    if not meta.get("ns3"):
        notes.append(
            f"ns-3 is not installed, so fairstream's figures are shown alone; for the side-by-side "
            f"comparison: {bench_ns3.INSTALL_HINT}"
        )
    elif meta.get("ns3_skipped"):
        notes.append(
            "ns-3 was not run (--scaling-ns3 adds it)"
            if meta.get("scaling")
            else "ns-3 was not run (--no-ns3)"
        )
    for r in rows:
        if r.get("ns3") and not (r["fairstream"]["repeatable"] and r["ns3"]["repeatable"]):
            notes.append(
                f"note: {r['benchmark']}: results differed between rounds; the first round is compared"
            )
    return ["", *notes] if notes else []
