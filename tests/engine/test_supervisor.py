"""The supervisor graph end to end: real graph, real store, scripted models."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.settings import get_settings
from tests.engine.helpers import chat, finished, of, person, statuses

pytestmark = pytest.mark.usefixtures("demo_db")


def task(tid: str, domain: str, verb: str, instruction: str, deps: list[str] | None = None
         ) -> dict[str, Any]:
    return {"id": tid, "domain": domain, "operation": verb, "instruction": instruction,
            "depends_on": deps or []}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


def test_parallel_plan_with_dependencies_answers_with_sources(script: Any) -> None:
    model = script({
        "plan": {"tasks": [
            task("t1", "members", "get", "Look up Emily Chen"),
            task("t2", "knowledge", "search", "Find the cancellation policy"),
            task("t3", "bookings", "list", "List Emily Chen's bookings", ["t1"]),
        ]},
        "turns": {
            "t1": [{**call("members_get", member="Emily Chen"), "delay_ms": 300}],
            "t2": [{**call("knowledge_search", query="cancellation policy"), "delay_ms": 300},
                   call("knowledge_read_section", document="booking-policy",
                        section="booking-policy#cancelling-a-booking"),
                   {"content": "Cancellations need 24 hours notice."}],
            "t3": [call("bookings_list", member="Emily Chen"),
                   {"content": "She has upcoming bookings."}],
        },
        "synthesis": "Emily Chen is a junior member; cancellations need 24 hours notice.",
    })
    events = chat(person("staff"), "What do we know about Emily Chen and cancellations?", model)
    names = [e.event for e in events]
    assert names[0] == "run_started" and names[-1] == "run_finished"
    assert finished(events)["status"] == "completed"
    assert statuses(events) == {"t1": "completed", "t2": "completed", "t3": "completed"}
    # t1 and t2 run side by side; t3 starts only once t1 has finished.
    order = [(e.event, e.data.get("task_id")) for e in events
             if e.event in ("task_started", "task_finished")]
    first_finish = next(i for i, (ev, _) in enumerate(order) if ev == "task_finished")
    assert {("task_started", "t1"), ("task_started", "t2")} <= set(order[:first_finish])
    assert order.index(("task_started", "t3")) > order.index(("task_finished", "t1"))
    plan = of(events, "plan")[0]["tasks"]
    # several agents serve knowledge.search: the ranker picks the policy one for a policy
    assert [t["agent"] for t in plan] == ["members.lookup", "knowledge.policies",
                                          "bookings.lookup"]
    tokens = [d["text"] for d in of(events, "token")]
    answer = of(events, "answer")[0]
    assert tokens and "".join(tokens) == answer["text"]  # streamed a sentence at a time
    assert answer["text"].startswith("Emily Chen is a junior member")
    kinds = {s["kind"] for s in answer["sources"]}
    assert "member" in kinds and "section" in kinds, kinds  # the section read, not the search
    assert any(s["id"] == "mem_demo_008" for s in answer["sources"])
    ids = [e.id for e in events]
    assert len(ids) == len(set(ids))


def test_a_runs_tasks_reuse_one_langgraph_runnable_each(script: Any) -> None:
    # LangGraph builds a task's runnable (inspect.signature and all) on every call unless
    # it can find the function by its module and name: our tasks are made so that it can
    from langgraph.pregel._call import CACHE

    from opsgraph.engine import execute, model_calls

    tasks = [execute.subtask, model_calls.tool_round_task, model_calls.code_turn_task,
             model_calls.model_turn_task]
    assert [t.func.__name__ for t in tasks] == ["run_subtask", "tool_round", "code_turn",
                                                "model_turn"]  # the names checkpoints carry
    model = script({"plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen"),
                                       task("t2", "members", "get", "Look up Raj Mehta")]},
                    "turns": {"t1": [call("members_get", member="Emily Chen")],
                              "t2": [call("members_get", member="Raj Mehta")]},
                    "synthesis": "Both are members."})
    events = chat(person("staff"), "Find these members and tell me about each of them", model)
    assert statuses(events) == {"t1": "completed", "t2": "completed"}
    assert (execute.run_subtask, True) in CACHE


def test_denied_task_never_reaches_a_model(script: Any) -> None:
    # No turns for t1: if the denied task reached the model, the scripted model would fail.
    model = script({"plan": {"tasks": [task("t1", "reports", "report", "Revenue this month")]},
                    "synthesis": "You are not allowed to see revenue reports."})
    events = chat(person("member", user="mem_demo_008"), "show me revenue", model)
    assert statuses(events) == {"t1": "denied"}
    assert not of(events, "task_started")
    assert finished(events)["status"] == "completed"
    # the plan only: a refusal is reported by code, and nothing was read to summarise
    assert finished(events)["usage"]["model_calls"] == 1
    assert "Not allowed" in of(events, "answer")[0]["text"]


def test_runaway_query_agent_stops_at_its_round_cap(script: Any) -> None:
    # a query agent whose calls keep failing gets more rounds, up to its cap
    model = script({
        "plan": {"tasks": [task("t1", "members", "search", "Find Emily")]},
        "turns": {"t1": [call("members_get", member="Nobody Atall")] * 5},
        "synthesis": "I could not finish that.",
    })
    events = chat(person("staff"), "find emily", model)
    errors = of(events, "error")
    assert errors and errors[0]["cap"] == "tool_rounds"
    assert "2 tool rounds" in errors[0]["message"]
    assert statuses(events) == {"t1": "failed"}
    # it answered, but a task broke down: the run says so
    assert finished(events)["status"] == "completed_with_errors"


def test_run_model_call_budget_stops_a_run(script: Any, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.setenv("OPSGRAPH_RUN_MODEL_CALLS", "2")
    get_settings.cache_clear()
    model = script({
        "plan": {"tasks": [task("t1", "members", "search", "Find Emily")]},
        "turns": {"t1": [call("members_search", query="Emily"), {"content": "found"}]},
        "synthesis": "done",
    })
    events = chat(person("staff"), "find emily", model)
    assert any(e.get("cap") == "model_call_budget" or "budget" in e["message"]
               for e in of(events, "error"))
    assert finished(events)["status"] == "failed"


def test_invalid_plan_is_repaired_once_then_reported(script: Any) -> None:
    model = script({"plan": {"tasks": [task("t1", "spaceships", "launch", "Go to the moon")]},
                    "synthesis": "unused"})
    events = chat(person("staff"), "launch a rocket", model)
    error = of(events, "error")[0]
    assert error["code"] == "invalid_plan"
    assert "unknown domain 'spaceships'" in error["message"]
    assert finished(events)["status"] == "failed"
    assert finished(events)["usage"]["model_calls"] == 2  # the plan and one repair


def test_tenant_override_changes_the_model_an_agent_uses(script: Any, demo_db: Any,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from opsgraph.engine.graph import get_graph
    from opsgraph.engine.runner import graph_thread_id
    from opsgraph.models.overrides import set_overrides
    from opsgraph.registry.loader import get_registry
    from opsgraph.store.scope import TenantScope

    plan = {"tasks": [task("t1", "members", "search", "Find Emily")]}
    default = script({"plan": plan, "synthesis": "ok",
                      "turns": {"t1": [{"content": "from the run model"}]}})
    override = script({"turns": {"t1": [{"content": "from the tenant override"}]}})
    monkeypatch.setenv("OPSGRAPH_ALLOWED_MODELS", override)  # a tenant picks from this list
    get_settings.cache_clear()
    set_overrides(TenantScope(demo_db, "demo"), {"members.lookup": override},
                  set(get_registry().agents), "admin")
    staff = person("staff")
    events = chat(staff, "find emily", default, thread="th-override")
    assert finished(events)["status"] == "completed"
    state = get_graph().get_state({"configurable": {
        "thread_id": graph_thread_id(staff, "th-override")}})
    assert state.values["results"]["t1"]["content"] == "from the tenant override"
    # acme has no override: the same request there uses the run's model.
    acme = person("staff", tenant="acme")
    chat(acme, "find emily", default, thread="th-acme")
    state = get_graph().get_state({"configurable": {
        "thread_id": graph_thread_id(acme, "th-acme")}})
    assert state.values["results"]["t1"]["content"] == "from the run model"


def test_a_scripted_task_with_no_turn_left_fails_the_run_loudly(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "search", "Find Emily")]},
        # the call fails, so the agent needs another turn, and the script has none
        "turns": {"t1": [call("members_get", member="Nobody Atall")]},
        "synthesis": "unused",
    })
    events = chat(person("staff"), "find emily", model)
    [error] = of(events, "error")
    assert "no turn left" in error["message"] and "t1" in error["message"]
    assert finished(events)["status"] == "failed"


def test_the_plan_calls_count_in_the_runs_usage(script: Any) -> None:
    # Only the plan and its repair call a model here, so every token is theirs.
    model = script({"plan": {"tasks": [task("t1", "spaceships", "launch", "Go")]}})
    usage = finished(chat(person("staff"), "launch", model))["usage"]
    assert usage["model_calls"] == 2 and usage["input_tokens"] > 0


def test_an_unasked_write_that_is_the_whole_plan_raises_no_card(script: Any,
                                                                 demo_db: Any) -> None:
    # issue 18, finding 6: "Where can I park?" planned as one refund raised a refund card.
    # That question now goes straight to a knowledge agent (no planner call), so the plan
    # review is held on a request the planner does see: reads of payments and bookings,
    # planned as a refund (one read alone is planned by code: engine.code_plans.single_read).
    # (Worded as a wh-question it would now go on to the knowledge agents after the repair:
    # tests/engine/test_requests.py.)
    model = script({
        "plan": {"tasks": [task("t1", "invoices", "refund", "Refund invoice INV-1042")]},
        "turns": {"t1": [call("invoices_refund", invoice="INV-1042", amount=10,
                              reason="parking")]},
        "synthesis": "unused"})
    events = chat(person("manager"), "Jane's payments and her bookings last month please",
                  model)
    assert not of(events, "approval_required") and not of(events, "task_started")
    [plan] = of(events, "plan")
    assert plan["tasks"] == []
    assert plan["notes"] == ["t1: dropped invoices.refund (the request asks for no change)"]
    assert finished(events)["status"] == "completed"
    assert finished(events)["usage"]["model_calls"] == 2  # the plan and one repair
    assert demo_db["pending_changes"].count_documents({}) == 0
