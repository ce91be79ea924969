"""Budgets, the fallback to the built-in harness, the run record and the built-in's events."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.engine.runner import stream_run
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import finished, of, person
from tests.harness.records import recent_runs
from tests.harness.test_run_steps import (
    EMILY,
    LLM,
    LOOKUP_EMILY,
    answer,
    calls,
    harness,
    run,
    step,
    steps_ran,
)

pytestmark = pytest.mark.usefixtures("demo_db")


def scope() -> TenantScope:
    return TenantScope.of(person())


def test_a_run_past_its_step_budget_ends_with_budget_exceeded() -> None:
    loop = harness(step("a", "set", values={"x": "1"}), step("b", "set", values={"y": "2"}),
                   step("c", "answer", text="done"), budget={"steps": 2})
    events = run(loop, "hello", version=7)
    [error] = of(events, "error")
    assert error == {"code": "budget_exceeded",
                     "message": "harness version 7: 3 steps, over its budget of 2"}
    assert finished(events)["status"] == "failed" and not of(events, "answer")
    assert steps_ran(events) == ["a", "b"]
    assert answer(run(loop.model_copy(update={"budget": loop.budget.model_copy(
        update={"steps": 3})}), "hello"))["text"] == "done"  # at the budget is within it


def test_a_run_past_its_model_call_budget_ends_before_the_call(script: Any) -> None:
    twice = harness(*[s.model_dump(by_alias=True, exclude_none=True) for s in LLM.steps[:1]],
                    step("again", "llm", prompt="@classify", output_schema={"type": "object"},
                         save_as="d"),
                    step("done", "answer", text="{{c.topic}}"),
                    prompts=LLM.prompts, budget={"model_calls": 1})
    model = script({"harness": {"classify": '{"topic": "billing"}', "again": "{}"}})
    events = run(twice, "my invoice", model, version=3)
    assert of(events, "error")[0] == {
        "code": "budget_exceeded", "message": "harness version 3: 2 model calls, over its "
                                              "budget of 1"}
    assert calls(events) == 1 and finished(events)["status"] == "failed"


def test_a_failing_step_falls_back_to_the_built_in_with_a_warning(script: Any) -> None:
    broken = harness(step("guard", "guard", rules=[{"patterns": ["(unclosed"], "action": "block",
                                                    "text": "never"}]),
                     step("reply", "answer", text="never either"))
    events = run(broken, "What is Emily Chen's membership?", script(LOOKUP_EMILY), version=4)
    data = answer(events)
    assert data["text"] == "Emily Chen is a junior member."
    assert data["warning"] == ("harness version 4 failed at step guard; the built-in harness "
                               "answered instead")
    assert steps_ran(events) == ["guard", "main"]
    assert finished(events)["status"] == "completed"
    [record] = recent_runs(scope(), limit=1)
    assert record["harness"]["version"] == 4
    assert record["harness"]["fallback"]["step"] == "guard"
    assert "missing )" in record["harness"]["fallback"]["error"]  # RE2's words


def test_an_llm_step_failing_twice_falls_back(script: Any) -> None:
    model = script({**LOOKUP_EMILY, "harness": {"classify": ["no", '{"topic": 5}']}})
    events = run(LLM, "What is Emily Chen's membership?", model, version=2)
    assert answer(events)["text"] == "Emily Chen is a junior member."
    assert "harness version 2 failed at step classify" in answer(events)["warning"]


def test_a_gate_refusal_is_not_a_fallback() -> None:
    doc = harness(step("m", "tool", operation="reports.revenue", args={}, save_as="r"),
                  step("reply", "answer", text="{{r.error.code | default:\"ok\"}}"))
    events = run(doc, "revenue", role="member", user=EMILY)
    assert answer(events) == {"text": "forbidden", "sources": []}


def slowed(stage: str) -> dict[str, Any]:
    """LOOKUP_EMILY with one call of `stage` taking 60 s (the longest delay a file may ask)."""
    turns = LOOKUP_EMILY["turns"]["t1"]
    return {**LOOKUP_EMILY, **{
        "task": {"turns": {"t1": [{**turns[0], "delay_ms": 60_000}, *turns[1:]]}},
        "plan": {"plan_delay_ms": 60_000},
        "synthesis": {"synthesis_delay_ms": 60_000}}[stage]}


@pytest.mark.timeout(50)  # the scripted call takes 60 s: only the deadline ends it sooner
def test_a_budget_of_seconds_bounds_a_model_call_in_flight(script: Any) -> None:
    # issue 18, finding 7: a 1 s budget and a 20 s model call passed in 21 s. The budget
    # leaves the plan ample time even on a loaded machine; the agent's call overruns it.
    hurried = harness(step("main", "supervisor"), budget={"seconds": 10})
    events = run(hurried, "What is Emily Chen's membership?", script(slowed("task")),
                 version=6)
    assert [e.event for e in events] == ["run_started", "progress", "plan", "task_started",
                                         "error", "run_finished"]
    assert of(events, "error") == [{
        "code": "budget_exceeded", "message": "harness version 6: the model call of task t1 "
                                              "was still running at its budget of 10 seconds"}]
    assert finished(events)["status"] == "failed"


@pytest.mark.timeout(50)
@pytest.mark.parametrize("stage", ["plan", "synthesis"])
def test_the_plan_and_the_streamed_synthesis_have_the_deadline_too(script: Any,
                                                                   stage: str) -> None:
    hurried = harness(step("main", "supervisor"), budget={"seconds": 1})
    events = run(hurried, "What is Emily Chen's membership?", script(slowed(stage)),
                 version=6)
    [error] = of(events, "error")
    assert error["code"] == "budget_exceeded" and "harness version 6" in error["message"]
    assert finished(events)["status"] == "failed" and not of(events, "answer")


def test_the_run_record_lists_steps_version_calls_and_sources(script: Any) -> None:
    from tests.harness.test_run_steps import CLUB

    events = run(CLUB, "Emily Chen has an injury: her membership status?",
                 script(LOOKUP_EMILY), version=5)
    [record] = recent_runs(scope(), limit=1)
    assert record["run_id"] == of(events, "run_started")[0]["run_id"]
    assert record["steps_ran"] == ["guard", "main", "risky", "careful"]
    assert record["harness"]["version"] == 5 and record["harness"]["fallback"] is None
    assert len(record["harness"]["registry_version"]) == 64
    # one agent turn and the synthesis: a single lookup is planned by code, no planner call
    assert record["model_calls"] == calls(events) == 2
    assert [s["id"] for s in record["sources"]] == [EMILY]
    assert record["status"] == "completed" and record["request"].startswith("Emily Chen")


def test_the_built_in_harness_runs_the_supervisor_as_before(script: Any) -> None:
    events = list(stream_run(person(), "What is Emily Chen's membership?",
                             model=script(LOOKUP_EMILY)))
    names = [e.event for e in events]
    # the supervisor's events, no harness step of its own in the stream
    assert names == ["run_started", "plan", "task_started", "task_finished", "token",
                     "answer", "run_finished"]
    assert answer(events)["text"] == "Emily Chen is a junior member."
    [record] = recent_runs(scope(), limit=1)
    assert record["steps_ran"] == ["main"] and record["harness"]["version"] == 0
