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

#: Checks whose verdict by the rule (quick mode: the canonical run and one replica, which must
#: agree) is not "pass", each for a reason the report explains, with that verdict; the test
#: insists on it, so that a change which moves one is noticed (and this list, the README and
#: docs/VALIDATION.md updated). Every other judged check must pass (or only report).
KNOWN_FAILURES: dict[tuple[str, str], str] = {
    # Papers 002 and 004 in their quick (shortened) form: VTP's friendliness to TCP and its pair's
    # fairness and efficiency at PER 5 %, TFRC-W's pair and friendliness at PER 1-5 %, and cmp-solo's
    # VTP-TFRC-W margin at PER 5 % hang on phase here: the canonical run and the replica disagree.
    # (Since issue 20: the friendliness denominator is the same TCP flow, TFRC, TFRC-W and MULTFRC run
    # ns-2's agent, and MULTFRC judges n only on settled periods; its shape checks now pass.)
    ("cmp-fair", "VTP, PER 5 %: Jain's index ≥ 0.95"): "phase-sensitive",
    ("cmp-fair", "TFRC-W, PER 5 %: Jain's index ≥ 0.95"): "phase-sensitive",
    ("cmp-friendly", "PER 1 %: TCP beside VTP ≥ 95 % of TCP beside TCP"): "phase-sensitive",
    ("cmp-friendly", "PER 1 %: TCP beside TFRC-W ≥ 95 % of TCP beside TCP"): "phase-sensitive",
    ("cmp-friendly", "PER 5 %: TCP beside VTP ≥ 95 % of TCP beside TCP"): "phase-sensitive",
    ("cmp-solo", "utilisation ranking at PER 5 %: VTP ≥ TFRC-W"): "phase-sensitive",
    ("vtp-fair", "PER 5 %: Jain's index ≥ 0.95 over the run"): "phase-sensitive",
    ("vtp-fair", "PER 5 %: link utilisation ≥ 85 %"): "phase-sensitive",
    ("vtp-friendly", "PER 1 %: TCP's throughput beside VTP ≥ 95 % of its throughput beside TCP"): (
        "phase-sensitive"
    ),
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
    judged = [c for c in res["checks"] if not c["self_check"]]
    assert res["checks"] and res["total"] == sum(c["passed"] is not None for c in judged)
    assert all(c["passed"] for c in res["checks"] if c["self_check"]), "a self-check failed: a bug"
    # Every check's verdict by the rule is pass or reported, but for the known ones, each exactly
    # as listed (a known one that now passes, or fails where it was phase-sensitive, is noticed).
    got = {c["description"]: c["rule"] for c in judged}
    wrong = {
        d: (w, KNOWN_FAILURES.get((exp_id, d), "pass or reported"))
        for d, w in got.items()
        if w != KNOWN_FAILURES.get((exp_id, d), w if w in ("pass", "reported") else "pass or reported")
    }
    assert not wrong, json.dumps({"verdicts (got, expected)": wrong, "points": res["points"]}, indent=1)
    missing = [d for e, d in KNOWN_FAILURES if e == exp_id and d not in got]
    assert not missing, f"known failures no longer checked; update KNOWN_FAILURES and the docs: {missing}"
    assert res["published"] and res["comparison"] and res["points"]
    for run_dir in res["runs"].values():
        assert RunResult(reproduced / exp_id / run_dir).summary["complete"] is True


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


def test_the_reproductions_sections_are_the_pages_own(
    reproduced: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each evaluated experiment's section is rendered where it is evaluated (a worker) and
    stitched into the page: the same page as `fairstream report` renders whole."""
    from fairstream import report

    generated = re.compile(r'^<p class="meta">Generated .*$', re.M)
    whole = generated.sub("", report.write_report(reproduced).read_text(encoding="utf-8"))
    rendered = []
    real = report.section_html
    monkeypatch.setattr(report, "section_html", lambda r, out: rendered.append(r["id"]) or real(r, out))
    stitched = generated.sub("", report.write_report(reproduced, rendered_sections=True).read_text("utf-8"))
    assert stitched == whole
    evaluated = [i for i in IDS if not result(reproduced, i).get("skipped")]
    assert evaluated and all((reproduced / i / report.SECTION_FILE).is_file() for i in evaluated)
    assert sorted(rendered) == sorted(set(IDS) - set(evaluated))  # only the skipped, here


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


def register_fake(
    cls: type[SeedParity], exp_id: str, title: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Registers an experiment of class `cls` on the tiny CBR scenario, for this test only."""
    path = tmp_path / f"{exp_id}.toml"
    path.write_text(_FAKE_SCENARIO, encoding="utf-8")
    exp = cls(
        id=exp_id,
        title=title,
        paper="test",
        figure="—",
        scenario_file=str(path),
        what_runs="one CBR flow, 200 ms",
        must_hold="see the checks",
        explanation="test",
        published=(),
    )
    monkeypatch.setitem(EXPERIMENTS, exp.id, exp)
    return exp.id


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return register_fake(SeedParity, "phase-fake", "a verdict that hangs on the seed", tmp_path, monkeypatch)


def test_replicas_that_disagree_are_flagged_phase_sensitive(fake: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", fake, "-o", str(out), "--replicas", "3", "--quiet", "--jobs", "1"]) == 0
    res = result(out, fake)
    parity, ran, reported = res["checks"]
    assert parity["passed"] is True and parity["phase_sensitive"] is True
    assert parity["rule"] == "phase-sensitive" and parity["split"] is True  # 1 of 3 replicas agree
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
    assert ran["phase_sensitive"] is False and ran["replicas"]["passed"] == 3 and ran["rule"] == "pass"
    assert reported["verdict"] == "reported" and reported["phase_sensitive"] is False
    assert reported["replicas"]["reported"] == 3
    assert (res["passed"], res["total"], res["reported"], res["phase_sensitive"]) == (2, 2, 1, 1)
    assert res["verdict"] == "phase-sensitive"
    assert res["verdicts"] == {
        "pass": 1,
        "fail": 0,
        "phase-sensitive": 1,
        "reported": 1,
        "self_checks": 0,
        "self_checks_passed": 0,
    }
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
    assert res["runs"] == {"run": "data/run"} and RunResult(out / fake / "data" / "run").summary["seed"] == 1
    with pytest.raises(FileNotFoundError):
        RunResult(out / fake / "data" / "r1" / "run")  # no replica ran
    assert all(c["replicas"]["count"] == 0 and not c["phase_sensitive"] for c in res["checks"])
    assert "No phase replicas ran" in (out / "report.html").read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["reproduce", fake, "-o", str(out), "--replicas", "-1"])


@dataclass(frozen=True)
class CanonicalAlone(SeedParity):
    """Check 1 passes in the canonical run only; check 2 fails in it only; check 3 fails in every
    run; a self-check passes."""

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        ((_, run),) = runs
        seed = run.summary["seed"]
        checks = [
            Check("seed below 1000", float(seed), "< 1000", seed < REPLICA_SEED_STEP),
            Check("seed above 1000", float(seed), "> 1000", seed > REPLICA_SEED_STEP),
            Check("seed negative", float(seed), "< 0", seed < 0),
            Check("one is one", 1, 1, True, self_check=True),
        ]
        return Evaluation([{"seed": seed}], [{"quantity": "seed", "ours": seed, "published": "any"}], checks)


@pytest.fixture
def canonical_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return register_fake(
        CanonicalAlone, "phase-alone", "the canonical run against its replicas", tmp_path, monkeypatch
    )


def test_the_exit_code_follows_the_verdict_rule_not_the_canonical_run(
    canonical_alone: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    # Canonical alone: the first check passes and the second fails, each beside 4 replicas that say
    # the opposite: both phase-sensitive; the third fails everywhere: the experiment fails.
    assert (
        main(["reproduce", canonical_alone, "-o", str(out), "--replicas", "4", "--quiet", "--jobs", "1"]) == 1
    )
    res = result(out, canonical_alone)
    below, above, negative, selfcheck = res["checks"]
    assert (below["passed"], below["rule"]) == (True, "phase-sensitive")
    assert (above["passed"], above["rule"]) == (False, "phase-sensitive")
    assert negative["rule"] == "fail" and res["verdict"] == "fail"
    assert selfcheck["self_check"] is True and (res["passed"], res["total"]) == (1, 3)
    assert res["verdicts"]["self_checks"] == res["verdicts"]["self_checks_passed"] == 1
    printed = capsys.readouterr().out
    assert "Verdict rule:" in printed and "phase-alone" in printed
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "self-check: pass" in html and "Verdict rule:" in html
