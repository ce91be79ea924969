"""The eight evaluators by dimension, and one case scored on all of them.

Each evaluator is a pure function `(case, run) -> Score | None`; None means the dimension
does not apply to the case (docs/evals.md, "Dimensions").
"""

from __future__ import annotations

from collections.abc import Callable

from opsgraph.evals.actions import interrupts, preview, tool_choice
from opsgraph.evals.answers import groundedness, pii
from opsgraph.evals.cases import Case
from opsgraph.evals.records import RunRecord
from opsgraph.evals.scores import DIMENSIONS, Score
from opsgraph.evals.structure import dependencies, plan_valid, routing

Evaluator = Callable[[Case, RunRecord], Score | None]

EVALUATORS: dict[str, Evaluator] = {
    "plan_valid": plan_valid,
    "routing": routing,
    "dependencies": dependencies,
    "tool_choice": tool_choice,
    "interrupts": interrupts,
    "preview": preview,
    "groundedness": groundedness,
    "pii": pii,
}
assert tuple(EVALUATORS) == DIMENSIONS


def score_case(case: Case, run: RunRecord) -> dict[str, Score]:
    """The case's score on every dimension that applies to it."""
    scores: dict[str, Score] = {}
    for name, evaluate in EVALUATORS.items():
        try:
            score = evaluate(case, run)
        except Exception as exc:  # an odd run must not stop the suite; it fails the case
            score = Score(False, f"the evaluator failed: {type(exc).__name__}: {exc}")
        if score is not None:
            scores[name] = score
    return scores
