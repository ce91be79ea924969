"""One agent task, run the same way wherever it stands: a sub-task of a plan
(`engine.execute`) or a harness `agent` step (`engine.harness_node`).

The task passes the gates, its agent runs its tool loop, and the result says how it ended:
`cap` when a limit stopped it, `failed` with an `error` event when a cap or a fault broke
it, the status the loop earned otherwise (`task_outcome.loop_status`).
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.errors import GraphInterrupt

from opsgraph.engine.agent_run import run_agent
from opsgraph.engine.context import CapReached, RunContext
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.state import DONE, TaskResult, TaskStatus
from opsgraph.engine.task_outcome import loop_status
from opsgraph.errors import RunAborted
from opsgraph.gates import decide
from opsgraph.registry.loader import get_registry
from opsgraph.status_words import task_label

log = logging.getLogger(__name__)


def task_result(task: PlannedTask, status: TaskStatus, **fields: Any) -> TaskResult:
    return TaskResult(task_id=task.id, agent=task.agent, status=status,
                      instruction=task.instruction, writes=task.writes, **fields)


def did_not_apply(result: TaskResult) -> bool:
    """A write task whose last change ended without applying (rejected, expired, ...)."""
    changes = [c["change"] for c in result.calls if "change" in c]
    return bool(result.writes and changes
                and changes[-1].get("outcome") not in ("applied", "pending"))


def run_task(ctx: RunContext, task: PlannedTask, dep_results: dict[str, TaskResult],
             waits: tuple[str, ...] = ()) -> TaskResult:
    """One agent task, given what its dependencies found: skipped when one did not
    complete, `denied` by the gates, else its agent's loop. A cap reached or any fault
    of the agent ends the task `failed` with an `error` event (the run goes on); an
    interrupt (a proposal waiting for approval) and `RunAborted` pass through."""
    emit = get_stream_writer()
    blocked = [tid for tid, r in dep_results.items()
               if r.status not in DONE or did_not_apply(r)]
    if blocked:
        return task_result(task, "skipped",
                           error=f"depends on {', '.join(blocked)}, which did not complete")
    if not task.agent:
        return task_result(task, "failed",
                           error=f"no agent serves {task.operation} in {task.domain}")
    agent = get_registry().get(task.agent)
    decision = decide(ctx.principal, agent, task.operation, plan=ctx.plan,
                      mode="enforce" if ctx.capability_mode == "enforce" else "observe")
    if not decision:
        return task_result(task, "denied", error=decision.reason, gate=decision.gate)
    emit({"event": "task_started", "data": {"task_id": task.id, "agent": agent.name}})
    try:
        loop = run_agent(ctx, agent, task, dep_results, waits_for=waits)
    except GraphInterrupt:
        raise
    except CapReached as exc:
        emit({"event": "error", "data": {"code": exc.code, "message": exc.message,
                                         "cap": exc.cap, "task_id": task.id}})
        return task_result(task, "failed", error=exc.message, cap=exc.cap)
    except RunAborted:
        raise  # the run cannot go on (e.g. a scripted model with no turn left): fail loudly
    except Exception as exc:
        # a provider's or a library's own words (which may quote the prompt) go to the log;
        # the answer and the event say what stopped, in ours
        log.exception("task %s (%s) failed", task.id, agent.name)
        message = f"{agent.name} stopped: {failure_reason(exc)}"
        emit({"event": "error", "data": {"code": "task_failed", "message": message,
                                         "task_id": task.id}})
        return task_result(task, "failed", error=message)
    # an action task that proposed nothing did not do its job, whatever its text says; a
    # query task that could not read what it tried did not either
    status, unread = loop_status(agent.kind == "action", loop)
    return task_result(task, status, error=unread, content=loop.content, asking=loop.asking,
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


def task_finished(result: TaskResult) -> None:
    """The `task_finished` event of a task's result."""
    get_stream_writer()({"event": "task_finished", "data": {
        "task_id": result.task_id, "agent": result.agent, "status": result.status,
        "status_label": task_label(result.status, result.calls), "calls": result.calls}})
