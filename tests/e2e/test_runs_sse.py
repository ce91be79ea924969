"""`POST /v1/runs` over a real socket: the SSE stream of docs/reference.md, and a proposal that
pauses the run and lets the request finish."""

from __future__ import annotations

from typing import Any

import httpx

from opsgraph.engine.events import EVENT_NAMES
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import Streamed, bearer, stream
from tests.e2e.scripts import EMILY, opening_hours, phone_update


def assert_well_formed(run: Streamed) -> None:
    """Every event named, with an id unique in the stream; run_started first, run_finished
    last."""
    assert run.status == 200, run.error
    ids = [event_id for event_id, _, _ in run.events]
    assert all(ids) and len(set(ids)) == len(ids), ids
    assert set(run.names) <= EVENT_NAMES, run.names
    assert run.names[0] == "run_started" and run.names.count("run_started") == 1
    assert run.names[-1] == "run_finished" and run.names.count("run_finished") == 1
    started, finished = run.events[0][2], run.finished
    assert started["thread_id"] == finished["thread_id"] and started["run_id"]


def before(run: Streamed, first: str, then: str) -> bool:
    """Every `first` event comes before any `then` event."""
    last_first = len(run.names) - 1 - run.names[::-1].index(first)
    return last_first < run.names.index(then)


def test_a_run_streams_its_events_in_order(server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    run = stream(http, "/v1/runs", {"message": "When do you open?"}, bearer("staff"))
    assert_well_formed(run)
    assert run.finished["status"] == "completed"
    for first, then in [("run_started", "plan"), ("plan", "task_started"),
                        ("task_started", "task_finished"), ("task_finished", "token"),
                        ("token", "answer"), ("answer", "run_finished")]:
        assert before(run, first, then), (first, then, run.names)
    [plan] = run.of("plan")
    # several agents serve knowledge.search: the ranker picks the opening-hours one
    assert [(t["id"], t["agent"]) for t in plan["tasks"]] == [("t1", "knowledge.opening_hours")]
    assert [{k: t[k] for k in ("task_id", "agent", "status")} for t in run.of("task_finished")
            ] == [{"task_id": "t1", "agent": "knowledge.opening_hours", "status": "completed"}]
    [answer] = run.of("answer")
    assert answer["text"] == "We open at 6am on weekdays."
    assert "".join(t["text"] for t in run.of("token")) == answer["text"]
    # what was read, by code (the pre-search's sections) and by the agent (the document)
    assert {s["kind"] for s in answer["sources"]} <= {"document", "section"}
    assert "opening-hours#_top" in {s["id"] for s in answer["sources"]}

    # The same thread again: a new run whose event ids do not repeat the first run's.
    thread = run.finished["thread_id"]
    again = stream(http, "/v1/runs", {"message": "And on Sunday?", "thread_id": thread},
                   bearer("staff"))
    assert_well_formed(again)
    assert again.finished == {**again.finished, "thread_id": thread, "status": "completed"}
    first_ids = {event_id for event_id, _, _ in run.events}
    assert first_ids.isdisjoint(event_id for event_id, _, _ in again.events)


def test_a_proposal_pauses_the_run_and_the_request_completes(server: AppServer,
                                                            http: httpx.Client,
                                                            demo_db: Any) -> None:
    server.write_script(phone_update("+44 7700 900999"))
    run = stream(http, "/v1/runs", {"message": "Change Emily Chen's phone"}, bearer("staff"))
    # Reaching this line means the server closed the stream: nothing is held open.
    assert_well_formed(run)
    assert run.finished["status"] == "awaiting_approval"
    assert before(run, "task_started", "approval_required")
    assert run.names[-2] == "approval_required"
    [required] = run.of("approval_required")
    # the paused run says, in code's words, which card waits (no model claims it)
    [paused] = run.of("answer")
    assert paused["text"] == (f"Waiting for approval: {required['changes'][0]['summary']} "
                              f"(card {required['changes'][0]['change_id']}).")
    assert required["thread_id"] == run.finished["thread_id"]
    [card] = required["changes"]
    assert card["change_id"].startswith("chg_") and card["operation"] == "members.update"
    assert card["old"] == {"phone": "+44 7700 900788"}
    assert card["new"] == {"phone": "+44 7700 900999"}
    assert "Emily Chen" in card["summary"] and card["expires_at"]

    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900788"
    assert demo_db["thread_leases"].count_documents({}) == 0  # the run let go of its thread
    change = demo_db["pending_changes"].find_one({"_id": card["change_id"]})
    assert change["status"] == "pending" and change["thread_id"] == required["thread_id"]

    # The same request from a visitor: the task is denied before any model call.
    visitor = stream(http, "/v1/runs", {"message": "Change Emily Chen's phone"})
    assert_well_formed(visitor)
    assert visitor.finished["status"] == "completed"
    assert [{k: t[k] for k in ("task_id", "agent", "status")}
            for t in visitor.of("task_finished")] == [{"task_id": "t1", "agent": "members.update",
                                            "status": "denied"}]
    assert "approval_required" not in visitor.names and "task_started" not in visitor.names
    assert demo_db["pending_changes"].count_documents({}) == 1
