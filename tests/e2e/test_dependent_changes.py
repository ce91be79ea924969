"""A change that waits for another (`waits_for`): book Jane Smith on Court 1 and email her
the confirmation, the email depending on the booking (docs/reference.md, "Dependent
changes"). Both cards are raised together; the email is decidable only once the booking
applied, and is withdrawn when the booking does not apply."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.flows import decide
from tests.e2e.http_client import Streamed, bearer, stream
from tests.e2e.scripts import call, task

START, END = "2030-01-07T18:00:00+00:00", "2030-01-07T19:00:00+00:00"
BODY = "Hi Jane, Court 1 is booked for you on Monday 7 January, 18:00 to 19:00."


def book_and_confirm() -> dict[str, Any]:
    """Two writes, the email depending on the booking."""
    email = task("t2", "communications", "send", "Email Jane Smith her booking confirmation")
    email["depends_on"] = ["t1"]
    return {"plan": {"tasks": [
        task("t1", "bookings", "create", "Book Court 1 for Jane Smith on 7 January 2030 at 18:00"),
        email]},
        "turns": {
            "t1": [call("bookings_create", member="jane.smith@example.com", resource="Court 1",
                        start=START, end=END),
                   {"content": "I proposed the booking."}],
            "t2": [call("communications_send_email", to="jane.smith@example.com",
                        subject="Your Court 1 booking", body=BODY),
                   {"content": "I proposed the email."}]},
        "synthesis": "Both changes are handled."}


def _ask(server: AppServer, http: httpx.Client) -> tuple[Streamed, dict[str, Any],
                                                        dict[str, Any]]:
    server.write_script(book_and_confirm())
    run = stream(http, "/v1/runs", {"message": "Book Jane on court 1 at 6 on 7 January 2030 and "
                                               "email her the confirmation"}, bearer("staff"))
    assert run.finished["status"] == "awaiting_approval", run.events
    cards = {c["operation"]: c for c in run.of("approval_required")[0]["changes"]}
    booking, email = cards["bookings.create"], cards["communications.send_email"]
    assert booking["waits_for"] == [] and email["waits_for"] == [booking["change_id"]]
    return run, booking, email


def _emails(db: Any) -> list[dict[str, Any]]:
    return list(db["outbox"].find({"tenant_id": "demo", "body": BODY}))


def _bookings(db: Any) -> list[dict[str, Any]]:
    jane = db["members"].find_one({"tenant_id": "demo", "email": "jane.smith@example.com"})
    return list(db["bookings"].find({"tenant_id": "demo", "member_id": jane["_id"],
                                     "status": "confirmed"}))


def test_rejecting_the_booking_withdraws_its_confirmation(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    before = len(_bookings(demo_db))
    _, booking, email = _ask(server, http)
    # deciding the email first is refused, naming the change it waits for
    first = decide(http, email["change_id"], "approve")
    assert first.status == 409, first
    assert first.error["code"] == "waiting_for_change"
    assert booking["change_id"] in first.error["message"]
    assert demo_db["pending_changes"].find_one({"_id": email["change_id"]})["status"] == "pending"

    rejected = decide(http, booking["change_id"], "reject", feedback="Court 1 is closed")
    assert rejected.finished["status"] == "completed", rejected.events
    doc = demo_db["pending_changes"].find_one({"_id": email["change_id"]})
    assert doc["status"] == "withdrawn" and booking["change_id"] in doc["withdrawn_reason"]
    [answer] = rejected.of("answer")
    assert f"Withdrawn: {email['summary']}" in answer["text"], answer
    late = decide(http, email["change_id"], "approve")
    assert late.status == 409 and "withdrawn" in late.error["message"]
    assert _emails(demo_db) == [] and len(_bookings(demo_db)) == before
    listed = http.get("/v1/approvals", params={"status": "withdrawn"},
                      headers=bearer("manager")).json()
    assert [c["change_id"] for c in listed["changes"]] == [email["change_id"]]


def test_approving_the_booking_then_the_email_sends_one_email_for_that_booking(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    _, booking, email = _ask(server, http)
    applied = decide(http, booking["change_id"], "approve")
    assert applied.finished["status"] == "awaiting_approval", applied.events
    sent = decide(http, email["change_id"], "approve")
    assert sent.finished["status"] == "completed", sent.events
    [made] = [b for b in _bookings(demo_db)
              if b.get("change_id") == booking["change_id"]]
    [mail] = _emails(demo_db)
    assert mail["to"] == "jane.smith@example.com" and mail.get("change_id") == email["change_id"]
    court = demo_db["resources"].find_one({"_id": made["resource_id"]})
    assert "Court 1" in mail["body"] and court["name"] == "Court 1"
    assert "18:00 to 19:00" in mail["body"] and made["start"].hour == 18


def test_revising_the_booking_withdraws_the_email_that_waited_for_it(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    script = book_and_confirm()
    script["turns"]["t1"].insert(1, call("bookings_create", member="jane.smith@example.com",
                                         resource="Court 1", start=START.replace("18", "19"),
                                         end=END.replace("19", "20")))
    server.write_script(script)
    run = stream(http, "/v1/runs", {"message": "Book Jane and email her"}, bearer("staff"))
    cards = {c["operation"]: c for c in run.of("approval_required")[0]["changes"]}
    booking, email = cards["bookings.create"], cards["communications.send_email"]
    revised = decide(http, booking["change_id"], "revise", feedback="Make it 7pm")
    assert revised.finished["status"] == "awaiting_approval", revised.events
    doc = demo_db["pending_changes"].find_one({"_id": email["change_id"]})
    assert doc["status"] == "withdrawn" and "sent back for revision" in doc["withdrawn_reason"]
    [again] = revised.of("approval_required")[0]["changes"]  # only the revised booking waits
    assert again["operation"] == "bookings.create" and again["change_id"] != booking["change_id"]
    [t2] = [t for t in revised.of("task_finished") if t["task_id"] == "t2"]
    assert t2["status"] == "withdrawn" and t2["status_label"] == "Withdrawn"
    assert _emails(demo_db) == []
