"""`fairstream reproduce --quick` of every registered experiment (paper 003 and the TCP validation)
meets every check, and the report links figures that exist."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fairstream.cli import main
from fairstream.reproduce import EXPERIMENTS

IDS = list(EXPERIMENTS)


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
    assert res["id"] == exp_id and res["quick"] is True
    assert res["total"] >= 1
    failed = [c for c in res["checks"] if not c["passed"]]
    assert not failed, json.dumps({"failed": failed, "points": res["points"]}, indent=1)
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
