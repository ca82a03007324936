"""What an experiment is: its metadata, the points it runs, how it turns runs into our numbers,
the published numbers beside them, the "what must hold" checks, the figures it redraws, and how
many phase replicas of it `fairstream reproduce` runs besides the canonical run (see `runner`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import tomlio
from ..results import RunResult
from ..scenario import packaged

#: Phase replicas of an experiment whose checks often split between runs (issue 20): with 8,
#: the verdict rule's three quarters is 6 of 8.
SPLIT_PRONE_REPLICAS = 8


@dataclass(frozen=True)
class Point:
    """One run of an experiment: `key` names its directory under ``<id>/runs/``."""

    key: str
    params: dict[str, Any]
    scenario: dict[str, Any]


@dataclass(frozen=True)
class Check:
    """One "what must hold" line: what it says, our value, the published value, whether it held.

    `passed` is True or False for a check with a threshold, and None for a report-only line
    ("reported, no threshold"): such a line is shown but counted neither as a pass nor as a fail.
    A `self_check` measures no run (our own code on made-up data, or a table against a constant):
    it is shown and counted apart from the reproduction's verdicts (see `verdicts`).
    """

    description: str
    ours: Any
    published: Any
    passed: bool | None
    self_check: bool = field(default=False, kw_only=True)

    @property
    def verdict(self) -> str:
        """``"pass"``, ``"fail"`` or ``"reported"`` (no threshold)."""
        return verdict(self.passed)

    def to_json(self) -> dict[str, Any]:
        """The four fields as before (``passed`` null when report-only) and ``verdict``."""
        return {**asdict(self), "verdict": self.verdict}


def verdict(passed: bool | None) -> str:
    """The verdict word of a check's `passed` value: pass, fail, or reported (None)."""
    if passed is None:
        return "reported"
    return "pass" if passed else "fail"


def experiment_verdict(result: Mapping[str, Any]) -> str:
    """An experiment's verdict: the rule's over its canonical run and phase replicas
    (``result["verdict"]``, see `verdicts`: pass, fail, phase-sensitive or reported); for a
    result.json written before the rule, from its canonical counts: ``"fail"`` when a check with a
    threshold failed, ``"pass"`` when there are such checks and all passed, else ``"reported"``."""
    if "verdict" in result:
        return str(result["verdict"])
    if result["passed"] < result["total"]:
        return "fail"
    return "pass" if result["total"] else "reported"


def source(paper: str, figure: str) -> str:
    """Where an experiment comes from, as the report and ``reproduce --list`` name it: "paper 003,
    Fig. 4", or "validation" for a check of the simulator, which reproduces no paper's figure."""
    words = [] if paper == "validation" else [f"paper {paper}"]
    if figure and figure != "—":
        words.append(figure)
    return ", ".join(words) or "validation"


@dataclass(frozen=True)
class Published:
    """A number (or shape) the paper reports."""

    quantity: str
    value: Any
    source: str


@dataclass
class Evaluation:
    """What an experiment makes of its runs.

    `points`: our numbers, one row per point; `comparison`: rows of quantity / ours / published;
    `checks`: the must-hold lines; `data`: anything else the figures need (JSON-serialisable);
    `notes`: explanations that depend on the results, shown after the experiment's explanation.
    """

    points: list[dict[str, Any]]
    comparison: list[dict[str, Any]]
    checks: list[Check]
    data: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Figure:
    """A figure file written for the report, with its caption."""

    path: Path
    caption: str


@dataclass(frozen=True)
class Experiment(ABC):
    """A reproduction of one experiment of one paper (see EXPERIMENTS.md)."""

    id: str
    title: str
    paper: str
    figure: str
    scenario_file: str
    what_runs: str
    must_hold: str
    explanation: str
    published: tuple[Published, ...]
    emulated: bool = field(default=False, kw_only=True)
    """Some of its points run through the emulator (those whose params say ``emulate``), in real
    time, one at a time after every simulation; where the emulator cannot run, the experiment is
    not run and its result says why."""
    phase_replicas: int = field(default=4, kw_only=True)
    """Phase replicas run besides the canonical run: each runs every point again with its own seed
    and with each link's propagation delay lengthened by a random fraction of a packet time
    (`runner.PHASE_PERTURBATION`), and is judged by the same `evaluate`; the spread of the
    replicas' numbers and verdicts is reported beside the canonical ones. Set 0 on an experiment
    too expensive to repeat (``fairstream reproduce --replicas N`` still overrides it)."""

    def base_scenario(self) -> dict[str, Any]:
        """The canonical scenario file (package data ``scenarios/papers/``) as a dict."""
        return tomlio.loads(self.scenario_path().read_text(encoding="utf-8"))

    def scenario_path(self) -> Path:
        return packaged("papers", self.scenario_file)

    @abstractmethod
    def points(self, quick: bool) -> list[Point]:
        """The runs to make; `quick` shortens them for tests."""

    @abstractmethod
    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        """Our numbers and the checks, from the finished runs of `points(quick)`, in order."""

    @abstractmethod
    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        """Redraws the paper's figures from result.json (and the run directories in `exp_dir`)."""

    def phase_notes(self, canonical: Evaluation, replicas: Sequence[Evaluation]) -> list[str]:
        """Notes on whether the experiment's conclusions survive the phase replicas, computed from
        the canonical evaluation and the replicas' (only called when at least one replica was
        evaluated); none by default, the per-check spreads speak for themselves."""
        return []


def replica_points(result: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    """The per-point rows of each phase replica in a result.json (empty for results without
    replicas, or written before replicas existed); replicas that failed to evaluate are left out."""
    phase = result.get("phase") or {}
    return [r["points"] for r in phase.get("replicas", []) if r.get("points") is not None]
