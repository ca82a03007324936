"""The verdict rule: one verdict per judged check from its canonical run and its phase replicas,
one per experiment from its checks, and the exit code of ``fairstream reproduce`` from those.

A verdict that one run gives may rest on the phase of that run (which flow's packet reaches a
nearly full queue first), not on the experiment, so no single run decides. The rule (`RULE`):

- a judged check **passes** when the canonical run passes and at least three quarters of its phase
  replicas pass (3 of 4, 6 of 8; `AGREEMENT`);
- it **fails** when the canonical run fails and at least three quarters of the replicas fail;
- otherwise the runs split and it is **phase-sensitive**: do not quote its verdict from any one run;
- with no replicas (``--replicas 0``) the canonical run decides alone;
- a check without a threshold is **reported** (never judged); a **self-check** measures no run
  (it checks our own code on made-up data or against a constant) and is counted apart.

An experiment **fails** when a check fails or a self-check fails (then the tool, not the
experiment, is broken); it is **phase-sensitive** when no check fails and one is phase-sensitive;
it **passes** when its judged checks all pass; it only **reports** when it has no judged check.
``fairstream reproduce`` exits 1 when an experiment fails, 0 otherwise: a phase-sensitive check is
shown and counted, not failed.

Kept apart from the runner (`reproduce.runner` calls `check_verdict` per check and
`experiment_verdict` per experiment) so that either can change without the other, and light
(no import beyond the standard library) so that ``fairstream --help`` can print `RULE`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: The share of the phase replicas that must agree with the canonical run for a verdict.
AGREEMENT = 0.75

#: The rule in one paragraph, as ``--help`` and the report print it.
RULE = (
    "Verdict rule: a judged check passes when its canonical run passes and at least 3 of 4 phase "
    "replicas (three quarters of them) pass, fails when the canonical run fails and at least three "
    "quarters of the replicas fail, and is phase-sensitive when the runs split otherwise; with no "
    "replicas the canonical run decides. An experiment fails when a check (or a self-check, which "
    "measures no run) fails, is phase-sensitive when none fails and one is phase-sensitive, and passes "
    "when every judged check passes. The command exits 1 when an experiment fails."
)

#: The words a check's rule verdict takes.
PASS, FAIL, SENSITIVE, REPORTED = "pass", "fail", "phase-sensitive", "reported"


def needed(replicas: int) -> int:
    """How many of `replicas` judged replicas must agree with the canonical run: ⌈¾·n⌉."""
    return math.ceil(AGREEMENT * replicas - 1e-9)


def check_verdict(canonical: bool | None, replicas: Sequence[bool | None]) -> str:
    """The rule's verdict of one check: `canonical` is the canonical run's ``passed`` (None: reported,
    no threshold), `replicas` each judged replica's (a replica's None is left out)."""
    if canonical is None:
        return REPORTED
    judged = [r for r in replicas if r is not None]
    agree = sum(r == canonical for r in judged)
    if agree >= needed(len(judged)):
        return PASS if canonical else FAIL
    return SENSITIVE


def experiment_verdict(checks: Sequence[Mapping[str, Any]]) -> str:
    """An experiment's verdict from its checks' ``rule`` words and ``self_check`` flags: fail,
    phase-sensitive, pass, or reported (no judged check)."""
    words = [c.get("rule") for c in checks if not c.get("self_check")]
    if any(c.get("self_check") and c.get("passed") is False for c in checks) or FAIL in words:
        return FAIL
    if SENSITIVE in words:
        return SENSITIVE
    return PASS if PASS in words else REPORTED


def counts(checks: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many checks the rule passes, fails, finds phase-sensitive, only reports; and the
    self-checks, passed and in all."""
    words = [c.get("rule") for c in checks if not c.get("self_check")]
    selfs = [c for c in checks if c.get("self_check")]
    return {
        PASS: words.count(PASS),
        FAIL: words.count(FAIL),
        SENSITIVE: words.count(SENSITIVE),
        REPORTED: words.count(REPORTED),
        "self_checks": len(selfs),
        "self_checks_passed": sum(c.get("passed") is True for c in selfs),
    }


def exit_code(verdicts: Sequence[str]) -> int:
    """1 when an experiment fails by the rule, else 0."""
    return 1 if FAIL in verdicts else 0
