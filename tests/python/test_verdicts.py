"""The verdict rule (`fairstream.verdicts`): a check's verdict from its canonical run and phase
replicas, an experiment's from its checks, the exit code from the experiments'."""

from __future__ import annotations

import pytest
from fairstream.cli import build_parser
from fairstream.verdicts import (
    FAIL,
    PASS,
    REPORTED,
    RULE,
    SENSITIVE,
    check_verdict,
    counts,
    exit_code,
    experiment_verdict,
    needed,
)


@pytest.mark.parametrize(
    ("canonical", "replicas", "word"),
    [
        (True, [True] * 4, PASS),
        (True, [True, True, True, False], PASS),  # 3 of 4 agree
        (True, [True, True, False, False], SENSITIVE),
        (True, [False] * 4, SENSITIVE),  # the canonical run alone passes
        (False, [True] * 4, SENSITIVE),  # the canonical run alone fails
        (False, [False, False, False, True], FAIL),
        (False, [False] * 4, FAIL),
        (True, [], PASS),  # no replicas: the canonical run decides
        (False, [], FAIL),
        (True, [True], PASS),  # quick mode: one replica must agree
        (True, [False], SENSITIVE),
        (True, [True] * 6 + [False] * 2, PASS),  # 6 of 8
        (True, [True] * 5 + [False] * 3, SENSITIVE),
        (True, [True, None, True, True], PASS),  # a replica that only reports is left out
        (None, [True, False], REPORTED),
    ],
)
def test_check_verdict(canonical: bool | None, replicas: list[bool | None], word: str) -> None:
    assert check_verdict(canonical, replicas) == word


def test_three_quarters_of_the_replicas() -> None:
    assert [needed(n) for n in range(9)] == [0, 1, 2, 3, 3, 4, 5, 6, 6]


def test_experiment_verdict_and_counts() -> None:
    ok = {"rule": PASS, "passed": True}
    split = {"rule": SENSITIVE, "passed": False}
    bad = {"rule": FAIL, "passed": False}
    report = {"rule": REPORTED, "passed": None}
    self_ok = {"rule": PASS, "passed": True, "self_check": True}
    self_bad = {"rule": FAIL, "passed": False, "self_check": True}
    assert experiment_verdict([ok, report, self_ok]) == PASS
    assert experiment_verdict([ok, split]) == SENSITIVE
    assert experiment_verdict([ok, split, bad]) == FAIL
    assert experiment_verdict([report]) == REPORTED
    assert experiment_verdict([self_ok]) == REPORTED  # a self-check alone judges no experiment
    assert experiment_verdict([ok, self_bad]) == FAIL  # the tool is broken
    assert counts([ok, split, bad, report, self_ok, self_bad]) == {
        PASS: 1,
        FAIL: 1,
        SENSITIVE: 1,
        REPORTED: 1,
        "self_checks": 2,
        "self_checks_passed": 1,
    }
    assert exit_code([PASS, SENSITIVE, REPORTED]) == 0
    assert exit_code([PASS, FAIL]) == 1


def test_the_rule_is_in_the_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    help_text = sub.choices["reproduce"].format_help()
    assert " ".join(RULE.split()) in " ".join(help_text.split())
