"""The Agent Protocol's thread routes over opsgraph's threads (`engine.thread_log`).

`POST /threads` makes an empty thread for the caller (its summary, as a run would);
search, get, state and history read what `/v1/threads` reads, under the same rule of who
may read a thread (`api.threads.may_read`): anyone else gets 404, another tenant's
threads are never even looked at.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import DESCENDING
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.agent_protocol.assistants import known_assistant
from opsgraph.api.agent_protocol.bodies import HistoryQuery, ThreadCreate, ThreadSearch, read_body
from opsgraph.api.agent_protocol.views import thread_doc, thread_state
from opsgraph.api.principals import caller
from opsgraph.api.threads import path_thread_id, readable
from opsgraph.engine.thread_log import THREADS, TTL_S, requester_of
from opsgraph.errors import BadInput, Conflict, Forbidden
from opsgraph.principal import Principal
from opsgraph.store.scope import Document, TenantScope

# the protocol's thread status → the opsgraph run statuses a thread summary may carry
_STATUSES = {"busy": ["running"], "interrupted": ["awaiting_approval"], "error": ["failed"],
             "idle": [None, "idle", "completed", "completed_with_errors", "cancelled"]}


def create_thread(principal: Principal, body: ThreadCreate) -> dict[str, Any]:
    """A new, empty thread owned by the caller (409 when the id is taken, unless
    `if_exists` is `do_nothing` and it is the caller's)."""
    if principal.is_visitor:
        raise Forbidden("a thread needs a signed-in caller: send a bearer token (or X-Api-Key)")
    scope = TenantScope.of(principal)
    thread_id = body.thread_id or str(uuid.uuid4())
    at = datetime.now(UTC)
    result = scope[THREADS].update_one(
        {"thread_id": thread_id},
        {"$setOnInsert": {"status": "idle", "created_at": at, "updated_at": at,
                          "expires_at": at + timedelta(seconds=TTL_S),
                          "requester": requester_of(scope, principal), "change_ids": [],
                          "has_changes": False, "metadata": body.metadata}},
        upsert=True)
    if result.upserted_id is None:
        existing = readable(principal, thread_id)  # 404 for a thread not the caller's
        if body.if_exists != "do_nothing":
            raise Conflict(f"thread {thread_id} already exists", thread_id=thread_id)
        return thread_doc(principal, existing)
    return thread_doc(principal, readable(principal, thread_id), with_values=False)


def _filter(principal: Principal, body: ThreadSearch) -> Document:
    mine: Document = {"requester.user_id": principal.user_id}
    visible = {"$or": [mine, {"has_changes": True}]} if principal.can_decide else mine
    clauses: list[Document] = [visible]
    if body.status is not None:
        clauses.append({"status": {"$in": _STATUSES[body.status]}})
    if body.ids:
        clauses.append({"thread_id": {"$in": body.ids}})
    for key, value in (body.metadata or {}).items():
        if key in ("graph_id", "assistant_id"):
            continue  # every thread runs the one assistant (views.GRAPH_ID); checked below
        clauses.append({f"metadata.{key}": value})
    return {"$and": clauses}


def search_threads(principal: Principal, body: ThreadSearch) -> list[dict[str, Any]]:
    """The threads the caller may read that match, newest first."""
    if principal.is_visitor:
        return []
    wanted = {k: v for k, v in (body.metadata or {}).items()
              if k in ("graph_id", "assistant_id")}
    if any(not known_assistant(str(v)) for v in wanted.values()):
        return []
    docs = list(TenantScope.of(principal)[THREADS].find(
        _filter(principal, body), sort=[("updated_at", DESCENDING), ("thread_id", 1)],
        limit=body.offset + body.limit))[body.offset:]
    threads = [thread_doc(principal, d) for d in docs]
    if body.status is not None:  # a paused thread whose cards were all decided is idle
        threads = [t for t in threads if t["status"] == body.status]
    return threads


def history(principal: Principal, thread_id: str, limit: int) -> list[dict[str, Any]]:
    """The thread's states, newest first (one per stored checkpoint)."""
    from opsgraph.engine.graph import get_graph  # heavy: langgraph (cold start)
    from opsgraph.engine.runner import graph_thread_id  # heavy: langgraph (cold start)

    readable(principal, thread_id)
    config: Any = {"configurable": {"thread_id": graph_thread_id(principal, thread_id)}}
    snaps = list(get_graph().get_state_history(config, limit=limit))
    if not snaps:
        return []
    latest = thread_state(principal, thread_id, snaps[0])
    return [latest, *(thread_state(principal, thread_id, s) | {"interrupts": [], "tasks": []}
                      for s in snaps[1:])]


async def threads_create(request: Request) -> Response:
    principal = await caller(request)
    body = read_body(await request.body(), ThreadCreate)
    return JSONResponse(await run_in_threadpool(create_thread, principal, body))


async def threads_search(request: Request) -> Response:
    principal = await caller(request)
    body = read_body(await request.body(), ThreadSearch)
    return JSONResponse(await run_in_threadpool(search_threads, principal, body))


def _one(principal: Principal, thread_id: str) -> dict[str, Any]:
    return thread_doc(principal, readable(principal, thread_id))


async def thread_get(request: Request) -> Response:
    principal = await caller(request)
    return JSONResponse(await run_in_threadpool(_one, principal, path_thread_id(request)))


def _state(principal: Principal, thread_id: str) -> dict[str, Any]:
    readable(principal, thread_id)
    return thread_state(principal, thread_id)


async def thread_get_state(request: Request) -> Response:
    principal = await caller(request)
    return JSONResponse(await run_in_threadpool(_state, principal, path_thread_id(request)))


async def thread_history(request: Request) -> Response:
    principal = await caller(request)
    thread_id = path_thread_id(request)
    if request.method == "POST":
        query = read_body(await request.body(), HistoryQuery)
    else:
        raw = request.query_params.get("limit", "10")
        if not raw.isdigit() or not 1 <= int(raw) <= 1000:
            raise BadInput(f"limit: {raw[:20]!r} is not a number from 1 to 1000")
        query = HistoryQuery(limit=int(raw))
    return JSONResponse(await run_in_threadpool(history, principal, thread_id, query.limit))

