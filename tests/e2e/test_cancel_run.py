"""`POST /v1/runs/{run_id}/cancel` over HTTP: a run in flight stops at its next step
(`run_finished {status: cancelled}`), its undecided card is withdrawn, nothing applies;
cancelling a finished run is 409 (docs/reference.md, "Stopping a run")."""

from __future__ import annotations

import json
from typing import Any

import httpx
from httpx_sse import connect_sse

from tests.e2e.app_process import AppServer
from tests.e2e.flows import wait_for
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import EMILY, call, opening_hours, task

SLOW_MS = 8000
"""How long the slow model turn a stop must land in takes: the stop request has to reach the
server and be recorded first, which under the whole suite on 2 cores took more than 4 s
once (the resumed run finished before it)."""


def phone_and_slow_read() -> dict[str, Any]:
    """A writer that proposes at once, and a read whose model takes its time."""
    return {"plan": {"tasks": [
        task("t1", "members", "update", "Change Emily Chen's phone to +44 7700 900555"),
        task("t2", "bookings", "check", "Check Court 1 on 7 January")]},
        "turns": {
            "t1": [call("members_update", member="Emily Chen",
                        changes={"phone": "+44 7700 900555"}),
                   {"content": "I proposed the phone change."}],
            "t2": [{**call("bookings_availability", resource="Court 1", date="2030-01-07"),
                    "delay_ms": SLOW_MS},
                   {"content": "Court 1 is free."}]},
        "synthesis": "Court 1 is free."}


def phone_then_slow_read() -> dict[str, Any]:
    """A writer that proposes at once, and a read that waits for its decision and whose
    model takes its time: the run resumed after the decision has work to be stopped in (a
    single change resumed makes no model call at all: it answers at once)."""
    then = {**task("t2", "bookings", "list", "List Emily Chen's bookings"), "depends_on": ["t1"]}
    return {"plan": {"tasks": [
        task("t1", "members", "update", "Change Emily Chen's phone to +44 7700 900555"), then]},
        "turns": {
            "t1": [call("members_update", member="Emily Chen",
                        changes={"phone": "+44 7700 900555"}),
                   {"content": "I proposed the phone change."}],
            "t2": [{**call("bookings_list", member="Emily Chen"), "delay_ms": SLOW_MS},
                   {"content": "Emily has no bookings."}]},
        "synthesis": "Emily has no bookings."}


def test_a_run_in_flight_stops_and_its_card_is_withdrawn(server: AppServer, http: httpx.Client,
                                                          demo_db: Any) -> None:
    server.write_script(phone_and_slow_read())
    staff = bearer("staff")
    events: list[tuple[str, dict[str, Any]]] = []
    accepted: dict[str, Any] = {}
    with server.client() as other, connect_sse(
            http, "POST", "/v1/runs", json={"message": "Change Emily's phone and check court 1"},
            headers=staff) as source:
        for sse in source.iter_sse():
            if not sse.data:
                continue
            events.append((sse.event, json.loads(sse.data)))
            if sse.event == "task_started" and events[-1][1]["task_id"] == "t2" \
                    and not accepted:
                # t1's card is recorded (t2's model is slow): stop the run now
                wait_for(lambda: demo_db["pending_changes"].find_one({"tenant_id": "demo"}))
                run_id = events[0][1]["run_id"]
                answer = other.post(f"/v1/runs/{run_id}/cancel", headers=staff)
                assert answer.status_code == 202, answer.text
                accepted = answer.json()
    assert accepted["status"] == "cancelling" and accepted["run_id"] == events[0][1]["run_id"]
    names = [name for name, _ in events]
    assert names[-1] == "run_finished" and events[-1][1]["status"] == "cancelled", events
    assert "approval_required" not in names
    [answer] = [data for name, data in events if name == "answer"]
    assert answer["text"].startswith("Stopped at your request")
    [change] = demo_db["pending_changes"].find({"tenant_id": "demo"})
    assert change["status"] == "withdrawn" and answer["withdrawn"] == [change["_id"]]
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900788"
    late = stream(http, f"/v1/approvals/{change['_id']}", {"decision": "approve"},
                  bearer("manager", user="sam"))
    assert late.status == 409 and "withdrawn" in late.error["message"]
    threads = http.get("/v1/threads", headers=staff).json()
    assert [t["status"] for t in threads] == ["cancelled"]

    again = http.post(f"/v1/runs/{accepted['run_id']}/cancel", headers=staff)
    assert again.status_code == 409 and "already finished (cancelled)" in again.text
    assert http.post("/v1/runs/run_nope/cancel", headers=staff).status_code == 404
    stranger = http.post(f"/v1/runs/{accepted['run_id']}/cancel",
                         headers=bearer("staff", user="someone-else"))
    assert stranger.status_code == 404


def test_a_run_stopped_after_a_resume_leaves_its_thread_open(server: AppServer,
                                                              http: httpx.Client,
                                                              demo_db: Any) -> None:
    """Issue 19: a resumed run that is stopped must not leave its thread paused on the
    cards it was resumed from (a new message was refused as "waiting for 1 approval")."""
    server.write_script(phone_then_slow_read())
    staff = bearer("staff")
    paused = stream(http, "/v1/runs", {"message": "Change Emily Chen's phone to "
                                       "+44 7700 900555, then list her bookings"}, staff)
    assert paused.finished["status"] == "awaiting_approval", paused.events
    thread = paused.finished["thread_id"]
    [card] = paused.of("approval_required")[0]["changes"]
    events: list[tuple[str, dict[str, Any]]] = []
    with server.client() as other, connect_sse(
            http, "POST", f"/v1/approvals/{card['change_id']}", json={"decision": "approve"},
            headers=bearer("manager", user="sam")) as source:
        for sse in source.iter_sse():
            if not sse.data:
                continue
            events.append((sse.event, json.loads(sse.data)))
            if sse.event == "run_started":  # the resumed run: its model is slow; stop it
                stopped = other.post(f"/v1/runs/{events[-1][1]['run_id']}/cancel",
                                     headers=staff)
                assert stopped.status_code == 202, stopped.text
    assert events[-1] == ("run_finished", events[-1][1]), events
    assert events[-1][1]["status"] == "cancelled", events
    change = demo_db["pending_changes"].find_one({"_id": card["change_id"]})
    assert change["status"] == "applied" and change["resumed_at"] is not None
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900555"
    answers = [data for name, data in events if name == "answer"]
    assert len(answers) == 1, events  # one answer: the stop's, naming the decision before it
    [answer] = answers
    assert answer["text"].splitlines() == [
        "Stopped at your request before it finished.",
        f"Applied: {change['summary']}."], answer  # the decision before it stands, said so
    assert http.get(f"/v1/threads/{thread}", headers=staff).json()["status"] == "cancelled"

    server.write_script(opening_hours())
    again = stream(http, "/v1/runs", {"message": "When do you open?", "thread_id": thread},
                   staff)
    assert again.status == 200, again.error
    assert again.finished["status"] == "completed", again.events
    detail = http.get(f"/v1/threads/{thread}", headers=staff).json()
    assert detail["status"] == "completed" and detail["pending"] == []
    assert [m["role"] for m in detail["messages"]][-1] == "assistant", detail["messages"]
    assert demo_db["audit"].count_documents({"change_id": card["change_id"],
                                             "to": "applied"}) == 1
