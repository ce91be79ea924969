"""Changes whose run can no longer resume, retried requests, and resumed runs that fail —
through the real graph on the real store, with scripted models."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from opsgraph.approvals import Orphaned, get_change, history, list_changes
from opsgraph.engine.approval_flow import decide_and_resume
from opsgraph.engine.runner import thread_state
from opsgraph.errors import Conflict, Gone
from opsgraph.jobs.expiry_job import expire_and_notify
from opsgraph.store.scope import TenantScope
from tests.e2e.scripts import call, task
from tests.engine.helpers import chat, finished, of, person

INVOICE = "INV-1003"
REFUND = call("invoices_refund", invoice=INVOICE, amount=45, reason="Court closed")
MIA = person("manager", user="mia")  # asks for the refund
SAM = person("manager", user="sam")  # decides


def refund_turns() -> list[dict[str, Any]]:
    return [call("invoices_get", invoice=INVOICE), REFUND, {"content": "Refunded."}]


def refund_then(second: dict[str, Any], turns: list[dict[str, Any]],
                synthesis: str | None = "Done.") -> dict[str, Any]:
    """A refund (t1) and a second task; `synthesis=None` leaves the answer unscripted, so a
    run that must write one fails loudly."""
    content: dict[str, Any] = {"plan": {"tasks": [
        task("t1", "invoices", "refund", f"Refund {INVOICE}"), second]},
        "turns": {"t1": refund_turns(), "t2": turns}}
    if synthesis is not None:
        content["synthesis"] = synthesis
    return content


def refunds(db: Any) -> list[Any]:
    return list(db["invoices"].find_one({"_id": "inv_demo_1003"}).get("refunds", []))


def decide(change_id: str, decision: str = "approve") -> list[Any]:
    return list(decide_and_resume(SAM, change_id, decision))


def one_card(events: list[Any]) -> str:
    [card] = of(events, "approval_required")[0]["changes"]
    return str(card["change_id"])


def test_a_change_whose_run_failed_before_pausing_is_orphaned_and_never_applies(
        script: Any, demo_db: Any) -> None:
    # t2, a second writer, runs after t1 recorded its proposal and has no turn scripted:
    # the run fails loudly and never pauses on t1's card.
    model = script(refund_then(task("t2", "members", "update", "Change Emily's phone"), []))
    events = chat(MIA, "refund INV-1003 and fix Emily's phone", model, thread="th-failed")
    assert finished(events)["status"] == "failed"
    scope = TenantScope(demo_db, "demo")
    [change] = list_changes(scope)
    assert thread_state(MIA, "th-failed")[0] == ()  # no interrupt waits for it

    with pytest.raises(Orphaned) as refused:
        decide(change.change_id)
    assert refused.value.status == 410 and refused.value.code == "orphaned"
    assert "Nothing was applied" in refused.value.message
    assert refunds(demo_db) == []
    assert get_change(scope, change.change_id).status == "orphaned"
    assert list_changes(scope) == []
    for decision in ("approve", "reject"):  # and it stays that way, whatever is decided
        with pytest.raises(Orphaned):
            decide(change.change_id, decision)
    assert [(r["from"], r["to"], r["actor"]) for r in history(scope, change.change_id)] == [
        (None, "pending", "mia"), ("pending", "orphaned", "sam")]


def test_a_retried_request_takes_the_orphans_card_and_applies_once(
        script: Any, demo_db: Any) -> None:
    failing = script(refund_then(task("t2", "members", "update", "Change Emily's phone"), []))
    chat(MIA, "refund INV-1003 and fix Emily's phone", failing, thread="th-first")
    [orphan] = list_changes(TenantScope(demo_db, "demo"))

    retry = script({"plan": {"tasks": [task("t1", "invoices", "refund", "Refund it")]},
                    "turns": {"t1": refund_turns()}, "synthesis": "Refunded."})
    events = chat(MIA, "refund INV-1003", retry, thread="th-retry")
    assert finished(events)["status"] == "awaiting_approval"
    assert one_card(events) == orphan.change_id  # the same card, not a second one
    done = decide(orphan.change_id)
    assert finished(done)["status"] == "completed"
    assert [r["change_id"] for r in refunds(demo_db)] == [orphan.change_id]
    with pytest.raises(Conflict):
        decide(orphan.change_id)


def test_a_card_asked_for_twice_resumes_both_runs_and_applies_once(script: Any,
                                                                   demo_db: Any) -> None:
    model = script({"plan": {"tasks": [task("t1", "invoices", "refund", "Refund it")]},
                    "turns": {"t1": refund_turns()}, "synthesis": "Refunded."})
    first = one_card(chat(MIA, "refund INV-1003", model, thread="th-one"))
    second = one_card(chat(MIA, "refund INV-1003 please", model, thread="th-two"))
    assert second == first
    assert len(list_changes(TenantScope(demo_db, "demo"))) == 1

    done = decide(first)
    assert [d["thread_id"] for d in of(done, "run_finished")] == ["th-two"]
    assert finished(done)["status"] == "completed"
    assert of(done, "error") == []
    for thread in ("th-one", "th-two"):  # both runs learnt it was applied
        assert thread_state(MIA, thread)[0] == ()
    assert len(refunds(demo_db)) == 1


def expire(db: Any, change_id: str) -> None:
    """Move the change's expiry into the past (the clock is not injectable end to end)."""
    past = datetime.now(UTC) - timedelta(seconds=1)
    db["pending_changes"].update_one({"_id": change_id}, {"$set": {"expires_at": past}})


def paused_with_unscripted_answer(script: Any, thread: str, asker: Any = MIA) -> str:
    """A refund and a read: resumed, the run must write an answer it has no script for."""
    # a read whose findings need the synthesis call, which is left unscripted
    model = script(refund_then(task("t2", "members", "search", "Find Emily Chen"),
                               [call("members_search", query="Emily Chen"),
                                {"content": "Found her."}], synthesis=None))
    return one_card(chat(asker, "refund INV-1003 and when do you open?", model, thread=thread))


def test_the_expiry_job_logs_and_counts_resumed_runs_that_fail(
        script: Any, demo_db: Any, caplog: pytest.LogCaptureFixture) -> None:
    change_id = paused_with_unscripted_answer(script, "th-expire")
    expire(demo_db, change_id)
    with caplog.at_level(logging.WARNING, logger="opsgraph.engine.approval_flow"):
        report = expire_and_notify()
    assert report == {"expired": 1, "orphaned": 0, "resumed": 1, "resume_failed": 1}
    [logged] = [r.getMessage() for r in caplog.records if "resumed run failed" in r.getMessage()]
    assert "demo" in logged and "th-expire" in logged and change_id in logged
    assert refunds(demo_db) == []
    assert expire_and_notify() == {"expired": 0, "orphaned": 0, "resumed": 0,
                                   "resume_failed": 0}


def test_the_expiry_job_orphans_what_no_run_waits_for(script: Any, demo_db: Any) -> None:
    model = script(refund_then(task("t2", "members", "update", "Change Emily's phone"), []))
    chat(MIA, "refund INV-1003 and fix Emily's phone", model, thread="th-gone")
    [change] = list_changes(TenantScope(demo_db, "demo"))
    # another manager's equal request is no retry of mia's: a card of its own, waited on
    paused = paused_with_unscripted_answer(script, "th-paused", person("manager", user="noor"))
    report = expire_and_notify()
    assert report["orphaned"] == 1
    scope = TenantScope(demo_db, "demo")
    assert get_change(scope, change.change_id).status == "orphaned"
    assert get_change(scope, paused).status == "pending"


def test_a_late_decision_tells_the_client_that_the_resumed_run_failed(
        script: Any, demo_db: Any, caplog: pytest.LogCaptureFixture) -> None:
    change_id = paused_with_unscripted_answer(script, "th-late")
    expire(demo_db, change_id)
    with caplog.at_level(logging.WARNING, logger="opsgraph.engine.approval_flow"), \
            pytest.raises(Gone) as gone:
        decide(change_id)
    assert gone.value.code == "expired"
    [failure] = gone.value.detail["run_errors"]
    assert failure["code"] == "resume_failed" and failure["thread_id"] == "th-late"
    assert failure["change_id"] == change_id and "synthes" in failure["message"]
    assert any(change_id in r.getMessage() and "th-late" in r.getMessage()
               for r in caplog.records)
    assert refunds(demo_db) == []


def test_the_decider_hears_of_another_run_on_the_card_that_failed(
        script: Any, demo_db: Any, caplog: pytest.LogCaptureFixture) -> None:
    older = paused_with_unscripted_answer(script, "th-older")
    model = script({"plan": {"tasks": [task("t1", "invoices", "refund", "Refund it")]},
                    "turns": {"t1": refund_turns()}, "synthesis": "Refunded."})
    assert one_card(chat(MIA, "refund INV-1003", model, thread="th-newer")) == older

    with caplog.at_level(logging.WARNING, logger="opsgraph.engine.approval_flow"):
        done = decide(older)
    assert [e.event for e in done][-2:] == ["error", "run_finished"]
    [failure] = of(done, "error")
    assert failure["code"] == "resume_failed" and failure["thread_id"] == "th-older"
    assert failure["change_id"] == older
    assert finished(done) == {**finished(done), "thread_id": "th-newer",
                              "status": "completed"}
    assert any("th-older" in r.getMessage() and older in r.getMessage()
               for r in caplog.records)
    assert len(refunds(demo_db)) == 1
