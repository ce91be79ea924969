"""Threads every party can follow: the list, one thread, and its events over SSE.

Who may read a thread: its requester, and the tenant's managers and admins once it carries
a change (pending or decided). Anyone else gets the same 404 whether it exists or not; a
visitor (no user of their own) reads none.

`GET /v1/threads/{id}/events` replays the stored events after `Last-Event-ID` (or the
`after` query), then follows the log until the thread's latest run has finished (its
summary is no longer `running`, or no run holds the thread), polling every
`POLL_S`; it ends then, or after `MAX_FOLLOW_S` (the client reconnects with the last id).
A run that died without finishing (its lease lapsed) is settled as failed when a reader
finds it (`thread_log.settle_lapsed`): the list shows `failed`, the stream ends with the
`run_finished {status: failed}` stored for it, and the thread can be continued.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.numbers import parse_number
from opsgraph.api.principals import caller
from opsgraph.api.route_doc import TENANT, ApiRoute, Param
from opsgraph.approvals.pending import COLLECTION, PendingChange
from opsgraph.engine.thread_ids import THREAD_ID_PATTERN, checked_thread_id
from opsgraph.engine.thread_log import events_after, run_active, settle_lapsed, summaries, summary
from opsgraph.errors import Forbidden, NotFound
from opsgraph.operations.records import to_json
from opsgraph.principal import Principal
from opsgraph.status_words import run_label, task_label
from opsgraph.store.scope import Document, TenantScope

POLL_S = 0.2
MAX_FOLLOW_S = 600.0
PING_S = 15


def path_thread_id(request: Request) -> str:
    """The route's `{thread_id}`, checked."""
    return checked_thread_id(str(request.path_params["thread_id"]))


def may_read(principal: Principal, thread: Document) -> bool:
    """The requester; managers and admins of the tenant for a thread carrying changes."""
    if principal.is_visitor:
        return False
    mine = (thread.get("requester") or {}).get("user_id") == principal.user_id
    return mine or (principal.can_decide and bool(thread.get("has_changes")))


def readable(principal: Principal, thread_id: str) -> Document:
    """The thread's summary, or the 404 anyone who may not read it gets."""
    scope = TenantScope.of(principal)
    thread = summary(scope, thread_id)
    if thread is None or not may_read(principal, thread):
        raise NotFound(f"thread {thread_id} not found", thread_id=thread_id)
    return settle_lapsed(scope, [thread])[0]


def require_thread(principal: Principal, thread_id: str) -> None:
    """NotFound unless the caller may continue the thread: it exists in their tenant (its
    summary, which a run leaves even when it died before its first checkpoint, or a
    checkpoint) and they asked for it. A new thread is made by a run without `thread_id`
    (its id comes back in `run_started`). A visitor without a session of its own is
    every visitor at once, so it continues no thread (Forbidden, before any lookup)."""
    from opsgraph.engine.runner import thread_state  # heavy: langgraph (cold start)

    if principal.is_anonymous:
        raise Forbidden("thread_id: a visitor continues a conversation only from the session "
                        "that started it (send the X-Opsgraph-Visitor header of that "
                        "session); omit thread_id to start a new one")
    missing = NotFound(f"thread {thread_id} not found (omit thread_id to start a new thread)",
                       thread_id=thread_id)
    thread = summary(TenantScope.of(principal), thread_id)
    if thread is not None:
        if (thread.get("requester") or {}).get("user_id") != principal.user_id:
            raise missing
        return
    _, values = thread_state(principal, thread_id)
    if not values:
        raise missing


def _iso(value: Any) -> Any:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return value


def pending_by_thread(scope: TenantScope, thread_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The pending cards of these threads (a retried request's card on each of its runs)."""
    docs = scope[COLLECTION].find(
        {"status": "pending", "$or": [{"thread_id": {"$in": thread_ids}},
                                      {"earlier_runs.thread_id": {"$in": thread_ids}}]},
        sort=[("created_at", 1), ("_id", 1)])
    cards: dict[str, list[dict[str, Any]]] = {t: [] for t in thread_ids}
    for doc in docs:
        change = PendingChange.model_validate(doc)
        for thread_id in change.run_threads():
            if thread_id in cards:
                cards[thread_id].append(change.card())
    return cards


def _row(thread: Document, pending: int) -> dict[str, Any]:
    requester = thread.get("requester") or {}
    return {"thread_id": thread["thread_id"], "title": thread.get("title", ""),
            "status": thread.get("status"),
            "status_label": thread.get("status_label")
            or (run_label(str(thread["status"])) if thread.get("status") else None),
            "updated_at": _iso(thread.get("updated_at")),
            "pending": pending,
            "requester": {"user_id": requester.get("user_id"),
                          "name": requester.get("name") or requester.get("user_id")}}


def list_for(principal: Principal) -> list[dict[str, Any]]:
    """The caller's threads, and for managers and admins those carrying changes."""
    if principal.is_visitor:
        return []
    scope = TenantScope.of(principal)
    threads = settle_lapsed(scope, summaries(scope, principal.user_id,
                                             with_changes=principal.can_decide))
    pending = pending_by_thread(scope, [t["thread_id"] for t in threads])
    return [_row(t, len(pending[t["thread_id"]])) for t in threads]


def _result(result: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"agent": result.agent, "status": result.status,
                            "status_label": task_label(result.status, result.calls)}
    said = result.content or result.error
    if said:
        body["summary"] = said
    body["tools"] = [{"name": c.get("tool"), "args": c.get("args"), "result": c.get("result")}
                     for c in result.calls]
    return body


def detail_for(principal: Principal, thread_id: str) -> dict[str, Any]:
    """The conversation, the last plan, task results, sources and pending changes."""
    from opsgraph.engine.runner import thread_state  # heavy: langgraph (cold start)

    thread = readable(principal, thread_id)
    _, state = thread_state(principal, thread_id)
    scope = TenantScope.of(principal)
    body = _row(thread, 0)
    pending = pending_by_thread(scope, [thread_id])[thread_id]
    body.update(pending=pending, messages=[], plan=[], results={}, sources=[])
    if state is not None:
        body["messages"] = [{"role": t["role"], "content": t["content"]}
                            for t in state.history]
        body["plan"] = [{"id": t.id, "agent": t.agent, "instruction": t.instruction,
                         "depends_on": list(t.depends_on)} for t in state.plan]
        body["results"] = {tid: _result(r) for tid, r in state.results.items()}
        body["sources"] = state.answer.sources if state.answer else []
    out: dict[str, Any] = to_json(body)
    return out


def after_event_id(request: Request) -> int:
    """The last event id a follower has: `Last-Event-ID`, else `?after=`, else 0."""
    header = request.headers.get("last-event-id")
    if header:
        return parse_number(header, "Last-Event-ID", "an event id of this thread")
    return parse_number(request.query_params.get("after") or "0", "after",
                        "an event id of this thread")


async def list_threads(request: Request) -> Response:
    principal = await caller(request)
    return JSONResponse(await run_in_threadpool(list_for, principal))


async def get_thread(request: Request) -> Response:
    principal = await caller(request)
    thread_id = path_thread_id(request)
    return JSONResponse(await run_in_threadpool(detail_for, principal, thread_id))


async def thread_events(request: Request) -> Response:
    from sse_starlette.sse import EventSourceResponse  # heavy: sse_starlette (cold start)

    principal = await caller(request)
    thread_id = path_thread_id(request)
    after = after_event_id(request)
    await run_in_threadpool(readable, principal, thread_id)
    scope = TenantScope.of(principal)

    async def body() -> AsyncIterator[dict[str, str]]:
        last = after
        until = time.monotonic() + MAX_FOLLOW_S
        while True:
            active = await run_in_threadpool(run_active, scope, thread_id)
            batch = await run_in_threadpool(events_after, scope, thread_id, last)
            for _, event in batch:  # stored in the client's form (thread_log.client_safe)
                yield event.to_sse()
                last = int(event.id)
            if batch and len(batch) == 500:
                continue  # more stored than one read: read on before waiting
            if not active or time.monotonic() > until:
                return  # read after the run was seen finished: nothing of it is left
            await asyncio.sleep(POLL_S)

    return EventSourceResponse(body(), ping=PING_S)


THREAD = Param("thread_id", "path", {"type": "string", "pattern": THREAD_ID_PATTERN},
               "The thread, as `run_started` or `GET /v1/threads` named it.")
EVENT_ID = {"type": "string", "pattern": "^[0-9]{1,19}$"}
ROUTES = (
    ApiRoute("GET", "/v1/threads", list_threads, "The caller's threads (and, for managers "
             "and admins, those carrying changes), newest first", "visitor",
             response=("Threads",), params=(TENANT,)),
    ApiRoute("GET", "/v1/threads/{thread_id}", get_thread, "One thread: conversation, last "
             "plan, task results, sources, pending changes", "visitor",
             response=("ThreadDetail",), errors=(400,), params=(THREAD, TENANT)),
    ApiRoute("GET", "/v1/threads/{thread_id}/events", thread_events, "A thread's stored "
             "events after `Last-Event-ID`, then live until its current run finishes",
             "visitor", body="sse", errors=(400,), params=(
                 THREAD, TENANT,
                 Param("Last-Event-ID", "header", EVENT_ID,
                       "The id of the last event you have: the stream starts after it."),
                 Param("after", "query", EVENT_ID,
                       "As `Last-Event-ID`, for clients that cannot set headers."))),
)
