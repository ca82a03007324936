"""The registry of reproducible experiments, keyed by id; each paper's module adds its own.

``fairstream reproduce [ID...]`` runs them (see `runner`), ``fairstream report DIR`` shows them.
"""

from __future__ import annotations

from . import (
    abr,
    binomial,
    emulated,
    engine_checks,
    fair_queue,
    paper000,
    paper001,
    paper002,
    paper003,
    paper004,
    rate_control_validation,
    todays_tcp,
    validation,
)
from .experiment import Check, Evaluation, Experiment, Figure, Point, Published

EXPERIMENTS: dict[str, Experiment] = {
    e.id: e
    for e in (
        *paper003.EXPERIMENTS,
        *abr.EXPERIMENTS,
        *fair_queue.EXPERIMENTS,
        *validation.EXPERIMENTS,
        *engine_checks.EXPERIMENTS,
        *binomial.EXPERIMENTS,
        *todays_tcp.EXPERIMENTS,
        *paper004.EXPERIMENTS,
        *paper002.EXPERIMENTS,
        *rate_control_validation.EXPERIMENTS,
        *paper001.EXPERIMENTS,
        *paper000.EXPERIMENTS,
        *emulated.EXPERIMENTS,
    )
}

__all__ = ["EXPERIMENTS", "Check", "Evaluation", "Experiment", "Figure", "Point", "Published", "get", "ids"]


def ids() -> list[str]:
    """Every experiment id, in registry order."""
    return list(EXPERIMENTS)


def get(exp_id: str) -> Experiment:
    """The experiment called `exp_id` (KeyError listing the known ids otherwise)."""
    try:
        return EXPERIMENTS[exp_id]
    except KeyError:
        raise KeyError(f"no experiment {exp_id!r}; known: {', '.join(EXPERIMENTS)}") from None
