"""Reply drafts as staff review them: read, edit, send through approvals, discard — real
store, real graph (the email's run), scripted model."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.approvals import get_change
from opsgraph.engine.approval_flow import decide_and_resume
from opsgraph.errors import BadInput, Conflict, NotFound, Unprocessable
from opsgraph.jobs import drafts
from opsgraph.jobs.inbound_email import ingest_email
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.scope import TenantScope
from tests.engine.test_supervisor import call, task
from tests.jobs.test_inbound_email import FRIENDLY

STAFF = Principal("demo", "stf_demo_04", frozenset({Role.STAFF}), Channel.DASHBOARD)
MANAGER = Principal("demo", "stf_demo_02", frozenset({Role.MANAGER}), Channel.DASHBOARD)


REPLY = "Cancellations need 24 hours notice."


def policy_script(script: Any) -> str:
    """The email's run: a knowledge read (a source the draft shows), then the reply."""
    model: str = script({
        "plan": {"tasks": [task("t1", "knowledge", "search", "Find the cancellation policy")]},
        "turns": {"t1": [call("knowledge_search", query="cancellation policy"),
                         call("knowledge_read_section", document="booking-policy",
                              section="booking-policy#cancelling-a-booking"),
                         {"content": REPLY}]},
        "synthesis": REPLY})
    return model


@pytest.fixture
def draft_id(script: Any, demo_db: Any) -> str:
    out = ingest_email("demo", FRIENDLY.read_bytes(), model=policy_script(script))
    return str(out["draft_id"])


def outbox(db: Any) -> list[dict[str, Any]]:
    return list(db["outbox"].find({"tenant_id": "demo"}))


def test_a_draft_shows_the_original_the_reply_and_its_sources(draft_id: str) -> None:
    scope = TenantScope.of(STAFF)
    listed = drafts.list_drafts(scope)
    assert listed["open"] == 1 and [d["draft_id"] for d in listed["drafts"]] == [draft_id]
    one = drafts.get_draft(scope, draft_id)
    assert (one["status"], one["status_label"]) == ("draft", "Draft")
    assert one["original"]["from_name"] == "Jane Smith"
    assert "Court 1 free on Thursday" in one["original"]["body"]
    assert one["body"] == REPLY and one["actions"]["send"]
    assert "booking-policy#cancelling-a-booking" in [s["id"] for s in one["sources"]]
    with pytest.raises(NotFound):
        drafts.get_draft(scope, "draft_000000000000000000000000")
    with pytest.raises(BadInput, match="status: unknown draft status"):
        drafts.list_drafts(scope, "nope")


def test_edit_send_approve_sends_exactly_once(draft_id: str, demo_db: Any) -> None:
    edited = drafts.edit_draft(STAFF, draft_id, body="Yes: Court 1 is free at 18:00.")
    assert edited["body"] == "Yes: Court 1 is free at 18:00." and edited["edited_by_name"]
    sent = drafts.send_draft(STAFF, draft_id)
    assert (sent["status"], sent["status_label"]) == ("awaiting_approval",
                                                      "Waiting for a manager")
    assert not any(sent["actions"].values())
    change = get_change(TenantScope.of(STAFF), sent["change"]["change_id"])
    assert (change.operation, change.origin, change.status) == (
        "communications.send_email", "draft", "pending")
    assert change.args["body"] == "Yes: Court 1 is free at 18:00."
    assert change.thread_id == draft_id and outbox(demo_db) == []
    for again in (lambda: drafts.send_draft(STAFF, draft_id),
                  lambda: drafts.discard_draft(STAFF, draft_id),
                  lambda: drafts.edit_draft(STAFF, draft_id, body="x")):
        with pytest.raises(Conflict, match="sent for approval already"):
            again()
    events = list(decide_and_resume(MANAGER, change.change_id, "approve"))
    assert [e.event for e in events] == ["run_started", "answer", "run_finished"]
    assert events[1].data["text"].startswith("Applied by ")
    assert [m["body"] for m in outbox(demo_db)] == ["Yes: Court 1 is free at 18:00."]
    with pytest.raises(Conflict):
        list(decide_and_resume(MANAGER, change.change_id, "approve"))
    assert len(outbox(demo_db)) == 1
    shown = drafts.get_draft(TenantScope.of(STAFF), draft_id)
    assert shown["status"] == "sent" and shown["change"]["decided_by_name"] not in (
        None, "stf_demo_02")
    with pytest.raises(Conflict, match="sent already"):
        drafts.send_draft(STAFF, draft_id)
    assert drafts.list_drafts(TenantScope.of(STAFF))["open"] == 0


def test_a_rejected_send_can_be_edited_and_sent_again(draft_id: str, demo_db: Any) -> None:
    first = drafts.send_draft(STAFF, draft_id)["change"]["change_id"]
    list(decide_and_resume(MANAGER, first, "reject", feedback="Sign it from the club"))
    shown = drafts.get_draft(TenantScope.of(STAFF), draft_id)
    assert shown["status"] == "not_sent" and shown["status_label"] == "Not sent: rejected"
    assert shown["change"]["feedback"] == "Sign it from the club"
    resent = drafts.send_draft(STAFF, draft_id, body="Court 1 is free. The club")
    second = resent["change"]["change_id"]
    assert second != first and get_change(TenantScope.of(STAFF), second).status == "pending"
    assert outbox(demo_db) == []


def test_discard_is_once_and_bad_edits_are_refused(draft_id: str) -> None:
    with pytest.raises(BadInput, match="subject and/or body"):
        drafts.edit_draft(STAFF, draft_id)
    with pytest.raises(Unprocessable, match="subject: must not contain a control"):
        drafts.edit_draft(STAFF, draft_id, subject="two\nlines")
    gone = drafts.discard_draft(STAFF, draft_id)
    assert gone["status"] == "discarded" and not gone["actions"]["send"]
    with pytest.raises(Conflict, match="discarded"):
        drafts.discard_draft(STAFF, draft_id)
    with pytest.raises(Conflict, match="discarded"):
        drafts.send_draft(STAFF, draft_id)


def test_a_member_cannot_send_a_draft(draft_id: str) -> None:
    member = Principal("demo", "mem_demo_001", frozenset({Role.MEMBER}), Channel.DASHBOARD)
    from opsgraph.errors import Forbidden

    with pytest.raises(Forbidden):
        drafts.send_draft(member, draft_id)


def test_the_drafts_commands(draft_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from opsgraph.cli import main

    assert main(["drafts", "list"]) == 0
    assert draft_id in capsys.readouterr().out
    assert main(["drafts", "show", draft_id]) == 0
    shown = capsys.readouterr().out
    assert "From: Jane Smith <jane.smith@example.com>" in shown and REPLY in shown
    assert "source: " in shown
    assert main(["drafts", "edit", draft_id, "--body", "Edited reply", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["body"] == "Edited reply"
    assert main(["drafts", "send", draft_id, "--user", "stf_demo_04"]) == 0
    assert "waits for a manager" in capsys.readouterr().out
    assert main(["drafts", "send", draft_id]) == 2
    assert "cannot be sent: it was sent for approval already" in capsys.readouterr().err
    assert main(["approvals", "list"]) == 0
    assert "body: — → Edited reply" in capsys.readouterr().out
