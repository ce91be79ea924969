"""The answer log over real runs (scripted model, real store): newest first, each run with
its request, tools, sources, model calls and outcome; a resumed run with the message it
resumed; pages that do not shift when new runs finish; bad paging refused; one tenant
never sees another's runs."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.engine.answer_log import answer_log
from opsgraph.errors import BadInput
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import chat, finished, person
from tests.engine.test_supervisor import call, task
from tests.jobs.test_few_shot import REQUEST, run_and_decide

pytestmark = pytest.mark.usefixtures("demo_db")


def lookup(script: Any) -> str:
    return script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen"),
                           task("t2", "knowledge", "search", "Find the cancellation policy")]},
        "turns": {"t1": [call("members_get", member="Emily Chen")],
                  "t2": [call("knowledge_search", query="cancellation policy"),
                         call("knowledge_read_section", document="booking-policy",
                              section="booking-policy#cancelling-a-booking"),
                         {"content": "Cancellations need 24 hours notice."}]},
        "synthesis": "Emily Chen is a junior member; cancellations need 24 hours notice.",
    })


def test_the_log_lists_finished_runs_newest_first_with_what_they_did(script: Any,
                                                                     demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    events = chat(person("staff"), "Emily Chen and cancellations?", lookup(script),
                  thread="th-lookup")
    assert finished(events)["status"] == "completed"
    run_and_decide(script, "demo", "th-change", "approve")  # paused, then resumed
    broken = script({"plan": {"tasks": [task("t1", "members", "get", "x")]},
                     "synthesis": "x"})  # no turns for t1: the task fails
    chat(person("staff"), "who is Raj Mehta", broken, thread="th-broken")
    chat(person("staff", tenant="acme"), "Emily Chen and cancellations?", lookup(script),
         thread="th-acme")

    runs = answer_log(scope)["runs"]
    assert [(r["thread_id"], r["resumed"]) for r in runs] == [
        ("th-broken", False), ("th-change", True), ("th-change", False),
        ("th-lookup", False)]
    broken_run, resumed, paused, looked_up = runs
    assert broken_run["request"] == "who is Raj Mehta"
    assert broken_run["outcome"] in ("completed_with_errors", "failed")
    assert resumed["request"] == paused["request"] == REQUEST
    assert paused["outcome"] == "awaiting_approval" and resumed["outcome"] == "completed"
    assert sorted(looked_up["tools"]) == ["knowledge_read_section", "knowledge_search",
                                          "members_get"]  # the tasks ran side by side
    assert {s["kind"] for s in looked_up["sources"]} >= {"member", "section"}
    assert looked_up["model_calls"] == finished(events)["usage"]["model_calls"] > 0
    assert looked_up["outcome"] == "completed" and looked_up["error"] is None
    # the built-in harness (version 0): one supervisor step, from the run's record
    assert (looked_up["steps"], looked_up["harness_version"]) == (["main"], 0)
    assert [r["at"] for r in runs] == sorted((r["at"] for r in runs), reverse=True)
    assert all(r["run_id"].startswith("run_") for r in runs)
    assert len(answer_log(TenantScope(demo_db, "acme"))["runs"]) == 1


def test_pages_follow_each_other_and_do_not_shift(script: Any, demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    for n in range(3):
        chat(person("staff"), f"question {n}", lookup(script), thread=f"th-{n}")
    first = answer_log(scope, limit=2)
    assert [r["request"] for r in first["runs"]] == ["question 2", "question 1"]
    assert first["next"] == first["runs"][-1]["cursor"]
    chat(person("staff"), "question 3", lookup(script), thread="th-3")  # lands on page one
    second = answer_log(scope, limit=2, before=first["next"])
    assert [r["request"] for r in second["runs"]] == ["question 0"]
    assert second["next"] is None


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"limit": 0}, "limit: must be a whole number from 1 to 100"),
    ({"limit": 101}, "limit: must be a whole number from 1 to 100"),
    ({"before": "yesterday"}, "before: 'yesterday' is not a cursor"),
    ({"before": "2026-01-01T00:00:00~"}, "is not a cursor"),
])
def test_bad_paging_is_refused(demo_db: Any, kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(BadInput, match=words):
        answer_log(TenantScope(demo_db, "demo"), **kwargs)
