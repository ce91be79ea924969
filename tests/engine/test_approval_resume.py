"""Interrupt and resume through the real graph: cards, decisions, exactly one apply."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from opsgraph.engine.approval_flow import decide_and_resume
from opsgraph.errors import Conflict
from tests.engine.helpers import chat, finished, of, person, statuses
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")

EMILY = "mem_demo_008"


def update_turns(phone: str) -> list[dict[str, Any]]:
    return [call("members_search", query="Emily Chen"),
            call("members_get", member="Emily Chen"),
            call("members_update", member="Emily Chen", changes={"phone": phone})]


def decide(change_id: str, decision: str, **kw: Any) -> list[Any]:
    return list(decide_and_resume(person("manager", user="sam"), change_id, decision, **kw))


def test_approve_resumes_without_rerunning_completed_tasks(script: Any, demo_db: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "facilities", "get", "Status of Court 1"),
                           task("t2", "members", "update", "Change Emily Chen's phone")]},
        "turns": {"t1": [call("facilities_status", resource="Court 1"),
                         {"content": "Court 1 is open."}],
                  "t2": [*update_turns("+44 7700 900999"), {"content": "Phone updated."}]},
        "synthesis": "Emily's phone is updated; Court 1 is open.",
    })
    events = chat(person("staff"), "update Emily's phone and is court 1 open", model,
                  thread="th-approve")
    assert finished(events)["status"] == "awaiting_approval"
    assert statuses(events) == {"t1": "completed"}
    [card] = of(events, "approval_required")[0]["changes"]
    assert card["operation"] == "members.update"
    assert card["new"]["phone"] == "+44 7700 900999"
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] != "+44 7700 900999"

    resumed = decide(card["change_id"], "approve")
    assert finished(resumed)["status"] == "completed"
    # Only the synthesis calls the model again: t1 is not re-run, and t2's settled
    # proposal ends its work without another turn.
    assert finished(resumed)["usage"]["model_calls"] == 1
    assert statuses(resumed) == {"t2": "completed"}
    assert of(resumed, "answer")[0]["text"].startswith("Emily's phone is updated")
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900999"
    with pytest.raises(Conflict):
        decide(card["change_id"], "approve")
    applied = demo_db["audit"].count_documents({"change_id": card["change_id"], "to": "applied"})
    assert applied == 1


def test_parallel_proposals_surface_together_and_resolve_in_any_order(script: Any,
                                                                     demo_db: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Emily's phone"),
                           task("t2", "facilities", "create", "Report the broken net on Court 1")]},
        "turns": {"t1": [*update_turns("+44 7700 900111"), {"content": "Phone changed."}],
                  "t2": [call("facilities_status", resource="Court 1"),
                         call("facilities_report_issue", resource="Court 1",
                              description="Net is torn"),
                         {"content": "Issue reported."}]},
        "synthesis": "Both changes are handled.",
    })
    events = chat(person("staff"), "change emily's phone and report the broken net on court 1",
                  model, thread="th-two")
    cards = of(events, "approval_required")[0]["changes"]
    assert sorted(c["operation"] for c in cards) == ["facilities.report_issue", "members.update"]
    by_op = {c["operation"]: c["change_id"] for c in cards}

    first = decide(by_op["facilities.report_issue"], "approve")
    assert finished(first)["status"] == "awaiting_approval"
    [still] = of(first, "approval_required")[0]["changes"]
    assert still["change_id"] == by_op["members.update"]

    second = decide(by_op["members.update"], "reject", feedback="Wrong number")
    assert finished(second)["status"] == "completed"
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] != "+44 7700 900111"
    assert demo_db["tickets"].count_documents({"tenant_id": "demo",
                                               "description": "Net is torn"}) == 1


def test_revise_produces_a_new_proposal_and_supersedes_the_old(script: Any,
                                                               demo_db: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Emily's phone")]},
        "turns": {"t1": [*update_turns("+44 7700 900222"),
                         call("members_update", member="Emily Chen",
                              changes={"phone": "+44 7700 900333"}),
                         {"content": "Updated with the corrected number."}]},
        "synthesis": "Done after a revision.",
    })
    events = chat(person("staff"), "fix emily's phone", model, thread="th-revise")
    [old] = of(events, "approval_required")[0]["changes"]
    revised = decide(old["change_id"], "revise", feedback="The number ends in 333")
    assert finished(revised)["status"] == "awaiting_approval"
    [new] = of(revised, "approval_required")[0]["changes"]
    assert new["change_id"] != old["change_id"] and new["new"]["phone"] == "+44 7700 900333"
    assert demo_db["pending_changes"].find_one({"_id": old["change_id"]})["status"] == \
        "superseded"
    done = decide(new["change_id"], "approve")
    assert finished(done)["status"] == "completed"
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900333"


def test_a_thread_waiting_for_approval_refuses_a_new_message(script: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Emily's phone")]},
        "turns": {"t1": [*update_turns("+44 7700 900666"), {"content": "Done."}]},
        "synthesis": "Done.",
    })
    chat(person("staff"), "fix emily's phone", model, thread="th-busy")
    with pytest.raises(Conflict, match="waiting for 1 approval"):
        chat(person("staff"), "something else", model, thread="th-busy")


def test_a_full_refund_is_reported_to_the_agent_as_applied(script: Any, demo_db: Any) -> None:
    # On resume the writer task replays its tool rounds from the checkpoint: the preview is
    # not computed again against the invoice its own approval just refunded in full.
    from opsgraph.engine.graph import get_graph
    from opsgraph.engine.runner import graph_thread_id

    model = script({
        "plan": {"tasks": [task("t1", "invoices", "refund", "Refund INV-1003 in full")]},
        "turns": {"t1": [call("invoices_list"), call("invoices_get", invoice="INV-1003"),
                         call("invoices_refund", invoice="INV-1003", amount=45,
                              reason="Court closed"),
                         {"content": "Refunded."}]},
        "synthesis": "INV-1003 is refunded.",
    })
    manager = person("manager")
    events = chat(manager, "refund INV-1003", model, thread="th-refund")
    [card] = of(events, "approval_required")[0]["changes"]
    done = decide(card["change_id"], "approve")
    assert finished(done)["status"] == "completed"
    refunded = demo_db["invoices"].find_one({"_id": "inv_demo_1003"})["refunded"]
    assert Decimal(str(refunded)) == 45  # money: exact decimals (Decimal128 in the store)
    state = get_graph().get_state({"configurable": {
        "thread_id": graph_thread_id(manager, "th-refund")}})
    assert [(c["tool"], c["ok"]) for c in state.values["results"]["t1"]["calls"]] == [
        ("invoices_list", True), ("invoices_get", True), ("invoices_refund", True)]


def test_a_resumed_run_keeps_the_requesters_permissions(script: Any) -> None:
    # A member's booking is approved by a manager; the task after it (a member search,
    # which members may not run) is still gated against the member, not the manager.
    model = script({
        "plan": {"tasks": [task("t1", "bookings", "create", "Book Court 1 for me"),
                           task("t2", "members", "search", "Find other Smiths", ["t1"])]},
        "turns": {"t1": [call("bookings_availability", resource="Court 1", date="2030-01-07"),
                         call("bookings_create", member="mem_demo_008", resource="Court 1",
                              start="2030-01-07T18:00:00Z", end="2030-01-07T19:00:00Z"),
                         {"content": "Booked."}]},
        "synthesis": "Your booking is confirmed.",
    })
    member = person("member", user="mem_demo_008")
    events = chat(member, "book court 1 monday 6pm and find other smiths", model,
                  thread="th-member")
    [card] = of(events, "approval_required")[0]["changes"]
    resumed = decide(card["change_id"], "approve")
    assert statuses(resumed) == {"t1": "completed", "t2": "denied"}
    assert finished(resumed)["status"] == "completed"


def test_only_the_requester_continues_a_thread(script: Any) -> None:
    from opsgraph.errors import BadInput, NotFound

    model = script({"plan": {"tasks": [task("t1", "knowledge", "search", "Opening hours")]},
                    "turns": {"t1": [{"content": "6am."}]}, "synthesis": "6am."})
    chat(person("staff", user="alex"), "when do you open?", model, thread="th-alex")
    with pytest.raises(NotFound, match="th-alex"):
        chat(person("staff", user="blake"), "and what did alex ask?", model, thread="th-alex")
    with pytest.raises(BadInput, match="thread_id"):
        chat(person("staff"), "hi", model, thread="acme:th-1")


# the example of docs/reference.md, "Scripted model files"
INTERFACES_EXAMPLE = Path(__file__).with_name("interfaces_example.yaml")


def test_the_interfaces_example_script_pauses_for_approval(demo_db: Any) -> None:
    path = INTERFACES_EXAMPLE
    events = chat(person("staff"), "Change Jane Smith's email to jane@new.example",
                  f"scripted:{path}", thread="th-example")
    assert finished(events)["status"] == "awaiting_approval"
    [card] = of(events, "approval_required")[0]["changes"]
    assert card["operation"] == "members.update"
    assert card["old"] == {"email": "jane.smith@example.com"}
    assert card["new"] == {"email": "jane@new.example"}
    done = decide(card["change_id"], "approve")
    # what was done is written by code from the decision, not by the model
    assert of(done, "answer")[0]["text"].startswith("Done: Update Jane Smith")
    assert demo_db["members"].find_one({"_id": "mem_demo_001"})["email"] == "jane@new.example"
