"""The Agent Protocol's run routes: the same runs `/v1/runs` and `/v1/approvals` start.

A run on a thread takes the last human message of `input.messages` and runs it with
`engine.runner.stream_run` under the same checks as `POST /v1/runs` (the thread is the
caller's, message cap, budget, run slots, demo scripts); a `command.resume` decides the
thread's cards through `inbox.decide_all`. Either run is driven by its own worker
(`api.sse.RunStream`) whatever the client does, its events stored in the thread's log, and
the response translates them (`stream.ProtocolStream`). `/stream` on a run replays its
stored events and follows it live; `/join` and `/wait` answer once it has finished.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.agent_protocol.assistants import require_assistant
from opsgraph.api.agent_protocol.bodies import RunCreate, read_body
from opsgraph.api.agent_protocol.inbox import decide_all, decisions_of
from opsgraph.api.agent_protocol.stream import ProtocolStream, sse_parts
from opsgraph.api.agent_protocol.views import (
    GRAPH_ID,
    RUN_STATUS,
    graph_snapshot,
    interrupts_of,
    iso,
    pending_cards,
    thread_state,
)
from opsgraph.api.limits import metered
from opsgraph.api.numbers import parse_number
from opsgraph.api.principals import caller
from opsgraph.api.request_ids import current_request_id
from opsgraph.api.runs import start_run
from opsgraph.api.threads import after_event_id, path_thread_id, readable
from opsgraph.engine.events import Event
from opsgraph.engine.thread_log import (
    EVENTS,
    RUNS,
    THREADS,
    events_after,
    run_active,
    summary,
    title_of,
)
from opsgraph.errors import BadInput, NotFound
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

POLL_S = 0.2
MAX_FOLLOW_S = 600.0
PING_S = 15


def message_of(body: RunCreate) -> str:
    """The text of the last human message of `input.messages` (LangChain or OpenAI form)."""
    messages = (body.input or {}).get("messages")
    if isinstance(messages, dict | str):
        messages = [messages]
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, str):
            text = message
        elif isinstance(message, dict) and message.get("type", message.get("role")) in (
                "human", "user"):
            content = message.get("content")
            text = content if isinstance(content, str) else " ".join(
                str(b.get("text", "")) for b in content or []
                if isinstance(b, dict) and b.get("type") == "text")
        else:
            continue
        if text.strip():
            return text  # its length is start_run's to check, as every entry's
    raise BadInput("input.messages: needs a human message with text "
                   "({\"type\": \"human\", \"content\": \"...\"})")


def _refuse_raw(body: RunCreate) -> None:
    command = body.command
    if command is not None and (command.goto is not None or command.update is not None):
        raise BadInput("command: only `resume` with HumanResponses is accepted; a goto or a "
                       "state update would bypass the approval of pending changes")
    if command is not None and command.resume is None:
        raise BadInput("command.resume: the HumanResponses that decide the pending cards")


def start_events(principal: Principal, thread_id: str, body: RunCreate,
                 ) -> tuple[Iterator[Event], ProtocolStream]:
    """The run a body asks for (a message, or decisions), with its translator."""
    require_assistant(body.assistant_id)
    readable(principal, thread_id)
    _refuse_raw(body)
    if body.command is not None:
        if body.input:
            raise BadInput("input and command.resume: send one of them")
        snap = graph_snapshot(principal, thread_id)
        pending = interrupts_of(tuple(snap.interrupts),
                                pending_cards(TenantScope.of(principal), thread_id))
        decisions = decisions_of(body.command.resume, pending)
        events = metered(decide_all(principal, decisions), principal, slot=False)
        return events, ProtocolStream(principal, thread_id, body.modes())
    message = message_of(body)
    events = start_run(principal, message, thread_id, thread_checked=True)
    return events, ProtocolStream(principal, thread_id, body.modes(), message=message)


def _title(principal: Principal, thread_id: str, message: str) -> None:
    """A thread made by `POST /threads` takes its first message as its title."""
    TenantScope.of(principal)[THREADS].update_one(
        {"thread_id": thread_id, "title": {"$exists": False}},
        {"$set": {"title": title_of(message)}})


async def _started(request: Request) -> tuple[Any, Any, ProtocolStream, str, Principal]:
    from opsgraph.api.sse import prime  # heavy: sse_starlette (cold start)

    principal = await caller(request)
    thread_id = path_thread_id(request)
    body = read_body(await request.body(), RunCreate)
    events, translator = await run_in_threadpool(start_events, principal, thread_id, body)
    first, rest = await prime(events)
    if translator.message is not None:
        await run_in_threadpool(_title, principal, thread_id, translator.message)
    return first, rest, translator, thread_id, principal


def _location(thread_id: str, run_id: str) -> dict[str, str]:
    return {"Content-Location": f"/threads/{thread_id}/runs/{run_id}"}


async def runs_stream(request: Request) -> Response:
    """`POST /threads/{id}/runs/stream`: the run as protocol parts, as it goes."""
    from sse_starlette.sse import EventSourceResponse  # heavy: sse_starlette (cold start)

    from opsgraph.api.sse import DONE, for_client  # heavy: sse_starlette (cold start)

    first, rest, translator, thread_id, _ = await _started(request)
    request_id = current_request_id()

    async def body() -> AsyncIterator[dict[str, str]]:
        item = first
        while item is not DONE:
            if isinstance(item, BaseException):
                raise item
            event = for_client(item, request_id)
            for part in sse_parts(event, await run_in_threadpool(translator.parts, event)):
                yield part
            item = await run_in_threadpool(rest.next_item)

    run_id = str(first.data.get("run_id"))
    return EventSourceResponse(body(), ping=PING_S, headers=_location(thread_id, run_id))


async def runs_wait(request: Request) -> Response:
    """`POST /threads/{id}/runs/wait`: the thread's values once the run has finished (with
    `__interrupt__` when it paused, `__error__` when it failed)."""
    from opsgraph.api.sse import DONE  # heavy: sse_starlette (cold start)

    first, rest, translator, thread_id, _ = await _started(request)
    values: Any = None
    error: Any = None
    item = first
    while item is not DONE:
        if isinstance(item, BaseException):
            raise item
        for name, data in await run_in_threadpool(translator.parts, item):
            values = data if name == "values" else values
            error = data if name == "error" else error
        item = await run_in_threadpool(rest.next_item)
    out = dict(values or {})
    if error is not None:
        out["__error__"] = error
    return JSONResponse(out, headers=_location(thread_id, str(first.data.get("run_id"))))


async def runs_create(request: Request) -> Response:
    """`POST /threads/{id}/runs`: the run goes on by itself; its `Run` now."""
    first, _, _, thread_id, principal = await _started(request)
    run_id = str(first.data.get("run_id"))
    run = await run_in_threadpool(run_doc, principal, thread_id, run_id)
    return JSONResponse(run, headers=_location(thread_id, run_id))


def run_doc(principal: Principal, thread_id: str, run_id: str) -> dict[str, Any]:
    """One `Run`: its status from its record (finished) or the thread (in flight)."""
    readable(principal, thread_id)
    scope = TenantScope.of(principal)
    first = scope[EVENTS].find_one({"thread_id": thread_id, "run_id": run_id},
                                   sort=[("seq", 1)])
    if first is None:
        raise NotFound(f"run {run_id} not found on thread {thread_id}", run_id=run_id)
    record = scope[RUNS].find_one({"thread_id": thread_id, "run_id": run_id})
    if record is not None:
        status, updated = RUN_STATUS.get(str(record.get("status")), "error"), record.get(
            "finished_at")
    else:
        thread = summary(scope, thread_id) or {}
        going = thread.get("run_id") == run_id and run_active(scope, thread_id)
        status, updated = ("running" if going else "error"), thread.get("updated_at")
    return {"run_id": run_id, "thread_id": thread_id, "assistant_id": GRAPH_ID,
            "created_at": iso(first.get("at")), "updated_at": iso(updated or first.get("at")),
            "status": status, "metadata": {}, "multitask_strategy": "reject", "kwargs": {}}


async def run_get(request: Request) -> Response:
    principal = await caller(request)
    thread_id = path_thread_id(request)
    return JSONResponse(await run_in_threadpool(
        run_doc, principal, thread_id, str(request.path_params["run_id"])))


def _finished(principal: Principal, thread_id: str, run_id: str) -> bool:
    return bool(run_doc(principal, thread_id, run_id)["status"] != "running")


async def _until_finished(principal: Principal, thread_id: str, run_id: str) -> None:
    """Wait (polling the store: the run may be another process's) until the run has
    finished, for at most `MAX_FOLLOW_S`."""
    until = time.monotonic() + MAX_FOLLOW_S
    while not await run_in_threadpool(_finished, principal, thread_id, run_id):
        if time.monotonic() > until:
            return
        await asyncio.sleep(POLL_S)


def cancel(principal: Principal, thread_id: str, run_id: str) -> dict[str, Any]:
    """Stop a run in flight, as `POST /v1/runs/{run_id}/cancel` does (the run ends
    `cancelled` at its next step, its undecided cards withdrawn); the run as it is now."""
    from opsgraph.engine.cancel import request_cancel  # heavy: langgraph (cold start)

    run_doc(principal, thread_id, run_id)  # 404 for a run not on this thread, or another's
    request_cancel(principal, run_id)  # 409 when it already finished
    return run_doc(principal, thread_id, run_id)


async def run_cancel(request: Request) -> Response:
    """`POST /threads/{id}/runs/{run_id}/cancel[?wait=1]`: 202 and the run; with `wait`,
    200 once it has stopped. Only `action=interrupt` (stop where it is) is served."""
    principal = await caller(request)
    thread_id = path_thread_id(request)
    run_id = str(request.path_params["run_id"])
    action = request.query_params.get("action", "interrupt")
    if action != "interrupt":
        raise BadInput(f"action: {action!r} is not served; 'interrupt' stops the run where "
                       "it is (nothing it proposed applies without a decision)",
                       field="action")
    wait = parse_number(request.query_params.get("wait", "0"), "wait", "0 or 1", 1) == 1
    run = await run_in_threadpool(cancel, principal, thread_id, run_id)
    if not wait:
        return JSONResponse(run, status_code=202)
    await _until_finished(principal, thread_id, run_id)
    return JSONResponse(await run_in_threadpool(run_doc, principal, thread_id, run_id))


async def run_join(request: Request) -> Response:
    """`GET /threads/{id}/runs/{run_id}/join`: the thread's values once the run finished."""
    principal = await caller(request)
    thread_id = path_thread_id(request)
    run_id = str(request.path_params["run_id"])
    await _until_finished(principal, thread_id, run_id)
    state = await run_in_threadpool(thread_state, principal, thread_id)
    values = dict(state["values"])
    if state["interrupts"]:
        values["__interrupt__"] = state["interrupts"]
    return JSONResponse(values)


def _run_events(principal: Principal, thread_id: str, run_id: str,
                after: int) -> tuple[list[Event], int, bool]:
    """The run's stored events after `after`, the last number read, and whether to read
    on (the run is going on, or more is stored than one read)."""
    going = not _finished(principal, thread_id, run_id)  # before the read: nothing is missed
    batch = events_after(TenantScope.of(principal), thread_id, after)
    last = int(batch[-1][1].id) if batch else after
    return [e for r, e in batch if r == run_id], last, going or len(batch) == 500


async def run_stream(request: Request) -> Response:
    """`GET /threads/{id}/runs/{run_id}/stream`: the run's stored events (after
    `Last-Event-ID`) as protocol parts, then live until it finishes."""
    from sse_starlette.sse import EventSourceResponse  # heavy: sse_starlette (cold start)

    principal = await caller(request)
    thread_id = path_thread_id(request)
    run_id = str(request.path_params["run_id"])
    after = after_event_id(request)
    await run_in_threadpool(run_doc, principal, thread_id, run_id)  # 404 for another's
    modes = request.query_params.getlist("stream_mode") or ["values"]
    translator = ProtocolStream(principal, thread_id, frozenset(
        "messages-tuple" if m == "messages" else m for m in modes))
    translator.run_id = run_id

    async def body() -> AsyncIterator[dict[str, str]]:
        last, until = after, time.monotonic() + MAX_FOLLOW_S
        while True:
            batch, last, going = await run_in_threadpool(_run_events, principal, thread_id,
                                                         run_id, last)
            for event in batch:
                for part in sse_parts(event, await run_in_threadpool(translator.parts, event)):
                    yield part
            if not going or time.monotonic() > until:
                return
            await asyncio.sleep(POLL_S)

    return EventSourceResponse(body(), ping=PING_S)
