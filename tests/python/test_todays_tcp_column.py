"""Beside today's TCP (issue 22): the helper that swaps a point's TCP flows to the linux preset and
reports an evaluation's rows and checks unjudged (`fairstream.reproduce.todays_tcp_column`), and
the friendliness experiments of papers 001, 002 and 004 that use it: their paper points unchanged,
each mirrored by a linux point, and the linux numbers reported beside the paper's TCP's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fairstream import validate
from fairstream.reproduce import EXPERIMENTS
from fairstream.reproduce import todays_tcp_column as todays
from fairstream.reproduce.experiment import Check, Point
from fairstream.reproduce.runner import reproduce

IDS = ["mm-share", "cmp-friendly", "vtp-friendly"]


def _doc() -> dict[str, Any]:
    return {
        "name": "t",
        "flow": [
            {"name": "v", "protocol": "vtp", "from": "a", "to": "b", "packet_size": "1000B"},
            {"name": "t", "from": "a", "to": "b", "start": "1s", "variant": "reno", "window": 20},
        ],
    }


def test_the_swap_keeps_placement_and_the_other_flows() -> None:
    doc = _doc()
    swapped = todays.with_todays_tcp(doc)
    assert swapped["flow"][0] == doc["flow"][0]  # not TCP: untouched
    assert swapped["flow"][1] == {"name": "t", "from": "a", "to": "b", "start": "1s", **todays.TODAYS_TCP}
    assert doc["flow"][1]["variant"] == "reno"  # the original is not modified


def test_the_swap_refuses_a_key_it_would_drop() -> None:
    doc = _doc()
    doc["flow"][1]["packets"] = 100
    with pytest.raises(ValueError, match="flow 't': cannot swap to the linux preset, it sets packets"):
        todays.with_todays_tcp(doc)


def test_points_split_and_report_only_lines() -> None:
    paper = [Point("a", {"per": 0.0}, _doc())]
    linux = todays.todays_points(paper)
    assert [(p.key, p.params) for p in linux] == [("a-linux", {"per": 0.0, "tcp": "linux"})]
    assert [todays.tcp_of(p) for p in paper + linux] == ["paper", "linux"]
    runs = [(linux[0], "L"), (paper[0], "P")]
    assert todays.split(runs) == ([(paper[0], "P")], [(linux[0], "L")])
    assert todays.present({"runs": {"a": "x", "a-linux": "y"}}) and not todays.present({"runs": {"a": "x"}})
    rows = todays.reported_rows([{"quantity": "q", "ours": 1.5, "published": 2.0}])
    assert rows == [{"quantity": f"{todays.LABEL}: q", "ours": 1.5, "published": todays.NOT_PUBLISHED}]
    checks = todays.reported_checks(
        [
            Check("x ≥ 1", 0.5, 1, False),
            Check("y (reported, no threshold)", 2.0, "—", None),
            Check("table", "equal", "Table 2", True, self_check=True),
        ]
    )
    assert [(c.description, c.ours, c.passed) for c in checks] == [
        (f"{todays.LABEL}: x ≥ 1 (reported, not judged)", 0.5, None),
        (f"{todays.LABEL}: y (reported, not judged)", 2.0, None),
    ]


@pytest.mark.parametrize("exp_id", IDS)
@pytest.mark.parametrize("quick", [True, False])
def test_each_paper_point_has_a_linux_twin(exp_id: str, quick: bool) -> None:
    points = EXPERIMENTS[exp_id].points(quick)
    paper = {p.key: p for p in points if todays.tcp_of(p) == todays.PAPERS}
    linux = [p for p in points if todays.tcp_of(p) == todays.TODAYS]
    assert linux
    for point in linux:
        twin = paper[point.key.removesuffix(todays.SUFFIX)]
        assert point.params == {**twin.params, "tcp": "linux"}
        for mine, theirs in zip(point.scenario["flow"], twin.scenario["flow"], strict=True):
            if theirs.get("protocol", "tcp") == "tcp":
                assert mine["preset"] == "linux" and "variant" not in mine and mine["name"] == theirs["name"]
            else:
                assert mine == theirs
        assert {k: v for k, v in point.scenario.items() if k != "flow"} == {
            k: v for k, v in twin.scenario.items() if k != "flow"
        }
        validate(point.scenario)
    # The paper's TCP is never the linux preset in the paper's points.
    assert all(f.get("preset") != "linux" for p in paper.values() for f in p.scenario["flow"])


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("todays-tcp-column")
    reproduce(IDS, out, quick=True, quiet=True, replicas=0)
    return out


@pytest.mark.parametrize("exp_id", IDS)
def test_the_linux_column_is_reported_beside_the_papers(reproduced: Path, exp_id: str) -> None:
    res = json.loads((reproduced / exp_id / "result.json").read_text(encoding="utf-8"))
    ours = [c for c in res["checks"] if c["description"].startswith(todays.LABEL)]
    paper = [
        c for c in res["checks"] if not c["description"].startswith(todays.LABEL) and not c["self_check"]
    ]
    assert ours and all(c["verdict"] == "reported" and c["published"] == todays.NOT_PUBLISHED for c in ours)
    assert all(c["passed"] is not None or "reported" in c["description"] for c in paper)
    rows = [r for r in res["comparison"] if r["quantity"].startswith(todays.LABEL)]
    assert rows and all(r["published"] == todays.NOT_PUBLISHED for r in rows)
    assert all(isinstance(r["ours"], float) and r["ours"] > 0 for r in rows)
    assert todays.LABEL in res["explanation"]
    figures = EXPERIMENTS[exp_id].figures(res, reproduced / exp_id, reproduced / "figures")
    assert any("linux preset" in f.caption for f in figures)
