"""A paused run resumes on the harness version it started with, whatever is active since."""

from __future__ import annotations

import re
from typing import Any

import pytest

from opsgraph.engine.approval_flow import decide_and_resume
from opsgraph.engine.graph import reset_graph
from opsgraph.harness import versions
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import chat, finished, of, person
from tests.engine.test_approval_resume import update_turns
from tests.engine.test_supervisor import task
from tests.harness.records import recent_runs
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


def test_a_run_paused_before_harnesses_existed_resumes_and_finishes(script: Any,
                                                                    demo_db: Any) -> None:
    from opsgraph.engine.runner import graph_thread_id
    from tests.engine.test_state import rewrite_checkpoint

    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone")]},
        "turns": {"t1": [*update_turns("+44 7700 900888"), {"content": "Phone changed."}]},
    })
    staff = person("staff")
    paused = chat(staff, "change Emily Chen's phone to +44 7700 900888", model,
                  thread="th-v2")
    [card] = of(paused, "approval_required")[0]["changes"]

    def to_version_2(values: dict[str, Any]) -> None:
        """A checkpoint of schema 2: no harness in it."""
        del values["harness"]
        values["schema_version"] = 2

    rewrite_checkpoint(demo_db, graph_thread_id(staff, "th-v2"), to_version_2)
    resumed = decide(card["change_id"])
    assert finished(resumed)["status"] == "completed"
    assert answer(resumed)["text"].startswith("Done: ")
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900888"


def test_the_seconds_budget_counts_active_time_not_the_wait_for_approval(
        script: Any, demo_db: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from opsgraph.engine.runner import graph_thread_id
    from tests.engine.test_state import rewrite_checkpoint

    scope = TenantScope(demo_db, "demo")
    number = version(scope, "v1")  # the default budget: 120 seconds
    staff = person("staff")

    def pause(thread: str, phone: str) -> str:
        model = script({
            "plan": {"tasks": [task("t1", "members", "update", "Change Emily's phone")]},
            "turns": {"t1": [*update_turns(phone), {"content": "Phone changed."}]}})
        events = chat(staff, f"change Emily Chen's phone to {phone}", model, thread=thread)
        [card] = of(events, "approval_required")[0]["changes"]
        return str(card["change_id"])

    waited = pause("th-waited", "+44 7700 900101")

    def two_hours_ago(values: dict[str, Any]) -> None:
        values["harness"]["started_at"] = (datetime.now(UTC) - timedelta(hours=2)).isoformat()

    rewrite_checkpoint(demo_db, graph_thread_id(staff, "th-waited"), two_hours_ago)
    assert finished(decide(waited))["status"] == "completed"  # two hours waiting: not counted

    busy = pause("th-busy", "+44 7700 900102")
    demo_db["runs"].update_one({"tenant_id": "demo", "thread_id": "th-busy"},
                               {"$set": {"seconds": 500.0}})  # as if it had worked 500 s
    resumed = decide(busy)
    error = of(resumed, "error")[0]
    assert error["code"] == "budget_exceeded"
    # 500 earlier seconds plus this resume's own active time (under a second on a quiet
    # machine, more on a loaded CI runner): the wait for approval is not among them.
    used = re.fullmatch(rf"harness version {number}: (\d+) seconds, over its budget of 120",
                        error["message"])
    assert used is not None, error["message"]
    assert 500 <= int(used.group(1)) < 560
    assert finished(resumed)["status"] == "failed"
