"""The execute node: every sub-task as a `@task` future, started the moment it can run.

All tasks are called up front, in topological order, so the call order — which is how
LangGraph recognises a task on resume — is the same on every run. Each task waits inside
itself for the futures of its dependencies; writers also wait for the previous writer,
so proposals are made one at a time. Interrupts from every writer are collected and
raised together: every approval card surfaces at once, each resumable by its own id.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from datetime import datetime
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.errors import GraphInterrupt
from langgraph.func import task
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Interrupt

from opsgraph.engine.context import CapReached, RunContext
from opsgraph.engine.plan import PlannedTask, TaskPlan, topological
from opsgraph.engine.state import DONE, RunState, TaskResult, TaskStatus, state_update
from opsgraph.engine.synthesise import collect_sources, read_sentences, status_lines
from opsgraph.engine.task_outcome import loop_status
from opsgraph.errors import RunAborted
from opsgraph.gates import decide
from opsgraph.status_words import change_label, task_label
from opsgraph.telemetry.traces import span

log = logging.getLogger(__name__)


def _result(task: PlannedTask, status: TaskStatus, **fields: Any) -> TaskResult:
    return TaskResult(task_id=task.id, agent=task.agent, status=status,
                      instruction=task.instruction, writes=task.writes, **fields)


def _wait_dependencies(deps: dict[str, Future[dict[str, Any]]],
                       after: Future[dict[str, Any]] | None, writes: bool,
                       ) -> tuple[dict[str, TaskResult], tuple[str, ...]]:
    """The results of the tasks this one depends on, and the changes it then waits for.

    For a writer, a dependency paused on a card counts as done for now (its proposal is
    what it found), and what the writer proposes waits for that card (`waits_for`): both
    cards surface together. A read waits for the decision (it must read what applied)."""
    if after is not None:  # the previous writer: finished or paused, either way its turn is over
        try:
            after.result()
        except BaseException:
            pass
    results = {}
    waits: list[str] = []
    for tid, fut in deps.items():
        try:
            results[tid] = TaskResult.model_validate(fut.result())
        except GraphInterrupt as exc:
            cards = [i.value["card"] for i in (exc.args[0] if exc.args else ())
                     if isinstance(i.value, dict) and "card" in i.value]
            if not cards or not writes:
                raise GraphInterrupt(()) from None  # wait for the decision; its card is elsewhere
            waits += [c["change_id"] for c in cards]
            results[tid] = _proposed(tid, cards)
    return results, tuple(waits)


def _proposed(task_id: str, cards: list[dict[str, Any]]) -> TaskResult:
    """A dependency paused on its cards, as the task after it sees it."""
    said = " ".join(f"Proposed, waiting for a manager's approval: {c['summary']}." for c in cards)
    return TaskResult(task_id=task_id, agent=None, status="completed", writes=True,
                      content=said, calls=[{"tool": c["operation"].replace(".", "_"),
                                            "change": {"change_id": c["change_id"],
                                                       "summary": c["summary"],
                                                       "outcome": "pending"}}
                                           for c in cards])


def _did_not_apply(result: TaskResult) -> bool:
    """A write task whose last change ended without applying (rejected, expired, ...)."""
    changes = [c["change"] for c in result.calls if "change" in c]
    return bool(result.writes and changes
                and changes[-1].get("outcome") not in ("applied", "pending"))


def _withdrawn(ctx: RunContext, task: PlannedTask, since: str,
               dep_results: dict[str, TaskResult]) -> TaskResult | None:
    """This task's changes of this message that were withdrawn because a change they waited
    for did not apply (its own pending ones too, when a dependency ended so): the task
    then ends `withdrawn` and proposes nothing again."""
    from opsgraph.approvals.dependents import withdraw_change
    from opsgraph.approvals.pending import COLLECTION, PendingChange

    flt: dict[str, Any] = {"thread_id": ctx.thread_id, "task_id": task.id,
                           "waits_for.0": {"$exists": True}}
    if since:
        flt["created_at"] = {"$gte": datetime.fromisoformat(since)}
    mine = [PendingChange.model_validate(d) for d in ctx.scope[COLLECTION].find(flt)]
    failed = [tid for tid, r in dep_results.items() if _did_not_apply(r)]
    for change in mine:
        if change.status == "pending" and failed:
            withdraw_change(ctx.scope, change, ctx.principal.user_id,
                            f"it waited for task {', '.join(failed)}, whose change did not "
                            "apply")
    gone = [PendingChange.model_validate(d) for d in ctx.scope[COLLECTION].find(
        {**flt, "status": "withdrawn"})]
    if not gone:
        return None
    calls = [{"tool": c.operation.replace(".", "_"), "args": c.args, "ok": False,
              "change": {"change_id": c.change_id, "operation": c.operation,
                         "summary": c.summary, "outcome": "withdrawn",
                         "status_label": change_label("withdrawn"),
                         "reason": c.withdrawn_reason or ""}} for c in gone]
    return _result(task, "withdrawn", calls=calls,
                   error="; ".join(c.withdrawn_reason or "withdrawn" for c in gone))


def _run(ctx: RunContext, task: PlannedTask, dep_results: dict[str, TaskResult],
         waits: tuple[str, ...] = ()) -> TaskResult:
    from opsgraph.engine.agent_run import run_agent
    from opsgraph.registry.loader import get_registry

    emit = get_stream_writer()
    blocked = [tid for tid, r in dep_results.items()
               if r.status not in DONE or _did_not_apply(r)]
    if blocked:
        return _result(task, "skipped", error=f"depends on {', '.join(blocked)}, which did not "
                                              "complete")
    if not task.agent:
        return _result(task, "failed", error=f"no agent serves {task.operation} in "
                                             f"{task.domain}")
    agent = get_registry().get(task.agent)
    decision = decide(ctx.principal, agent, task.operation, plan=ctx.plan,
                      mode="enforce" if ctx.capability_mode == "enforce" else "observe")
    if not decision:
        return _result(task, "denied", error=decision.reason, gate=decision.gate)
    emit({"event": "task_started", "data": {"task_id": task.id, "agent": agent.name}})
    try:
        loop = run_agent(ctx, agent, task, dep_results, waits_for=waits)
    except GraphInterrupt:
        raise
    except CapReached as exc:
        emit({"event": "error", "data": {"code": exc.code, "message": exc.message,
                                         "cap": exc.cap, "task_id": task.id}})
        return _result(task, "failed", error=exc.message, cap=exc.cap)
    except RunAborted:
        raise  # the run cannot go on (e.g. a scripted model with no turn left): fail loudly
    except Exception as exc:
        # a provider's or a library's own words (which may quote the prompt) go to the log;
        # the answer and the event say what stopped, in ours
        log.exception("task %s (%s) failed", task.id, agent.name)
        message = f"{agent.name} stopped: {failure_reason(exc)}"
        emit({"event": "error", "data": {"code": "task_failed", "message": message,
                                         "task_id": task.id}})
        return _result(task, "failed", error=message)
    # an action task that proposed nothing did not do its job, whatever its text says; a
    # query task that could not read what it tried did not either
    status, unread = loop_status(agent.kind == "action", loop)
    return _result(task, status, error=unread, content=loop.content, asking=loop.asking,
                   sources=[s.to_json() for s in loop.sources], tool_calls=loop.tool_calls,
                   calls=loop.calls, findings=loop.findings, cap=loop.stopped)


def failure_reason(exc: BaseException) -> str:
    """What an unexpected failure of a task is called in the answer: the model call that
    failed (a provider error, e.g. a context overflow or a timeout) or an internal error."""
    module = type(exc).__module__.split(".")[0]
    if module in ("openai", "httpx", "botocore", "anthropic", "langchain_openai",
                  "langchain_aws", "llama_cpp", "requests", "urllib3"):
        return f"the model call failed ({type(exc).__name__})"
    return f"an internal error ({type(exc).__name__})"


@task
def run_subtask(task: PlannedTask, deps: dict[str, Future[dict[str, Any]]],
                after: Future[dict[str, Any]] | None, since: str = "") -> dict[str, Any]:
    """One sub-task: wait for what it needs, pass the gates, run its agent. Its result is
    checkpointed, so it is returned as plain data (`TaskResult.model_dump()`). `since`:
    when the message's run started (its changes are the ones made since)."""
    ctx = get_runtime(RunContext).context
    dep_results, waits = _wait_dependencies(deps, after, task.writes)
    ctx.step(f"task {task.id}")
    withdrawn = _withdrawn(ctx, task, since, dep_results) if task.writes and deps else None
    with span("task", task_id=task.id, agent=task.agent or ""):
        result = withdrawn or _run(ctx, task, dep_results, waits)
    get_stream_writer()({"event": "task_finished", "data": {
        "task_id": task.id, "agent": task.agent, "status": result.status,
        "status_label": task_label(result.status, result.calls), "calls": result.calls}})
    return result.model_dump()


def execute(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Start every sub-task as a future; gather all; raise every interrupt together."""
    runtime.context.step("execute")
    runtime.context.history = list(state.history)  # what the agents' briefs show of it
    runtime.context.tasks_planned = len(state.plan)
    futures: dict[str, Future[dict[str, Any]]] = {}
    last_writer: Future[dict[str, Any]] | None = None
    for planned in topological(TaskPlan(tasks=state.plan)):
        deps = {d: futures[d] for d in planned.depends_on}
        futures[planned.id] = run_subtask(planned, deps, last_writer if planned.writes else None,
                                          state.harness.started_at if state.harness else "")
        if planned.writes:
            last_writer = futures[planned.id]
    results: dict[str, TaskResult] = {}
    interrupts: list[Interrupt] = []
    for tid, fut in futures.items():
        try:
            results[tid] = TaskResult.model_validate(fut.result())
        except GraphInterrupt as exc:
            interrupts.extend(exc.args[0] if exc.args else ())
    runtime.context.step("the end of the tasks")  # before it pauses or answers
    if interrupts:
        read = _read_now(runtime.context, state.request, results)
        get_stream_writer()({"event": "answer",
                             "data": pause_answer(results, interrupts, read)})
        raise GraphInterrupt(tuple(interrupts))
    return state_update(results=results)


def _read_now(ctx: RunContext, request: str, results: dict[str, TaskResult]) -> str:
    """The answer to the finished reads of a run about to pause. When it cannot be written
    (the model failed), the cards still surface: the person is told, and the answer of the
    resumed run tries again."""
    try:
        return "".join(read_sentences(ctx, request, results)).strip()
    except GraphInterrupt:
        raise
    except Exception as exc:
        log.warning("run on thread %s: the answer to its reads failed before the pause: %s",
                    ctx.thread_id, exc)
        get_stream_writer()({"event": "error", "data": {
            "code": "answer_failed",
            "message": "what was read could not be answered now; the answer follows once "
                       "the changes are decided"}})
        return ""


def pause_answer(results: dict[str, TaskResult], interrupts: list[Interrupt],
                 read: str = "") -> dict[str, Any]:
    """What a paused run tells the person who asked: what its finished reads found (`read`,
    checked as any answer is), then, in code's words, each card waiting, with its id, and
    every task that ended without doing its job."""
    cards = [i.value["card"] for i in interrupts
             if isinstance(i.value, dict) and "card" in i.value]
    lines = [f"Waiting for approval: {c['summary']} (card {c['change_id']})." for c in cards]
    lines += status_lines(results)
    text = "\n".join(lines)
    return {"text": f"{read}\n\n{text}" if read else text, "read": read,
            "waiting": [c["change_id"] for c in cards], "sources": collect_sources(results)}
