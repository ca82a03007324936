"""What an experiment is: its metadata, the points it runs, how it turns runs into our numbers,
the published numbers beside them, the "what must hold" checks, and the figures it redraws."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import tomlio
from ..results import RunResult
from ..scenario import packaged


@dataclass(frozen=True)
class Point:
    """One run of an experiment: `key` names its directory under ``<id>/runs/``."""

    key: str
    params: dict[str, Any]
    scenario: dict[str, Any]


@dataclass(frozen=True)
class Check:
    """One "what must hold" line: what it says, our value, the published value, whether it held."""

    description: str
    ours: Any
    published: Any
    passed: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


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
