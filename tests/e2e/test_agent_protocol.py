"""The Agent Protocol with the real langgraph-sdk client against a live server: threads,
runs streamed in the protocol's modes, interrupts as Agent Inbox renders them, resumes
decided through the same decision path as `POST /v1/approvals` (one apply, a second resume
refused), thread search by status, and tenants kept apart."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from langgraph_sdk.errors import (
    BadRequestError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
)

from opsgraph.auth import issue_token
from opsgraph.principal import Channel, Principal, Role
from tests.e2e.app_process import AppServer
from tests.e2e.flows import DECIDER, applies, change_doc
from tests.e2e.scripts import EMILY, opening_hours, phone_update

MODES = ["values", "messages-tuple", "custom"]
ASK = {"messages": [{"type": "human", "content": "Please see to it."}]}


def client_for(server: AppServer, role: str, tenant: str = "demo",
               user: str | None = None) -> SyncLangGraphClient:
    """langgraph-sdk's client, its token sent as `X-Api-Key` (as the SDK sends a key)."""
    principal = Principal(tenant, user or f"{role}-1", frozenset({Role(role)}),
                          Channel.API)
    return get_sync_client(url=server.url, api_key=issue_token(principal))


def streamed(client: SyncLangGraphClient, thread_id: str, **kwargs: Any) -> list[Any]:
    return list(client.runs.stream(thread_id, "opsgraph", stream_mode=MODES, **kwargs))


def of(parts: list[Any], event: str) -> list[Any]:
    return [p.data for p in parts if p.event == event]


def custom(parts: list[Any], name: str) -> list[dict[str, Any]]:
    return [p["data"] for p in of(parts, "custom") if p["event"] == name]


def test_a_read_streams_values_tokens_and_our_events(server: AppServer) -> None:
    staff = client_for(server, "staff")
    [assistant] = staff.assistants.search()
    assert assistant["assistant_id"] == "opsgraph"
    assert staff.assistants.get("opsgraph")["graph_id"] == "opsgraph"
    thread = staff.threads.create(metadata={"desk": "front"})
    assert thread["status"] == "idle"
    server.write_script(opening_hours())

    parts = streamed(staff, thread["thread_id"], input={"messages": [
        {"type": "human", "content": "When do you open?"}]})
    assert parts[0].event == "metadata"
    run_id = parts[0].data["run_id"]
    assert parts[0].data["thread_id"] == thread["thread_id"]
    tokens = of(parts, "messages")
    assert tokens and all(chunk["type"] == "AIMessageChunk" for chunk, _ in tokens)
    assert "".join(chunk["content"] for chunk, _ in tokens).strip() == (
        "We open at 6am on weekdays.")
    final = of(parts, "values")[-1]
    assert [(m["type"], m["content"]) for m in final["messages"]] == [
        ("human", "When do you open?"), ("ai", "We open at 6am on weekdays.")]
    assert "__interrupt__" not in final
    assert custom(parts, "run_finished")[0]["status"] == "completed"
    assert [t["agent"] for t in custom(parts, "task_finished")] == ["knowledge.opening_hours"]

    assert staff.runs.get(thread["thread_id"], run_id)["status"] == "success"
    state = staff.threads.get_state(thread["thread_id"])
    assert state["interrupts"] == [] and len(state["values"]["messages"]) == 2
    found = staff.threads.search(metadata={"desk": "front"})
    assert [t["thread_id"] for t in found] == [thread["thread_id"]]
    assert staff.threads.search(metadata={"desk": "back"}) == []
    joined = staff.runs.join(thread["thread_id"], run_id)
    assert joined["messages"][-1]["content"] == "We open at 6am on weekdays."
    replay = list(staff.runs.join_stream(thread["thread_id"], run_id,
                                         stream_mode=["custom"]))
    assert [p.data["event"] for p in replay if p.event == "custom"][-1] == "run_finished"


def _paused(server: AppServer, staff: SyncLangGraphClient) -> tuple[str, list[Any]]:
    thread = staff.threads.create()
    server.write_script(phone_update("+44 7700 900999"))
    parts = streamed(staff, thread["thread_id"], input=ASK)
    return thread["thread_id"], parts


def test_an_interrupt_is_a_human_interrupt_and_one_resume_applies_once(
        server: AppServer, demo_db: Any) -> None:
    staff = client_for(server, "staff")
    manager = client_for(server, "manager", user=DECIDER)
    thread_id, parts = _paused(server, staff)
    [interrupt] = of(parts, "values")[-1]["__interrupt__"]
    [request] = interrupt["value"]
    assert request["action_request"] == {"action": "members.update", "args": {
        "member": EMILY, "changes": {"phone": "+44 7700 900999"}}} or (
        request["action_request"]["action"] == "members.update")
    assert request["config"] == {"allow_accept": True, "allow_edit": True,
                                 "allow_respond": True, "allow_ignore": True}
    assert "Emily Chen" in request["description"]
    change_id = interrupt["change_id"]

    state = manager.threads.get_state(thread_id)
    assert [i["id"] for i in state["interrupts"]] == [interrupt["id"]]
    assert manager.threads.get(thread_id)["status"] == "interrupted"
    assert [t["thread_id"] for t in manager.threads.search(status="interrupted")] == [
        thread_id]
    outsider = client_for(server, "manager", tenant="acme")
    assert outsider.threads.search(status="interrupted") == []
    with pytest.raises(NotFoundError):
        outsider.threads.get_state(thread_id)
    with pytest.raises(PermissionDeniedError):  # staff may not decide
        streamed(staff, thread_id, command={"resume": [{"type": "accept", "args": None}]})

    resumed = streamed(manager, thread_id, command={"resume": [{"type": "accept",
                                                                "args": None}]})
    assert custom(resumed, "run_finished")[-1]["status"] == "completed"
    assert "__interrupt__" not in of(resumed, "values")[-1]
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900999"
    assert change_doc(demo_db, change_id)["status"] == "applied"
    assert change_doc(demo_db, change_id)["decided_by"] == DECIDER
    with pytest.raises(ConflictError):
        streamed(manager, thread_id, command={"resume": [{"type": "accept", "args": None}]})
    with pytest.raises(ConflictError):
        streamed(manager, thread_id, command={"resume": {interrupt["id"]: {
            "type": "accept", "args": None}}})
    assert applies(demo_db, change_id) == 1
    assert manager.threads.get(thread_id)["status"] == "idle"
    assert manager.threads.search(status="interrupted") == []


def test_edit_respond_and_ignore_are_edit_revise_and_reject(server: AppServer,
                                                            demo_db: Any) -> None:
    staff = client_for(server, "staff")
    manager = client_for(server, "manager", user=DECIDER)
    server.write_script(phone_update("+44 7700 900111", "+44 7700 900222"))
    thread = staff.threads.create()
    parts = streamed(staff, thread["thread_id"], input=ASK)
    [first] = of(parts, "values")[-1]["__interrupt__"]

    revised = streamed(manager, thread["thread_id"], command={"resume": {first["id"]: [
        {"type": "response", "args": "Use her new number ending 222"}]}})
    assert change_doc(demo_db, first["change_id"])["status"] == "superseded"
    [second] = of(revised, "values")[-1]["__interrupt__"]
    assert second["change_id"] != first["change_id"]

    edited_args = {"member": EMILY, "changes": {"phone": "+44 7700 900333"}}
    streamed(manager, thread["thread_id"], command={"resume": [{"type": "edit", "args": {
        "action": "members.update", "args": edited_args}}]})
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900333"
    assert change_doc(demo_db, second["change_id"])["decision"] == "edit"
    assert applies(demo_db, second["change_id"]) == 1


def test_ignore_rejects_and_a_raw_command_is_refused(server: AppServer,
                                                     demo_db: Any) -> None:
    staff = client_for(server, "staff")
    manager = client_for(server, "manager", user=DECIDER)
    thread_id, parts = _paused(server, staff)
    [interrupt] = of(parts, "values")[-1]["__interrupt__"]
    for command in ({"goto": "execute"}, {"update": {"request": "x"}},
                    {"resume": "yes"}, {"resume": [{"type": "accept"}, {"type": "accept"}]}):
        with pytest.raises(BadRequestError):
            streamed(manager, thread_id, command=command)
    with pytest.raises(ConflictError):  # a new message while it waits
        streamed(staff, thread_id, input=ASK)
    assert change_doc(demo_db, interrupt["change_id"])["status"] == "pending"
    streamed(manager, thread_id, command={"resume": [{"type": "ignore", "args": None}]})
    assert change_doc(demo_db, interrupt["change_id"])["status"] == "rejected"
    assert applies(demo_db, interrupt["change_id"]) == 0


def test_wait_answers_with_the_values_and_visitors_get_no_threads(server: AppServer) -> None:
    staff = client_for(server, "staff")
    server.write_script(opening_hours())
    thread = staff.threads.create()
    values = staff.runs.wait(thread["thread_id"], "opsgraph", input={"messages": [
        {"role": "user", "content": "When do you open?"}]})
    assert values["messages"][-1]["content"] == "We open at 6am on weekdays."
    with server.client() as http:
        assert http.post("/threads", json={}).status_code == 403
        assert http.post("/threads/search", json={}).json() == []
        assert http.get(f"/threads/{thread['thread_id']}/state").status_code == 404
        info = http.get("/info").json()
        assert info["flags"]["assistants"] is True
    with pytest.raises(httpx.HTTPStatusError) as refused:  # `wait` raises httpx's own error
        staff.runs.wait(thread["thread_id"], "someone-else", input=ASK)
    assert refused.value.response.status_code == 404


@pytest.mark.parametrize("server", [{"OPSGRAPH_CORS_ORIGINS": "http://localhost:3000"}],
                         indirect=True)
def test_browser_clients_of_the_named_origins_may_call(server: AppServer) -> None:
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "x-api-key,content-type"}
    with server.client() as http:
        allowed = http.options("/threads/search",
                               headers={"Origin": "http://localhost:3000", **preflight})
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "x-api-key" in allowed.headers["access-control-allow-headers"].lower()
        other = http.options("/threads/search",
                             headers={"Origin": "http://evil.example", **preflight})
        assert "access-control-allow-origin" not in other.headers
        found = http.post("/threads/search", json={},
                          headers={"Origin": "http://localhost:3000"})
        assert found.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "Content-Location" in found.headers["access-control-expose-headers"]


def test_no_origin_is_allowed_unless_named(server: AppServer) -> None:
    with server.client() as http:
        found = http.post("/threads/search", json={}, headers={"Origin": "http://localhost:3000"})
        assert "access-control-allow-origin" not in found.headers


def test_a_background_run_is_followed_by_get_join_and_history(server: AppServer) -> None:
    staff = client_for(server, "staff")
    server.write_script(opening_hours())
    thread = staff.threads.create()
    created: list[Any] = []
    run = staff.runs.create(thread["thread_id"], "opsgraph", input={"messages": [
        {"type": "human", "content": "When do you open?"}]},
        on_run_created=created.append)
    assert run["thread_id"] == thread["thread_id"] and run["assistant_id"] == "opsgraph"
    assert created and created[0]["run_id"] == run["run_id"]  # from Content-Location
    values = staff.runs.join(thread["thread_id"], run["run_id"])
    assert values["messages"][-1]["content"] == "We open at 6am on weekdays."
    assert staff.runs.get(thread["thread_id"], run["run_id"])["status"] == "success"
    history = staff.threads.get_history(thread["thread_id"])
    assert history and history[0]["values"]["messages"][-1]["type"] == "ai"
    with pytest.raises(NotFoundError):
        staff.runs.get(thread["thread_id"], "run_nope")
    with pytest.raises(NotFoundError):  # another user's thread
        client_for(server, "staff", user="staff-2").threads.get_history(thread["thread_id"])


def two_phone_updates() -> dict[str, Any]:
    """Two writers in parallel: Emily Chen's and Jane Smith's phones (two cards at once)."""
    from tests.e2e.scripts import call, task

    def turns(member: str, phone: str) -> list[dict[str, Any]]:
        return [call("members_update", member=member, changes={"phone": phone}),
                {"content": f"I proposed {member}'s phone."}]

    return {"plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone"),
                               task("t2", "members", "update", "Change Jane Smith's phone")]},
            "turns": {"t1": turns("Emily Chen", "+44 7700 900111"),
                      "t2": turns("Jane Smith", "+44 7700 900222")},
            "synthesis": "Both phone changes wait for approval."}


def test_parallel_cards_are_resumed_by_interrupt_id_in_any_order(server: AppServer,
                                                                demo_db: Any) -> None:
    staff = client_for(server, "staff")
    manager = client_for(server, "manager", user=DECIDER)
    server.write_script(two_phone_updates())
    thread = staff.threads.create()
    streamed(staff, thread["thread_id"], input=ASK)
    pending = manager.threads.get_state(thread["thread_id"])["interrupts"]
    assert len(pending) == 2
    by_member = {i["value"][0]["action_request"]["args"]["member"]: i for i in pending}
    jane = next(i for m, i in by_member.items() if m != EMILY)
    emily = by_member[EMILY]

    streamed(manager, thread["thread_id"], command={"resume": {jane["id"]: {
        "type": "accept", "args": None}}})
    assert change_doc(demo_db, jane["change_id"])["status"] == "applied"
    [left] = manager.threads.get_state(thread["thread_id"])["interrupts"]
    assert left["change_id"] == emily["change_id"]
    assert manager.threads.get(thread["thread_id"])["status"] == "interrupted"
    with pytest.raises(ConflictError):  # the decided one is no longer waited on
        streamed(manager, thread["thread_id"], command={"resume": {jane["id"]: {
            "type": "accept", "args": None}}})

    streamed(manager, thread["thread_id"], command={"resume": [{"type": "ignore",
                                                                "args": None}]})
    assert change_doc(demo_db, emily["change_id"])["status"] == "rejected"
    assert applies(demo_db, jane["change_id"]) == 1
    assert applies(demo_db, emily["change_id"]) == 0
    assert manager.threads.get_state(thread["thread_id"])["interrupts"] == []


def test_a_run_in_flight_is_cancelled_from_the_client(server: AppServer, demo_db: Any) -> None:
    from tests.e2e.flows import wait_for
    from tests.e2e.test_cancel_run import phone_and_slow_read

    staff = client_for(server, "staff")
    thread = staff.threads.create()
    server.write_script(phone_and_slow_read())
    run = staff.runs.create(thread["thread_id"], "opsgraph", input={"messages": [
        {"type": "human", "content": "Change Emily's phone and check court 1"}]})
    # the phone card is recorded while the slow read's model call is still going on
    wait_for(lambda: demo_db["pending_changes"].find_one({"tenant_id": "demo"}))
    staff.runs.cancel(thread["thread_id"], run["run_id"], wait=True)
    assert staff.runs.get(thread["thread_id"], run["run_id"])["status"] == "interrupted"
    [change] = demo_db["pending_changes"].find({"tenant_id": "demo"})
    assert change["status"] == "withdrawn"
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900788"
    with pytest.raises(ConflictError):  # finished: nothing to stop
        staff.runs.cancel(thread["thread_id"], run["run_id"])
    with pytest.raises(NotFoundError):  # another staff member's run is not theirs to see
        client_for(server, "staff", user="other").runs.cancel(thread["thread_id"],
                                                               run["run_id"])
