"""The simulator-against-the-kernel machinery of the emulated experiments (`KernelTwins`), without
the emulator: the grid of `linux-preset-vs-linux` and its twins' keys, rows computed from runs, and
the issue's tolerances judged (a simulated run stands in for the emulated one, so that every case
agrees exactly; a row moved beyond a tolerance fails)."""

from __future__ import annotations

import pytest
from fairstream import run
from fairstream.reproduce import EXPERIMENTS
from fairstream.reproduce.emulated import BBR, CUBIC, bdp_packets, twin_rows

EXP = EXPERIMENTS["linux-preset-vs-linux"]


def test_the_grid_is_the_issues_and_each_emulation_holds_one_rtt() -> None:
    points = EXP.points(quick=False)
    assert [p.key for p in points] == [f"rtt{r}-{k}" for r in (20, 50, 100) for k in ("linux", "sim")]
    for p in points:
        assert p.params["emulate"] == (p.params["kind"] == "linux")
        assert len(p.params["cases"]) == 2 * 3 * 2  # cubic and bbr × buffers × 1 and 4 flows
        assert len(p.scenario["flow"]) == 2 * 3 * (1 + 4)
    rtt100 = points[4].scenario
    queues = {
        lk["from"].rsplit("_", 1)[0]: lk["queue"]["limit"]
        for lk in rtt100["topology"]["link"]
        if lk.get("from", "").endswith("_ra")
    }
    assert queues["cubic-rtt100-b0.5-n1"] == f"{round(0.5 * bdp_packets(100))} packets"
    assert queues["bbr-rtt100-b2-n4"] == f"{round(2 * bdp_packets(100))} packets"
    flows = {p.params["kind"]: {f["name"]: f for f in p.scenario["flow"]} for p in points[4:]}
    assert set(flows["linux"]) == set(flows["sim"]) and "bbr-rtt100-b1-n4.tcp3" in flows["linux"]
    for name, f in flows["linux"].items():
        twin = BBR if name.startswith("bbr-") else CUBIC
        assert {k: f[k] for k in twin.linux} == twin.linux
        assert {k: flows["sim"][name][k] for k in twin.sim} == twin.sim
    assert flows["linux"]["cubic-rtt100-b1-n1.tcp0"]["sack"] is True
    assert flows["sim"]["bbr-rtt100-b1-n1.tcp0"]["control"] == "bbr"


@pytest.fixture(scope="module")
def agreeing_rows() -> list[dict]:
    # The quick form's simulated point run twice: as itself and in the emulated point's place.
    linux, sim = EXP.points(quick=True)
    result = run(sim.scenario, cache=False)
    return twin_rows([(linux, result), (sim, result)], EXP.quick_warmup_s)


def test_rows_of_identical_runs_agree_and_the_full_checks_pass(agreeing_rows: list[dict]) -> None:
    rows = agreeing_rows
    assert [(r["protocol"], r["flows"]) for r in rows] == [("cubic", 1), ("cubic", 4), ("bbr", 1), ("bbr", 4)]
    for r in rows:
        assert r["ratio"] == 1 and r["emulated_jain"] == r["simulated_jain"]
        assert 0 < r["simulated_retransmit_rate"] == r["emulated_retransmit_rate"] < 0.5
        assert 0 < r["simulated_mbps"] <= 10
    checks, _ = EXP.judge(rows, quick=False)
    judged = [c for c in checks if c.passed is not None]
    assert len(judged) == 4 and all(c.passed for c in judged)
    quick_checks, _ = EXP.judge(rows, quick=True)
    assert all(c.passed is None for c in quick_checks)


def test_a_case_beyond_a_tolerance_fails_and_is_named(agreeing_rows: list[dict]) -> None:
    rows = [dict(r) for r in agreeing_rows]
    rows[2]["ratio"] = 1.11  # bbr, one flow
    rows[1]["emulated_jain"] = rows[1]["simulated_jain"] - 0.06  # cubic, four flows
    checks, notes = EXP.judge(rows, quick=False)
    failed = {c.description for c in checks if c.passed is False}
    assert failed == {
        "bbr: per-flow throughput within ±10 % of Linux's in every case",
        "cubic: Jain's index within 0.05 of Linux's in every case of 4 flows",
    }
    assert any("bbr-rtt50-b1-n1 (1.11×" in n for n in notes)
    assert any(n.startswith("Cases whose Jain's index") and "cubic-rtt50-b1-n4 (" in n for n in notes)


def test_sim_vs_linux_keeps_its_cases_on_the_shared_machinery() -> None:
    exp = EXPERIMENTS["sim-vs-linux"]
    points = exp.points(quick=False)
    assert len(points) == 2 * 5  # three RTTs, loss, rate; each emulated and simulated
    tcp = [t for p in points if p.params["group"] != "rate" for t in p.params["twins"]]
    assert set(tcp) == {"tcp"} and len(tcp) == 2 * (3 * 6 + 3)
    rate = next(p for p in points if p.key == "rate-linux")
    assert rate.params["twins"] == ["tfrc", "tfrc", "vtp", "vtp"]
