"""`POST /ag-ui` of a live server, read with the AG-UI protocol package's own types: every
`data:` line parses as an AG-UI event; a read runs end to end (steps, tool calls for its
tasks, streamed text, a messages snapshot, a success outcome); a write finishes with an
interrupt outcome and an `on_interrupt` custom event, and resuming the interrupt approves
the card through the decision path, once."""

from __future__ import annotations

import json
from typing import Any

import httpx
from ag_ui.core import Event, EventType, ResumeEntry, RunAgentInput, UserMessage
from httpx_sse import connect_sse
from pydantic import TypeAdapter

from tests.e2e.app_process import AppServer
from tests.e2e.flows import DECIDER, applies, change_doc
from tests.e2e.http_client import bearer
from tests.e2e.scripts import EMILY, opening_hours, phone_update

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


def run_input(thread_id: str, run_id: str, text: str | None = None,
              resume: list[ResumeEntry] | None = None) -> dict[str, Any]:
    body = RunAgentInput(thread_id=thread_id, run_id=run_id, state={}, tools=[], context=[],
                         forwarded_props={}, resume=resume,
                         messages=[UserMessage(id=f"{run_id}-m", content=text)] if text else [])
    out: dict[str, Any] = json.loads(body.model_dump_json(by_alias=True))
    return out


def agui(http: httpx.Client, body: dict[str, Any],
         headers: dict[str, str]) -> tuple[int, list[Any]]:
    """POST the input; the status and the parsed AG-UI events (or the JSON error)."""
    with connect_sse(http, "POST", "/ag-ui", json=body, headers=headers) as source:
        if source.response.status_code != 200:
            source.response.read()
            return source.response.status_code, [source.response.json()]
        return 200, [EVENTS.validate_json(sse.data) for sse in source.iter_sse() if sse.data]


def kinds(events: list[Any]) -> list[str]:
    return [e.type.value for e in events]


def test_a_read_runs_end_to_end_as_agui_events(server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    status, events = agui(http, run_input("agui-read", "run-1", "When do you open?"),
                          bearer("staff"))
    assert status == 200, events
    assert events[0].type is EventType.RUN_STARTED and events[0].run_id == "run-1"
    assert events[0].thread_id == "agui-read"
    assert events[-1].type is EventType.RUN_FINISHED and events[-1].outcome.type == "success"
    order = kinds(events)
    for kind in ("STEP_STARTED", "STEP_FINISHED", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                 "TOOL_CALL_END", "TOOL_CALL_RESULT", "STATE_SNAPSHOT", "TEXT_MESSAGE_START",
                 "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "MESSAGES_SNAPSHOT"):
        assert kind in order, (kind, order)
    assert order.index("TOOL_CALL_START") < order.index("TOOL_CALL_RESULT")
    assert order.index("TEXT_MESSAGE_START") < order.index("TEXT_MESSAGE_END")
    [start] = [e for e in events if e.type is EventType.TOOL_CALL_START]
    assert start.tool_call_name == "knowledge.opening_hours"
    text = "".join(e.delta for e in events if e.type is EventType.TEXT_MESSAGE_CONTENT)
    assert text.strip() == "We open at 6am on weekdays."
    [snapshot] = [e for e in events if e.type is EventType.MESSAGES_SNAPSHOT]
    assert [(m.role, m.content) for m in snapshot.messages] == [
        ("user", "When do you open?"), ("assistant", "We open at 6am on weekdays.")]


def test_a_write_interrupts_and_a_resume_approves_it_once(server: AppServer,
                                                          http: httpx.Client,
                                                          demo_db: Any) -> None:
    server.write_script(phone_update("+44 7700 900999"))
    status, events = agui(http, run_input("agui-write", "run-1", "Update Emily's phone"),
                          bearer("staff"))
    assert status == 200, events
    finished = events[-1]
    assert finished.type is EventType.RUN_FINISHED and finished.outcome.type == "interrupt"
    [interrupt] = finished.outcome.interrupts
    assert interrupt.reason == "approval_required" and "Emily Chen" in interrupt.message
    [custom] = [e for e in events if e.type is EventType.CUSTOM and e.name == "on_interrupt"]
    [card] = custom.value
    assert card["id"] == interrupt.id
    assert card["value"][0]["action_request"]["action"] == "members.update"
    change_id = card["change_id"]

    resume = [ResumeEntry(interrupt_id=interrupt.id, status="resolved",
                          payload={"type": "accept", "args": None})]
    # thread ids are the tenant's own: another tenant's manager reaches a thread of theirs
    outsider = bearer("manager", tenant="acme")
    refused, _ = agui(http, run_input("agui-write", "run-x", resume=resume), outsider)
    assert refused == 409
    assert agui(http, run_input("agui-write", "run-v", "hello"), {})[0] == 403
    assert change_doc(demo_db, change_id)["status"] == "pending"
    manager = bearer("manager", user=DECIDER)
    status, resumed = agui(http, run_input("agui-write", "run-2", resume=resume), manager)
    assert status == 200, resumed
    assert resumed[0].type is EventType.RUN_STARTED and resumed[0].run_id == "run-2"
    assert resumed[-1].type is EventType.RUN_FINISHED
    assert resumed[-1].outcome.type == "success"
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900999"
    assert change_doc(demo_db, change_id)["decided_by"] == DECIDER
    again, error = agui(http, run_input("agui-write", "run-3", resume=resume), manager)
    assert again == 409, error
    assert applies(demo_db, change_id) == 1
