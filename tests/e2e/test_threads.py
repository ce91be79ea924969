"""Threads every party can follow, over HTTP against a real server process: the stored
events (ids monotonic across runs, replay from Last-Event-ID without loss or repeat), the
202 decision whose resumed run the requester follows, the list and the detail, and who
may read a thread."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.flows import propose
from tests.e2e.http_client import bearer, follow, stream
from tests.e2e.scripts import EMILY, opening_hours, phone_update


def lee() -> dict[str, str]:
    """The staff member who asks (a token signed with the test's secret)."""
    return bearer("staff", user="lee")


def ids(events: list[tuple[str, str, dict[str, Any]]]) -> list[int]:
    return [int(event_id) for event_id, _, _ in events]


def test_the_requester_follows_the_resumed_run_after_a_202_decision(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    # the resumed run's last turn takes a while: the requester's stream follows it live
    run, card = propose(server, http, phone_update("+44 7700 900999", final_delay_ms=800),
                        user="lee")
    thread_id = run.finished["thread_id"]
    assert card["requested_by"] == {"user_id": "lee", "name": "lee"}
    assert card["request"] == "Please see to it." and card["thread_id"] == thread_id
    assert card["status"] == "pending" and card["created_at"]

    decided = http.post(f"/v1/approvals/{card['change_id']}", json={"decision": "approve"},
                        headers=bearer("manager", user="sam"))
    assert decided.status_code == 202, decided.text
    assert decided.json() == {"change_id": card["change_id"], "status": "applied",
                              "status_label": "Applied", "thread_id": thread_id}

    seen = follow(http, thread_id, lee(), last_event_id=run.events[-1][0])
    assert seen.status == 200, seen.error
    assert seen.names[0] == "run_started" and seen.finished["status"] == "completed"
    assert "approved by sam" in seen.of("answer")[0]["text"]  # the answer, in code's words
    assert ids(seen.events)[0] == ids(run.events)[-1] + 1  # nothing missed, nothing again
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900999"

    # a second manager, too late: 409 naming who decided
    again = http.post(f"/v1/approvals/{card['change_id']}", json={"decision": "approve"},
                      headers=bearer("manager", user="noor"))
    assert again.status_code == 409, again.text
    assert "already decided by sam" in again.json()["error"]["message"]


def test_ids_grow_across_runs_and_a_reconnect_gets_exactly_the_missing_events(
        server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    first = stream(http, "/v1/runs", {"message": "When do you open?"}, lee())
    thread_id = first.finished["thread_id"]
    second = stream(http, "/v1/runs", {"message": "And on Sundays?", "thread_id": thread_id},
                    lee())
    assert second.finished["status"] == "completed"
    both = ids(first.events) + ids(second.events)
    assert both == list(range(1, len(both) + 1))  # 1, 2, 3, ... across the two runs

    stored = follow(http, thread_id, lee())  # no Last-Event-ID: from the start
    assert stored.events == first.events + second.events  # the live ids are the stored ids
    for cut in (1, len(first.events), len(both) - 1, len(both)):
        rest = follow(http, thread_id, lee(), last_event_id=str(cut))
        assert rest.events == stored.events[cut:]
    by_query = http.get(f"/v1/threads/{thread_id}/events?after=3", headers=lee())
    assert by_query.status_code == 200
    sent = [line[4:].strip() for line in by_query.text.splitlines() if line.startswith("id:")]
    assert sent == [event_id for event_id, _, _ in stored.events[3:]]
    bad = http.get(f"/v1/threads/{thread_id}/events", headers={**lee(), "Last-Event-ID": "x"})
    assert bad.status_code == 400 and "Last-Event-ID" in bad.json()["error"]["message"]


def test_the_list_and_the_detail_show_the_conversation(
        server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    run = stream(http, "/v1/runs", {"message": "When   do you\nopen?"}, lee())
    thread_id = run.finished["thread_id"]

    [row] = http.get("/v1/threads", headers=lee()).json()
    assert row["thread_id"] == thread_id and row["title"] == "When do you open?"
    assert row["status"] == "completed" and row["pending"] == 0 and row["updated_at"]
    assert row["requester"] == {"user_id": "lee", "name": "lee"}

    detail = http.get(f"/v1/threads/{thread_id}", headers=lee()).json()
    assert detail["messages"][0] == {"role": "user", "content": "When   do you\nopen?"}
    assert detail["messages"][-1]["role"] == "assistant"
    [step] = detail["plan"]
    assert step["id"] == "t1" and step["agent"] and step["depends_on"] == []
    result = detail["results"]["t1"]
    assert result["status"] == "completed"
    names = [t["name"] for t in result["tools"]]
    assert names[0] == "knowledge_search"  # the pre-search code made before the agent's turn
    assert names[-2:] == ["knowledge_search", "knowledge_read"]  # then the agent's own calls
    assert detail["pending"] == [] and detail["status"] == "completed"


def test_who_may_read_a_thread(server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    plain = stream(http, "/v1/runs", {"message": "When do you open?"}, lee())
    plain_id = plain.finished["thread_id"]
    run, card = propose(server, http, phone_update("+44 7700 900999"), user="lee")
    thread_id = run.finished["thread_id"]

    others = {"another staff member": bearer("staff", user="kim"),
              "a member": bearer("member", user="ana"), "a visitor": {}}
    for who, headers in others.items():
        for path in (f"/v1/threads/{thread_id}", f"/v1/threads/{thread_id}/events"):
            got = http.get(path, headers=headers)
            assert got.status_code == 404, (who, path, got.text)
    unknown = http.get("/v1/threads/th_nope", headers=bearer("staff", user="kim"))
    assert unknown.json()["error"]["message"] == \
        http.get(f"/v1/threads/{thread_id}", headers=bearer("staff", user="kim")).json()[
            "error"]["message"].replace(thread_id, "th_nope")
    assert http.get("/v1/threads", headers=bearer("staff", user="kim")).json() == []
    assert http.get("/v1/threads", headers={}).json() == []

    sam = bearer("manager", user="sam")  # a manager: the thread with a change, not the other
    assert [t["thread_id"] for t in http.get("/v1/threads", headers=sam).json()] == [thread_id]
    detail = http.get(f"/v1/threads/{thread_id}", headers=sam).json()
    assert [c["change_id"] for c in detail["pending"]] == [card["change_id"]]
    assert http.get(f"/v1/threads/{plain_id}", headers=sam).status_code == 404
    [mine_first, *_] = http.get("/v1/threads", headers=lee()).json()
    assert mine_first["thread_id"] == thread_id and mine_first["pending"] == 1
    assert mine_first["status"] == "awaiting_approval"


def test_a_stored_internal_error_carries_no_internal_words(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    server.script.write_bytes(b"\xff\xfe plan: [")  # a model file the server cannot read
    # a request the planner reads (two asks; a single lookup is planned by code, and its
    # first model call is its agent's, inside a task, whose failure fails the task, not the
    # run)
    run = stream(http, "/v1/runs",
                 {"message": "Find Jane Smith's phone number and her bookings this week"}, lee())
    assert run.finished["status"] == "failed"
    thread_id = run.finished["thread_id"]
    stored = [doc["data"] for doc in demo_db["thread_events"].find(
        {"tenant_id": "demo", "thread_id": thread_id, "event": "error"})]
    replayed = follow(http, thread_id, lee()).of("error")
    assert stored and replayed
    for shown in (json.dumps(stored), json.dumps(replayed)):
        assert "codec" not in shown and "0xff" not in shown and str(server.script) not in shown
    assert "server log" in replayed[0]["message"]


def test_stored_events_expire_with_the_thread(server: AppServer, demo_db: Any) -> None:
    indexes = demo_db["thread_events"].index_information().values()
    assert any(ix.get("expireAfterSeconds") == 0 and ix["key"] == [("expires_at", 1)]
               for ix in indexes)
    unique = [ix for ix in indexes if ix.get("unique")]
    assert any(ix["key"] == [("tenant_id", 1), ("thread_id", 1), ("seq", 1)] for ix in unique)
