"""Our TFRC with its ``ns2`` preset beside ns-2.35's agent: the four configurations of
``validation/ns2/`` run in fairstream and are compared with the ns-2 numbers stored in
``validation/ns2/results.json`` (ns-2 itself is not needed; ``validation/ns2/run.py`` remakes
them where Debian's ``ns2`` package is installed). Mean rates must agree within ±15 % and the
loss event rate within ±20 %, over the same [20 s, 300 s] window (docs/VALIDATION.md).

And RAP beside TCP NewReno against ns-2.35's ``Agent/RAP`` (``validation/ns2/rap-tcp.tcl``, its
numbers in ``rap-results.json``, remade by ``validation/ns2/rap.py``), without and with fine-grain
adaptation: over seeds 1-3, the mean rates within ±10 % and the mean loss fractions within
±25 %."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from fairstream import run, tomlio

ROOT = Path(__file__).resolve().parents[2]
NS2 = ROOT / "validation" / "ns2"
RATE_TOLERANCE = 0.15
P_TOLERANCE = 0.20


def _ns2(scenario: str) -> dict[str, float]:
    results = json.loads((NS2 / "results.json").read_text(encoding="utf-8"))
    return {k: v["mean"] for k, v in results["scenarios"][scenario]["summary"].items() if isinstance(v, dict)}


def _ours(scenario: str) -> dict[str, float]:
    result = run(NS2 / "fairstream" / f"{scenario}.toml")
    start, end = 20.0, result.summary["duration_s"]
    series = result.flow_series.filter(pl.col("t_start") >= start)
    out = {}
    for flow in ("tfrc", "tcp"):
        rows = series.filter(pl.col("flow") == flow)
        if rows.height:
            out[f"{flow}_delivered_wire_bps"] = float(rows["bytes_delivered"].sum()) * 8 / (end - start)
    p = result.metrics.filter((pl.col("flow") == "tfrc") & (pl.col("metric") == "p") & (pl.col("t") >= start))
    out["tfrc_p_report_mean"] = float(p["value"].mean())
    return out


@pytest.mark.parametrize(
    "scenario", ["tfrc-loss-1pct", "tfrc-loss-5pct", "tfrc-loss-10pct", "tfrc-tcp-droptail", "tfrc-tcp-red"]
)
def test_tfrc_ns2_preset_agrees_with_ns2(scenario: str) -> None:
    theirs, ours = _ns2(scenario), _ours(scenario)
    for key in ("tfrc_delivered_wire_bps", "tcp_delivered_wire_bps"):
        if key in ours:
            ratio = ours[key] / theirs[key]
            assert abs(ratio - 1) <= RATE_TOLERANCE, f"{key}: ours {ours[key]:.0f}, ns-2 {theirs[key]:.0f}"
    ratio = ours["tfrc_p_report_mean"] / theirs["tfrc_p_report_mean"]
    assert abs(ratio - 1) <= P_TOLERANCE, (
        f"p: ours {ours['tfrc_p_report_mean']:.5f}, ns-2 {theirs['tfrc_p_report_mean']:.5f}"
    )


@pytest.mark.parametrize(
    ("config", "fine_grain", "share_range"),
    [("plain", False, (0.65, 0.85)), ("fine_grain", True, (0.45, 0.6))],
)
def test_rap_beside_tcp_agrees_with_ns2s_rap(
    config: str, fine_grain: bool, share_range: tuple[float, float]
) -> None:
    theirs = json.loads((NS2 / "rap-results.json").read_text(encoding="utf-8"))["configs"][config]
    scenario = tomlio.loads((NS2 / "fairstream" / "rap-tcp.toml").read_text(encoding="utf-8"))
    scenario["flow"][0]["fine_grain"] = fine_grain
    ours: dict[str, list[float]] = {}
    for seed in [r["seed"] for r in theirs["runs"]]:
        result = run(scenario, seed=seed)
        duration = result.summary["duration_s"]
        for f in result.summary["flows"]:
            # As ns-2's: what left the bottleneck (here: arrived) over the whole run.
            ours.setdefault(f"{f['name']}_bps", []).append(f["bytes_delivered"] * 8 / duration)
            ours.setdefault(f"{f['name']}_loss", []).append(f["loss_rate"])
    for key, tolerance in (("rap_bps", 0.10), ("tcp_bps", 0.10), ("rap_loss", 0.25), ("tcp_loss", 0.25)):
        mine = sum(ours[key]) / len(ours[key])
        ratio = mine / theirs["mean"][key]
        assert abs(ratio - 1) <= tolerance, f"{key}: ours {mine:.4g}, ns-2 {theirs['mean'][key]:.4g}"
    # Plain RAP takes about three quarters of the link; fine-grain adaptation, which slows it as
    # the queue builds, about half.
    share = sum(ours["rap_bps"]) / (sum(ours["rap_bps"]) + sum(ours["tcp_bps"]))
    assert share_range[0] < share < share_range[1], share
