"""Entry points of a run: start one from a message, or resume one after a decision.

Both are plain generators of `Event`s (the CLI prints them, the API streams them as SSE).
A run ends with `run_finished` whose status is `completed`, `completed_with_errors` (it
answered, but a task failed), `awaiting_approval`, `cancelled` (stopped on request,
`engine.cancel`) or `failed`; nothing holds a connection
open while a manager thinks.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt

from opsgraph.approvals.dependents import withdraw_thread
from opsgraph.approvals.pending import get_change, note_request
from opsgraph.approvals.resume import ResumeValue
from opsgraph.engine.cancel import CANCELLED_WORDS, RunCancelled
from opsgraph.engine.code_plans import prefetch_ranking
from opsgraph.engine.context import RunContext
from opsgraph.engine.events import Event
from opsgraph.engine.graph import get_graph
from opsgraph.engine.graph_threads import RunTasks
from opsgraph.engine.harness_budget import seconds_budget
from opsgraph.engine.harness_node import load_version, new_harness_state
from opsgraph.engine.memory import Turn, as_turns
from opsgraph.engine.run_outcome import RunTally, report_run
from opsgraph.engine.state import RunState, new_message_state
from opsgraph.engine.stream_pump import Pumped
from opsgraph.engine.thread_ids import checked_thread_id
from opsgraph.engine.thread_log import EventIds, RunRecord, ThreadLog, spent_before
from opsgraph.engine.threads import LeasedSaver, ThreadLease, thread_lease
from opsgraph.errors import BadInput, Conflict, NotFound, OpsgraphError
from opsgraph.harness import modules, versions
from opsgraph.harness.spec import HarnessDoc
from opsgraph.models.overrides import get_overrides
from opsgraph.models.spec import parse_model_spec
from opsgraph.principal import Principal, parse_plan
from opsgraph.status_words import change_label, run_label
from opsgraph.store.scope import TenantScope
from opsgraph.telemetry.context import bound
from opsgraph.telemetry.traces import span

log = logging.getLogger(__name__)
RECURSION_LIMIT = 25

BeforeFinish = Callable[[], Iterable[tuple[str, dict[str, Any]]]]
"""Events a caller adds to a run just before its `run_finished` (name, data each)."""


class NotWaiting(Conflict):
    """A decision arrived for a run that no longer waits for it."""


def graph_thread_id(principal: Principal, thread_id: str) -> str:
    """Checkpoints are keyed per tenant: no tenant can reach another's thread."""
    return f"{principal.tenant_id}:{thread_id}"


def make_context(principal: Principal, thread_id: str, run_model: str | None,
                 request: str = "") -> RunContext:
    """Who, which tenant settings, which models: read once per run."""
    scope = TenantScope.of(principal)
    tenant = scope.require_tenant()
    return RunContext(principal=principal, scope=scope,
                      plan=parse_plan(str(tenant.get("plan", "basic"))),
                      capability_mode=str(tenant.get("capability_mode", "observe")),
                      thread_id=thread_id, run_model=run_model,
                      model_overrides=get_overrides(scope), request=request,
                      timezone=str(tenant.get("timezone") or "UTC"),
                      venue={k: tenant[k] for k in ("currency", "country") if k in tenant},
                      tenant_view={"name": str(tenant.get("name") or scope.tenant_id),
                                   "timezone": str(tenant.get("timezone") or "UTC")},
                      off_topic_reply=str(tenant.get("off_topic_reply") or ""),
                      modules=tuple(tenant.get(modules.SETTING) or ()))


def _config(principal: Principal, thread_id: str,
            configurable: Mapping[str, Any] | None = None) -> RunnableConfig:
    """The graph's config for the thread, with `configurable`'s entries added."""
    return {"configurable": {"thread_id": graph_thread_id(principal, thread_id),
                             **(configurable or {})},
            "recursion_limit": RECURSION_LIMIT, "max_concurrency": 32}


def _cards(interrupts: tuple[Interrupt, ...]) -> list[dict[str, Any]]:
    return [i.value["card"] for i in interrupts if isinstance(i.value, dict) and "card" in i.value]


def _start_graph(ctx: RunContext, graph: CompiledStateGraph[Any, Any, Any, Any],
                 graph_input: Any, tasks: RunTasks, config: RunnableConfig
                 ) -> Pumped[tuple[str, dict[str, Any]]]:
    """The graph running from `graph_input` (a new message's state, or the `Command` that
    resumes it) in its pump thread: it plans while the runner stores the run's start (a
    thread update and the `run_started` event, ~5 ms on the plan event's path); what it
    emits meanwhile waits in the pump, so the stored order is kept."""
    # durability="exit": one checkpoint commit when the run ends or pauses (measured: 17
    # commits → a handful per 8-task run). A process killed mid-run loses that run, and a
    # retry is safe: recording proposals is idempotent and nothing applies before a decision.
    def parts() -> Iterator[tuple[str, dict[str, Any]]]:
        with tasks:
            yield from cast(Iterator[tuple[str, dict[str, Any]]], graph.stream(
                graph_input, config, context=ctx, stream_mode=["custom", "updates"],
                durability="exit"))

    pumped = Pumped(parts())
    pumped.start()
    return pumped


def _run(ctx: RunContext, graph: CompiledStateGraph[Any, Any, Any, Any], graph_input: Any,
         ids: EventIds, record: RunRecord, started: dict[str, Any], *,
         requester_name: str | None = None, before_finish: BeforeFinish | None = None,
         decided: Sequence[str] = ()) -> Iterator[Event]:
    """The run's events: the graph starts from `graph_input` and plans while the run's start
    is stored (the thread's record, then `run_started` with `started`); `_drive` stores the
    rest. However the consumer stops, the graph stops with it."""
    tasks = RunTasks()
    config = _config(ctx.principal, ctx.thread_id, tasks.configurable())
    parts = _start_graph(ctx, graph, graph_input, tasks, config)
    try:
        ids.log.open(ids.run_id, ctx.principal, ctx.request, requester_name=requester_name)
        yield ids.make("run_started", {"thread_id": ctx.thread_id, "run_id": ids.run_id,
                                       **started})
        yield from _drive(ctx, graph, config, parts, ids, record, before_finish, decided)
    finally:
        parts.close()


def _drive(ctx: RunContext, graph: CompiledStateGraph[Any, Any, Any, Any],
           config: RunnableConfig, parts: Pumped[tuple[str, dict[str, Any]]], ids: EventIds,
           record: RunRecord, before_finish: BeforeFinish | None = None,
           decided: Sequence[str] = ()) -> Iterator[Event]:
    """Take the started graph's chunks (a resumed run's `decided` changes), storing every
    event as it is made (`config`: the graph's, which a stopped run's state update uses)."""
    cards: list[dict[str, Any]] = []
    results: dict[str, Any] = {}
    status = "completed"
    tally, error = RunTally(), None
    try:
        try:
            # the graph runs on while its events are stored; those that came together are
            # stored in one write (engine.stream_pump)
            for batch in parts:
                emitted: list[tuple[str, dict[str, Any]]] = []
                for mode, chunk in batch:
                    if mode == "custom":
                        record.saw(chunk["event"], chunk["data"])
                        tally.saw(chunk["event"], chunk["data"])
                        emitted.append((chunk["event"], chunk["data"]))
                    elif "__interrupt__" in chunk:
                        cards = _cards(chunk["__interrupt__"])
                    else:
                        record.updated(chunk)
                        results.update(_results_in(chunk))
                yield from ids.make_many(emitted)
        except RunCancelled:
            # a resumed run's checkpoint still holds the cards it was resumed from: the
            # stopped run clears the graph's pending tasks, or the thread would wait for
            # those cards for ever and refuse every new message
            graph.update_state(config, None, as_node=END)
            status = "cancelled"
            yield ids.make("answer", cancelled_answer(ctx, decided))
        else:
            if cards:
                status = "awaiting_approval"
                note_request(ctx.scope, [c["change_id"] for c in cards], ctx.request)
                cards = [{**c, "request": c.get("request") or ctx.request} for c in cards]
                yield ids.make("approval_required", {"thread_id": ctx.thread_id,
                                                     "changes": cards})
            elif tally.broken_tasks:
                status = "completed_with_errors"  # the answer came, but a task broke down
    except OpsgraphError as exc:
        status, error = "failed", (exc.code, exc.message)
        yield ids.make("error", {"code": exc.code, "message": exc.message})
    except Exception as exc:  # a fault, not bad input: logged in full, reported briefly
        log.exception("run on thread %s failed", ctx.thread_id)
        status, error = "failed", ("internal", str(exc) or type(exc).__name__)
        yield ids.make("error", {"code": "internal", "message": str(exc) or type(exc).__name__})
    for name, data in before_finish() if before_finish is not None else ():
        yield ids.make(name, data)
    record.finish(status, ctx.usage.calls, ctx.started_at, ctx.spent_calls)
    tally.cards = len(cards)
    report_run(ctx, status, tally, error)
    label = run_label(status, [(str(r.get("status")), list(r.get("calls") or []))
                               for r in results.values()])
    yield ids.make("run_finished", {"thread_id": ctx.thread_id, "status": status,
                                    "status_label": label, "usage": ctx.usage.to_json()})


def _results_in(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """The task results a graph update writes (`{node: {results: {...}}}`)."""
    found: dict[str, Any] = {}
    for writes in chunk.values():
        if isinstance(writes, Mapping) and isinstance(writes.get("results"), Mapping):
            found.update(writes["results"])
    return found


def cancelled_answer(ctx: RunContext, decided: Sequence[str] = ()) -> dict[str, Any]:
    """A stopped run's answer: the changes decided before it (a resumed run's: an applied
    one stays applied) and its undecided changes, withdrawn, in words."""
    withdrawn = withdraw_thread(ctx.scope, ctx.thread_id, ctx.principal.user_id,
                                "its run was stopped")
    lines = [CANCELLED_WORDS]
    for cid in [*decided, *withdrawn]:
        change = get_change(ctx.scope, cid)
        lines.append(f"{change_label(change.status)}: {change.summary}.")
    return {"text": "\n".join(lines), "sources": [], "withdrawn": withdrawn}


@contextlib.contextmanager
def run_ids(principal: Principal, thread_id: str, run_id: str) -> Iterator[None]:
    """The run's ids on every log line and span inside, under a span of the run."""
    with bound(tenant_id=principal.tenant_id, user_id=principal.user_id,
               thread_id=thread_id, run_id=run_id), span("run"):
        yield


def run_graph(lease: ThreadLease | None, new_thread: str | None = None
              ) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The graph as a run holding `lease` sees it: its checkpoint written only while the
    lease holds, and its latest checkpoint read once for the run's check of the thread and
    the graph's start (`LeasedSaver`). `new_thread`: the graph's id (`graph_thread_id`) of
    a thread whose id this run just made, which has no checkpoint, so the graph's start
    reads none."""
    graph = get_graph()
    if lease is None:
        return graph
    assert isinstance(graph.checkpointer, BaseCheckpointSaver)
    saver = LeasedSaver(graph.checkpointer, lease)
    if new_thread is not None:
        saver.has_none(new_thread)
    return graph.copy(update={"checkpointer": saver})


def thread_state(principal: Principal, thread_id: str,
                 graph: CompiledStateGraph[Any, Any, Any, Any] | None = None
                 ) -> tuple[tuple[Interrupt, ...], RunState | None]:
    """The interrupts a thread is paused on (empty when it is not) and its state (None for
    a thread with no checkpoint); `StateUnreadable` when this version cannot read it."""
    state = (graph or get_graph()).get_state(_config(principal, thread_id))
    values = RunState(**state.values) if state.values else None
    return tuple(state.interrupts), values


def _check_thread(principal: Principal, thread_id: str,
                  graph: CompiledStateGraph[Any, Any, Any, Any]) -> bool:
    """Only the thread's requester continues it; a paused thread waits for its decisions.
    True when the thread has a checkpoint (a run of it ended or paused before)."""
    waiting, values = thread_state(principal, thread_id, graph)
    owner = values.requester if values else None
    if owner and owner.user_id != principal.user_id:
        raise NotFound(f"thread {thread_id} not found", thread_id=thread_id)
    if waiting:
        raise Conflict(f"thread {thread_id} is waiting for {len(waiting)} approval "
                       "decision(s); decide them before sending another message",
                       thread_id=thread_id)
    return values is not None


def stream_run(principal: Principal, message: str, *, thread_id: str | None = None,
               model: str | None = None,
               history: Sequence[Mapping[str, Any]] | None = None,
               harness: tuple[int, HarnessDoc] | None = None) -> Iterator[Event]:
    """Run one message on a thread (new or continuing).

    `history` seeds a new thread with earlier turns (`{role, content}`; the eval suite's
    follow-up cases); a continuing thread has its own. `harness` runs that version instead
    of the tenant's active one (the harness test runner). The version is chosen here, once:
    the run, and any resumption of it, executes that version.
    """
    if not message or not message.strip():
        raise BadInput("message: must not be empty")
    if thread_id is not None:
        checked_thread_id(thread_id)
    if model is not None:
        parse_model_spec(model)
    earlier = as_turns(history or [])
    new_thread = thread_id is None
    thread_id = thread_id or "th_" + uuid.uuid4().hex[:16]
    text = message.strip()
    prefetch_ranking(text)
    ctx = make_context(principal, thread_id, model, text)
    ctx.read_ahead()
    ids = EventIds(ThreadLog(ctx.scope, thread_id))
    ctx.run_id = ids.run_id
    ctx.harness = harness if harness is not None else versions.active(ctx.scope)
    with run_ids(principal, thread_id, ids.run_id), thread_lease(ctx.scope, thread_id) as lease:
        ctx.lease = lease
        graph = run_graph(lease, graph_thread_id(principal, thread_id) if new_thread else None)
        if new_thread or not _check_thread(principal, thread_id, graph):
            ids.log.expect_empty()  # a new id, or no run of it ended: most likely no event

        start = new_harness_state(ctx, text, ctx.harness[0])
        turns = [*(earlier if new_thread else []), Turn(role="user", content=text)]
        record = RunRecord(ctx.scope, thread_id, ids.run_id, principal, start)
        yield from _run(ctx, graph, new_message_state(text, principal, model, turns, start), ids,
                        record, {"message": text},
                        requester_name=ctx.caller_name() or principal.user_id)


def stream_resume(principal: Principal, thread_id: str, decisions: dict[str, ResumeValue], *,
                  model: str | None = None,
                  before_finish: BeforeFinish | None = None) -> Iterator[Event]:
    """Resume a paused thread with decisions keyed by change id.

    `principal` is whoever decided; the run goes on with the permissions of the person who
    started it. Each change id is matched to the interrupt that carries it; undecided cards
    pause again. `before_finish` adds events before the run's `run_finished`, while it
    still holds the thread.
    """
    scope = TenantScope.of(principal)
    ids = EventIds(ThreadLog(scope, thread_id))
    with run_ids(principal, thread_id, ids.run_id), thread_lease(scope, thread_id) as lease:
        graph = run_graph(lease)
        interrupts, values = thread_state(principal, thread_id, graph)
        # a resumed run keeps its requester and the model it started with
        requester = values.requester.principal() if values and values.requester else principal
        ctx = make_context(requester, thread_id, model or (values.run_model if values else None),
                           values.request if values else "")
        ctx.lease = lease
        ctx.run_id = ids.run_id
        started = values.harness if values else None
        if started is not None:  # the version it started with, however many came since
            ctx.spent_calls, ctx.spent_s = spent_before(scope, started.run_key)
            if started.version and started.fallback is None:  # its calls' deadline
                ctx.seconds_budget = seconds_budget(started, load_version(ctx, started.version))
        by_change = {i.value.get("change_id"): i.id for i in interrupts
                     if isinstance(i.value, dict)}
        resume = {by_change[cid]: value.model_dump() for cid, value in decisions.items()
                  if cid in by_change}
        if not resume:
            raise NotWaiting(f"thread {thread_id} is not waiting for "
                             f"{', '.join(decisions)}: its run was already resumed",
                             thread_id=thread_id)
        record = RunRecord(scope, thread_id, ids.run_id, requester, started, resumed=True)
        yield from _run(ctx, graph, Command(resume=resume), ids, record,
                        {"resumed": sorted(decisions)}, before_finish=before_finish,
                        decided=[cid for cid in decisions if cid in by_change])
