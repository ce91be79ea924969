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

from opsgraph.approvals.dependents import withdraw_change
from opsgraph.approvals.pending import COLLECTION, PendingChange
from opsgraph.engine.answer_text import pause_answer
from opsgraph.engine.context import RunContext
from opsgraph.engine.plan import PlannedTask, TaskPlan, topological
from opsgraph.engine.state import RunState, TaskResult, state_update
from opsgraph.engine.synthesise import read_sentences
from opsgraph.engine.task_run import did_not_apply, run_task, task_finished, task_result
from opsgraph.status_words import change_label
from opsgraph.telemetry.traces import span

log = logging.getLogger(__name__)


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


def _withdrawn(ctx: RunContext, task: PlannedTask, since: str,
               dep_results: dict[str, TaskResult]) -> TaskResult | None:
    """This task's changes of this message that were withdrawn because a change they waited
    for did not apply (its own pending ones too, when a dependency ended so): the task
    then ends `withdrawn` and proposes nothing again."""
    flt: dict[str, Any] = {"thread_id": ctx.thread_id, "task_id": task.id,
                           "waits_for.0": {"$exists": True}}
    if since:
        flt["created_at"] = {"$gte": datetime.fromisoformat(since)}
    mine = [PendingChange.model_validate(d) for d in ctx.scope[COLLECTION].find(flt)]
    failed = [tid for tid, r in dep_results.items() if did_not_apply(r)]
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
    return task_result(task, "withdrawn", calls=calls,
                       error="; ".join(c.withdrawn_reason or "withdrawn" for c in gone))


def run_subtask(task: PlannedTask, deps: dict[str, Future[dict[str, Any]]],
                after: Future[dict[str, Any]] | None, since: str = "") -> dict[str, Any]:
    """One sub-task: wait for what it needs, pass the gates, run its agent. Its result is
    checkpointed, so it is returned as plain data (`TaskResult.model_dump()`). `since`:
    when the message's run started (its changes are the ones made since)."""
    ctx = get_runtime(RunContext).context
    dep_results, waits = _wait_dependencies(deps, after, task.writes)
    if deps or after is not None:  # it waited: the lease is read again
        ctx.step(f"task {task.id}")
    else:  # it starts with the plan, whose `execute` step has just read the lease
        ctx.check_lease(f"task {task.id}")
    withdrawn = _withdrawn(ctx, task, since, dep_results) if task.writes and deps else None
    with span("task", task_id=task.id, agent=task.agent or ""):
        result = withdrawn or run_task(ctx, task, dep_results, waits)
    task_finished(result)
    return result.model_dump()


subtask = task(run_subtask)
"""`run_subtask` as a LangGraph task (not `@task`: see the tasks of `model_calls`)."""


def execute(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Start every sub-task as a future; gather all; raise every interrupt together."""
    runtime.context.step("execute")
    runtime.context.history = list(state.history)  # what the agents' briefs show of it
    runtime.context.tasks_planned = len(state.plan)
    futures: dict[str, Future[dict[str, Any]]] = {}
    last_writer: Future[dict[str, Any]] | None = None
    for planned in topological(TaskPlan(tasks=state.plan)):
        deps = {d: futures[d] for d in planned.depends_on}
        futures[planned.id] = subtask(planned, deps, last_writer if planned.writes else None,
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
    if interrupts:  # (an answer is written after the `synthesise` step's own read)
        runtime.context.step("the end of the tasks")  # before it pauses
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
