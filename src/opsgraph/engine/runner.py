"""Entry points of a run: start one from a message, or resume one after a decision.

Both are plain generators of `Event`s (the CLI prints them, the API streams them as SSE).
A run ends with `run_finished` whose status is `completed`, `completed_with_errors` (it
answered, but a task failed), `awaiting_approval` or `failed`; nothing holds a connection
open while a manager thinks.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Interrupt

from opsgraph.engine.context import RunContext
from opsgraph.engine.events import Event, EventIds
from opsgraph.engine.threads import thread_lease
from opsgraph.errors import BadInput, Conflict, NotFound, OpsgraphError
from opsgraph.principal import Principal, parse_channel, parse_plan, parse_roles
from opsgraph.store.scope import TenantScope

log = logging.getLogger(__name__)
RECURSION_LIMIT = 25


class NotWaiting(Conflict):
    """A decision arrived for a run that no longer waits for it."""


def graph_thread_id(principal: Principal, thread_id: str) -> str:
    """Checkpoints are keyed per tenant: no tenant can reach another's thread."""
    return f"{principal.tenant_id}:{thread_id}"


def make_context(principal: Principal, thread_id: str, run_model: str | None,
                 request: str = "") -> RunContext:
    """Who, which tenant settings, which models: read once per run."""
    from opsgraph.models.overrides import get_overrides

    scope = TenantScope.of(principal)
    tenant = scope.require_tenant()
    return RunContext(principal=principal, scope=scope,
                      plan=parse_plan(str(tenant.get("plan", "basic"))),
                      capability_mode=str(tenant.get("capability_mode", "observe")),
                      thread_id=thread_id, run_model=run_model,
                      model_overrides=get_overrides(scope), request=request,
                      timezone=str(tenant.get("timezone") or "UTC"))


def _config(principal: Principal, thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": graph_thread_id(principal, thread_id)},
            "recursion_limit": RECURSION_LIMIT, "max_concurrency": 32}


def _cards(interrupts: tuple[Interrupt, ...]) -> list[dict[str, Any]]:
    return [i.value["card"] for i in interrupts if isinstance(i.value, dict) and "card" in i.value]


def _drive(ctx: RunContext, graph_input: Any, ids: EventIds) -> Iterator[Event]:
    from opsgraph.engine.graph import get_graph

    graph = get_graph()
    config = _config(ctx.principal, ctx.thread_id)
    cards: list[dict[str, Any]] = []
    status = "completed"
    try:
        # durability="exit": one checkpoint commit when the run ends or pauses (measured: 17
        # commits → a handful per 8-task run). A process killed mid-run loses that run, and
        # a retry is safe: recording proposals is idempotent and nothing applies before a
        # decision.
        parts = graph.stream(graph_input, config, context=ctx,
                             stream_mode=["custom", "updates"], durability="exit")
        failed = False
        for mode, chunk in cast(Iterator[tuple[str, dict[str, Any]]], parts):
            if mode == "custom":
                failed = failed or (chunk["event"] == "task_finished"
                                    and chunk["data"].get("status") == "failed")
                yield ids.make(chunk["event"], chunk["data"])
            elif "__interrupt__" in chunk:
                cards = _cards(chunk["__interrupt__"])
        if cards:
            status = "awaiting_approval"
            yield ids.make("approval_required", {"thread_id": ctx.thread_id, "changes": cards})
        elif failed:
            status = "completed_with_errors"  # the answer came, but a task broke down
    except OpsgraphError as exc:
        status = "failed"
        yield ids.make("error", {"code": exc.code, "message": exc.message})
    except Exception as exc:  # a fault, not bad input: logged in full, reported briefly
        log.exception("run on thread %s failed", ctx.thread_id)
        status = "failed"
        yield ids.make("error", {"code": "internal", "message": str(exc) or type(exc).__name__})
    yield ids.make("run_finished", {"thread_id": ctx.thread_id, "status": status,
                                    "usage": ctx.usage.to_json()})


THREAD_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def principal_record(principal: Principal) -> dict[str, Any]:
    """The requester, as the thread's state keeps it."""
    return {"tenant_id": principal.tenant_id, "user_id": principal.user_id,
            "roles": sorted(r.value for r in principal.roles),
            "channel": principal.channel.value}


def requester_of(values: dict[str, Any], fallback: Principal) -> Principal:
    """Who started the thread's run: a resumed run keeps the requester's permissions."""
    record = values.get("requester")
    if not record:
        return fallback
    return Principal(record["tenant_id"], record["user_id"], parse_roles(record["roles"]),
                     parse_channel(record["channel"]))


def thread_state(principal: Principal, thread_id: str) -> tuple[tuple[Interrupt, ...],
                                                                  dict[str, Any]]:
    """The interrupts a thread is paused on (empty when it is not) and its state values."""
    from opsgraph.engine.graph import get_graph

    state = get_graph().get_state(_config(principal, thread_id))
    return tuple(state.interrupts), dict(state.values)


def _check_thread(principal: Principal, thread_id: str) -> None:
    """Only the thread's requester continues it; a paused thread waits for its decisions."""
    waiting, values = thread_state(principal, thread_id)
    owner = values.get("requester")
    if owner and owner["user_id"] != principal.user_id:
        raise NotFound(f"thread {thread_id} not found", thread_id=thread_id)
    if waiting:
        raise Conflict(f"thread {thread_id} is waiting for {len(waiting)} approval "
                       "decision(s); decide them before sending another message",
                       thread_id=thread_id)


def stream_run(principal: Principal, message: str, *, thread_id: str | None = None,
               model: str | None = None,
               history: list[dict[str, Any]] | None = None) -> Iterator[Event]:
    """Run one message on a thread (new or continuing).

    `history` seeds a new thread with earlier turns (`{role, content}`; the eval suite's
    follow-up cases); a continuing thread has its own.
    """
    if not message or not message.strip():
        raise BadInput("message: must not be empty")
    if thread_id is not None and not THREAD_ID.fullmatch(thread_id):
        raise BadInput("thread_id: 1 to 128 letters, digits, '_', '.' or '-'")
    if model is not None:
        from opsgraph.models.spec import parse_model_spec

        parse_model_spec(model)
    new_thread = thread_id is None
    thread_id = thread_id or "th_" + uuid.uuid4().hex[:16]
    ctx = make_context(principal, thread_id, model, message.strip())
    ids = EventIds()
    with thread_lease(ctx.scope, thread_id):
        if not new_thread:
            _check_thread(principal, thread_id)
        yield ids.make("run_started", {"thread_id": thread_id, "run_id": ids.run_id})
        text = message.strip()
        graph_input: dict[str, Any] = {
            "request": text, "plan": [], "results": {}, "answer": None, "run_model": model,
            "requester": principal_record(principal),
            "history": [*(history if new_thread and history else []),
                        {"role": "user", "content": text}]}
        yield from _drive(ctx, graph_input, ids)


def stream_resume(principal: Principal, thread_id: str, decisions: dict[str, Any], *,
                  model: str | None = None) -> Iterator[Event]:
    """Resume a paused thread with decisions keyed by change id.

    `principal` is whoever decided; the run goes on with the permissions of the person who
    started it. Each change id is matched to the interrupt that carries it; undecided cards
    pause again.
    """
    ids = EventIds()
    with thread_lease(TenantScope.of(principal), thread_id):
        interrupts, values = thread_state(principal, thread_id)
        # a resumed run keeps its requester and the model it started with
        ctx = make_context(requester_of(values, principal), thread_id,
                           model or values.get("run_model"), str(values.get("request", "")))
        by_change = {i.value.get("change_id"): i.id for i in interrupts
                     if isinstance(i.value, dict)}
        resume = {by_change[cid]: value for cid, value in decisions.items() if cid in by_change}
        if not resume:
            raise NotWaiting(f"thread {thread_id} is not waiting for "
                             f"{', '.join(decisions)}: its run was already resumed",
                             thread_id=thread_id)
        yield ids.make("run_started", {"thread_id": thread_id, "run_id": ids.run_id})
        yield from _drive(ctx, Command(resume=resume), ids)
