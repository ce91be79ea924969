"""A paused run resumes on the harness version it started with, whatever is active since."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.engine.approval_flow import decide_and_resume
from opsgraph.engine.graph import reset_graph
from opsgraph.engine.thread_log import recent_runs
from opsgraph.harness import versions
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import chat, finished, of, person
from tests.engine.test_approval_resume import update_turns
from tests.engine.test_supervisor import task
from tests.harness.test_run_steps import EMILY, answer, step, steps_ran

pytestmark = pytest.mark.usefixtures("demo_db")

PASSED = {"passed": 0, "failed": 0, "results": []}


def version(scope: TenantScope, label: str) -> int:
    doc = {"steps": [step("main", "supervisor", final=False, save_as="draft"),
                     step("reply", "answer", text=f"{label}: {{{{draft.answer}}}}")]}
    number, _ = versions.save(scope, doc, actor="admin-1")
    versions.activate(scope, number, actor="admin-1", report=PASSED)
    return number


def decide(change_id: str) -> list[Any]:
    return list(decide_and_resume(person("manager", user="sam"), change_id, "approve"))


def test_a_paused_run_resumes_on_its_version_after_another_is_activated(
        script: Any, demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    first = version(scope, "v1")
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone")]},
        "turns": {"t1": [*update_turns("+44 7700 900444"), {"content": "Phone changed."}]},
        "synthesis": "unused: nothing was read",
    })
    paused = chat(person("staff"), "change Emily Chen's phone to +44 7700 900444", model,
                  thread="th-pinned")
    assert finished(paused)["status"] == "awaiting_approval"
    assert steps_ran(paused) == ["main"]
    [card] = of(paused, "approval_required")[0]["changes"]

    second = version(scope, "v2")
    assert versions.active(scope)[0] == second != first
    reset_graph()  # as a new process would: nothing in memory but the checkpoint
    resumed = decide(card["change_id"])
    assert finished(resumed)["status"] == "completed"
    text = answer(resumed)["text"]
    assert text.startswith("v1: Done: ") and "approved by sam" in text
    assert steps_ran(resumed) == ["reply"]  # `main` is not run again
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900444"
    pinned, started = recent_runs(scope, limit=2)
    assert pinned["resumed"] and pinned["harness"]["version"] == first
    assert pinned["run_key"] == started["run_id"]
    assert pinned["steps_ran"] == ["main", "reply"]

    again = script({"plan": {"tasks": [task("t1", "members", "update", "Emily's phone")]},
                    "turns": {"t1": [*update_turns("+44 7700 900555"), {"content": "ok"}]}})
    fresh = chat(person("staff"), "change Emily Chen's phone to +44 7700 900555", again)
    assert finished(fresh)["status"] == "awaiting_approval", of(fresh, "error")
    assert recent_runs(scope, limit=1)[0]["harness"]["version"] == second


def test_an_agent_step_pauses_for_approval_and_resumes_in_place(script: Any,
                                                               demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    doc = {"steps": [step("change", "agent", agent="members.update", save_as="done",
                          final=False),
                     step("reply", "answer", text="Agent said: {{done.answer}}")]}
    number, _ = versions.save(scope, doc, actor="admin-1")
    versions.activate(scope, number, actor="admin-1", report=PASSED)
    model = script({"turns": {"change": [*update_turns("+44 7700 900777"),
                                         {"content": "Phone changed."}]},
                    "synthesis": "unused"})
    paused = chat(person("staff"), "change Emily Chen's phone to +44 7700 900777", model,
                  thread="th-agent")
    assert finished(paused)["status"] == "awaiting_approval"
    [card] = of(paused, "approval_required")[0]["changes"]
    assert card["operation"] == "members.update"
    resumed = decide(card["change_id"])
    assert finished(resumed)["status"] == "completed"
    assert answer(resumed)["text"].startswith("Agent said: Done: ")
    # the agent's turns before the pause came back from the checkpoint, not the model
    assert finished(resumed)["usage"]["model_calls"] == 0
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900777"
