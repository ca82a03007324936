"""`fairstream reproduce --quick` of every registered experiment (paper 003 and the TCP validation)
meets every check, and the report links figures that exist; phase replicas: the spread beside each
check, a check whose verdict differs between replicas marked phase-sensitive, report-only checks,
and ``--replicas 0``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fairstream.cli import main
from fairstream.reproduce import EXPERIMENTS
from fairstream.reproduce.experiment import Check, Evaluation, Experiment, Figure, Point
from fairstream.reproduce.runner import PHASE_PERTURBATION, REPLICA_SEED_STEP, replica_count, replica_point
from fairstream.results import RunResult

IDS = list(EXPERIMENTS)

#: Checks that fail, each for a reason the report explains; the test insists they still fail, so
#: that a change which makes one pass is noticed (and this list and the docs updated).
KNOWN_FAILURES = {
    # Drop-tail's bias against TCP's bursts: TCP takes most losses (see binomial.py).
    ("binomial-friendliness", "IIAD, droptail: 0.5× to 2× NewReno's throughput (mean over seeds)"),
    ("binomial-friendliness", "SQRT, droptail: 0.5× to 2× NewReno's throughput (mean over seeds)"),
    # Papers 002 and 004 in their quick (shortened) form. VTP leaves TCP 85-93 % of its share
    # (its hold ends at AR, as PROTOCOLS.md §5.3 reads the paper; `resume = "reduced"` passes
    # these, see docs/VALIDATION.md), TFRC-W's pair and TCP beside it fall just short at PER 0,
    # and MULTFRC's n, updated every RTT, neither settles at 1-2 without loss nor is still growing
    # at the end with 5 % loss. Left failing, not tuned.
    # With the wire's frame header and nonce echo charged (2026-11-26; 8 bytes off every data
    # packet's payload, 20 onto every report) these quick, phase-sensitive TFRC-W checks moved
    # within their phase replicas' spread: PER 0 % beside TCP 0.926 → 0.963 (now passes; replica
    # 0.976 → 0.957), PER 1 % 0.986 → 0.895 and PER 5 % 1.076 → 0.947 beside TCP, and the pair's
    # Jain at PER 5 % 0.981 → 0.736 (replica 0.998 → 0.987), now fail.
    ("cmp-fair", "TFRC-W, PER 0 %: Jain's index ≥ 0.95"),
    ("cmp-fair", "TFRC-W, PER 5 %: Jain's index ≥ 0.95"),
    ("cmp-friendly", "PER 1 %: TCP beside TFRC-W ≥ 95 % of TCP beside TCP"),
    ("cmp-friendly", "PER 5 %: TCP beside TFRC-W ≥ 95 % of TCP beside TCP"),
    ("cmp-friendly", "PER 1 %: TCP beside VTP ≥ 95 % of TCP beside TCP"),
    ("cmp-friendly", "PER 5 %: TCP beside VTP ≥ 95 % of TCP beside TCP"),
    (
        "cmp-multfrc-n",
        "PER 0 %: n oscillates 1 ↔ 2: at 1 or 2 connections ≥ 90 % of the time (our threshold)",
    ),
    ("cmp-multfrc-n", "PER 5 %: n keeps growing through the run (mean over the last 10 % > over 40-50 %)"),
    ("vtp-friendly", "PER 1 %: TCP's throughput beside VTP ≥ 95 % of its throughput beside TCP"),
    ("vtp-friendly", "PER 5 %: TCP's throughput beside VTP ≥ 95 % of its throughput beside TCP"),
    # Paper 000's smoothness: our UDP streams carry their synthetic GOP's I:P:B sizes (a 0.6 s GOP
    # against 0.5 s bins) as released, and come out rougher than TCP's, whose ACK clock spreads the
    # same frames; RealServer paces its UDP packets (see h2h-smooth's notes). Left failing, not tuned.
    ("h2h-smooth", "150 kbps: UDP smoother than TCP: median |log ratio| UDP < TCP; ours: UDP / TCP"),
    ("h2h-smooth", "75 kbps: UDP smoother than TCP: median |log ratio| UDP < TCP; ours: UDP / TCP"),
}


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reproduce")
    code = main(["reproduce", *IDS, "-o", str(out), "--quick", "--quiet", "--jobs", "2"])
    assert code in (0, 1)  # 1 = a check failed; the per-experiment tests say which
    return out


def result(out: Path, exp_id: str) -> dict[str, Any]:
    return json.loads((out / exp_id / "result.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("exp_id", IDS)
def test_experiment_meets_its_checks(reproduced: Path, exp_id: str) -> None:
    res = result(reproduced, exp_id)
    if res.get("skipped"):  # an emulated experiment where the emulator cannot run
        assert EXPERIMENTS[exp_id].emulated and res["checks"] == [] and res["skipped"] in res["explanation"]
        pytest.skip(res["skipped"])
    assert res["id"] == exp_id and res["quick"] is True
    assert res["checks"] and res["total"] == sum(c["passed"] is not None for c in res["checks"])
    failed = [c for c in res["checks"] if c["passed"] is False]
    unexpected = [c for c in failed if (exp_id, c["description"]) not in KNOWN_FAILURES]
    assert not unexpected, json.dumps({"failed": unexpected, "points": res["points"]}, indent=1)
    known = {d for e, d in KNOWN_FAILURES if e == exp_id}
    now_passing = [c["description"] for c in res["checks"] if c["description"] in known and c["passed"]]
    assert not now_passing, f"known failures now pass; update KNOWN_FAILURES and the docs: {now_passing}"
    assert res["published"] and res["comparison"] and res["points"]
    for run_dir in res["runs"].values():
        assert (reproduced / exp_id / run_dir / "summary.json").is_file()


def test_collapse_sweeps_the_udp_load(reproduced: Path) -> None:
    loads = [p["udp_load"] for p in result(reproduced, "collapse")["points"]]
    assert loads[0] == 0 and loads[-1] == 1 and loads == sorted(loads)


def test_report_links_existing_figures(reproduced: Path) -> None:
    assert main(["report", str(reproduced)]) == 0
    html = (reproduced / "report.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img src="([^"]+)"', html)
    assert len(sources) >= len(IDS)
    for src in sources:
        assert not Path(src).is_absolute()
        assert (reproduced / src).is_file(), src
        assert (reproduced / src).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for exp_id in IDS:
        assert f'id="{exp_id}"' in html
    assert "Figures failed" not in html


def test_every_registered_scenario_is_valid() -> None:
    from fairstream import validate

    for exp in EXPERIMENTS.values():
        validate(exp.scenario_path())
        for quick in (True, False):
            for point in exp.points(quick):
                validate(point.scenario)
                validate(replica_point(point, 1).scenario)


@pytest.mark.parametrize("exp_id", IDS)
def test_quick_reproduce_reports_the_phase_spread(reproduced: Path, exp_id: str) -> None:
    res = result(reproduced, exp_id)
    if res.get("skipped"):
        pytest.skip(res["skipped"])
    n = replica_count(EXPERIMENTS[exp_id], quick=True)
    assert n <= 1 and res["phase"]["count"] == n and res["phase"]["perturb_delays"] == PHASE_PERTURBATION
    for check in res["checks"]:
        spread = check["replicas"]
        assert spread["count"] == n and spread["canonical"] == check["ours"]
        assert spread["passed"] + spread["failed"] + spread["reported"] == n
        assert isinstance(check["phase_sensitive"], bool) and check["verdict"] in ("pass", "fail", "reported")
        if isinstance(check["ours"], float) and n:
            assert len(spread["values"]) == n and spread["min"] <= spread["max"]
    for row in res["comparison"]:
        assert set(row["replicas"]) == {"values", "min", "max"}
    assert res["phase_sensitive"] == sum(c["phase_sensitive"] for c in res["checks"])
    for replica in res["phase"]["replicas"]:
        for key, canonical_dir in res["runs"].items():
            run = RunResult(reproduced / exp_id / replica["dir"] / key)
            canonical = RunResult(reproduced / exp_id / canonical_dir)  # points may set their own seed
            assert run.summary["seed"] == canonical.summary["seed"] + replica["replica"] * REPLICA_SEED_STEP
            assert f"perturb_delays = {PHASE_PERTURBATION}" in run.resolved_toml


def test_report_only_check_is_neither_pass_nor_fail(reproduced: Path) -> None:
    res = result(reproduced, "unfair-tcp4")
    assert [c["verdict"] for c in res["checks"]] == ["reported", "reported"]
    assert res["passed"] == res["total"] == 0 and res["reported"] == 2
    assert all(c["passed"] is None and c["phase_sensitive"] is False for c in res["checks"])


# A tiny experiment whose verdict depends on the seed alone: the canonical run (seed 1) and the
# replicas with seeds 2001, 4001, ... pass; 1001, 3001, ... fail.

_FAKE_SCENARIO = """
name = "phase-fake"
duration = "200ms"
seed = 1

[topology]
kind = "chain"
nodes = 2
link = { rate = "1Mbps", delay = "1ms" }

[[flow]]
protocol = "cbr"
from = "n0"
to = "n1"
rate = "100kbps"
"""


@dataclass(frozen=True)
class SeedParity(Experiment):
    """Check 1 passes on even thousands of seed, check 2 always, check 3 only reports."""

    def scenario_path(self) -> Path:
        return Path(self.scenario_file)

    def points(self, quick: bool) -> list[Point]:
        return [Point("run", {}, self.base_scenario())]

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        ((_, run),) = runs
        seed = run.summary["seed"]
        checks = [
            Check("seed in an even thousand", float(seed), "even", (seed // REPLICA_SEED_STEP) % 2 == 0),
            Check("the run ran", run.summary["duration_s"], "yes", True),
            Check("the seed, reported", seed, "no threshold", None),
        ]
        comparison = [{"quantity": "seed", "ours": seed, "published": "any"}]
        return Evaluation([{"seed": seed}], comparison, checks)

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        return []


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "phase-fake.toml"
    path.write_text(_FAKE_SCENARIO, encoding="utf-8")
    exp = SeedParity(
        id="phase-fake",
        title="a verdict that hangs on the seed",
        paper="test",
        figure="—",
        scenario_file=str(path),
        what_runs="one CBR flow, 200 ms",
        must_hold="an even thousand",
        explanation="test",
        published=(),
    )
    monkeypatch.setitem(EXPERIMENTS, exp.id, exp)
    return exp.id


def test_replicas_that_disagree_are_flagged_phase_sensitive(fake: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", fake, "-o", str(out), "--replicas", "3", "--quiet", "--jobs", "1"]) == 0
    res = result(out, fake)
    parity, ran, reported = res["checks"]
    assert parity["passed"] is True and parity["phase_sensitive"] is True
    assert parity["replicas"] == {
        "canonical": 1.0,
        "values": [1001.0, 2001.0, 3001.0],
        "min": 1001.0,
        "max": 3001.0,
        "count": 3,
        "passed": 1,
        "failed": 2,
        "reported": 0,
        "runs": [
            {"replica": 1, "ours": 1001.0, "verdict": "fail"},
            {"replica": 2, "ours": 2001.0, "verdict": "pass"},
            {"replica": 3, "ours": 3001.0, "verdict": "fail"},
        ],
    }
    assert ran["phase_sensitive"] is False and ran["replicas"]["passed"] == 3
    assert reported["verdict"] == "reported" and reported["phase_sensitive"] is False
    assert reported["replicas"]["reported"] == 3
    assert (res["passed"], res["total"], res["reported"], res["phase_sensitive"]) == (2, 2, 1, 1)
    assert res["comparison"][0]["replicas"]["values"] == [1001, 2001, 3001]

    html = (out / "report.html").read_text(encoding="utf-8")
    assert "phase-sensitive: 2 of 3 replicas fail" in html
    assert "stable: 3 of 3 replicas pass" in html
    assert '<td class="reported"' in html and "1001 – 3001" in html
    assert '<td class="num sensitive">1</td>' in html  # the summary table counts it
    assert "replica 1 (seed 1001): FAIL at 1001; replica 2 (seed 2001): pass at 2001" in html


def test_replicas_zero_runs_only_the_canonical_points(fake: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", fake, "-o", str(out), "--replicas", "0", "--quiet", "--jobs", "1"]) == 0
    res = result(out, fake)
    assert res["phase"]["count"] == 0 and res["phase"]["replicas"] == []
    assert not (out / fake / "replicas").exists() and (out / fake / "runs" / "run" / "summary.json").is_file()
    assert all(c["replicas"]["count"] == 0 and not c["phase_sensitive"] for c in res["checks"])
    assert "No phase replicas ran" in (out / "report.html").read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["reproduce", fake, "-o", str(out), "--replicas", "-1"])
