"""All eight evaluators on one case: which apply, and an evaluator's own crash."""

from __future__ import annotations

import pytest

from opsgraph.evals.cases import Case
from opsgraph.evals.evaluators import EVALUATORS, score_case
from opsgraph.evals.records import RunRecord
from opsgraph.evals.scores import DIMENSIONS, Score
from tests.evals.builders import PHONE_CARD, make_case, make_run, task


def test_only_the_dimensions_a_case_asks_for_are_scored() -> None:
    assert list(EVALUATORS) == list(DIMENSIONS)
    bare = score_case(make_case(), make_run(plan=[task("t1", "members", "update")],
                                            cards=[PHONE_CARD]))
    assert list(bare) == ["plan_valid", "preview", "pii"]
    full = make_case(tasks=[{"domain": "members", "verb": "update"}], depends=[],
                     tools_contains=["members_update"], interrupts=[], answer_contains=["x"])
    assert list(score_case(full, make_run(plan=[]))) == [
        "plan_valid", "routing", "dependencies", "tool_choice", "interrupts", "groundedness",
        "pii"]


def test_an_evaluator_that_crashes_fails_its_dimension_not_the_suite(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(case: Case, run: RunRecord) -> Score | None:
        raise KeyError("surprise")

    monkeypatch.setitem(EVALUATORS, "routing", broken)
    scores = score_case(make_case(), make_run(plan=[]))
    assert scores["routing"] == Score(False, "the evaluator failed: KeyError: 'surprise'")
    assert scores["plan_valid"].passed
