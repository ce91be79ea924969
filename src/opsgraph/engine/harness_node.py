"""The harness node: a tenant's harness version, executed step by step around the supervisor.

The graph is START → `harness` → ((`decompose` → `execute` | `agent`) → `synthesise` →
`harness`)* → END. This node runs steps from the position saved in the state
until it reaches a `supervisor` step (it routes to `decompose` with the step's message as
the request), an `agent` step (it routes to `agent`), or a step that ends the run. When the
graph work comes back, the node saves its result (`{answer, sources, status}`) under the
step's `save_as` and ends (a final step) or goes on. Everything it needs between nodes is
in the checkpointed state (`HarnessState`), so a run paused for an approval resumes, in any
process, on the version it started with, and no step that already ran runs again.

The built-in harness is one final `supervisor` step: one extra hop, the same events.

A step of a tenant's version that raises (a bug, a pattern the engine cannot compile, an
`llm` step whose output fails its schema twice) is logged and the run falls back to the
built-in harness on the same message; its answer carries a `warning`. A run past its
version's budget (steps, model calls, seconds not counting a wait for approval) ends with
`budget_exceeded`. Gate refusals are data (`{error: {code, message}}`), never a fallback.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.graph import END
from langgraph.runtime import Runtime
from langgraph.types import Interrupt

from opsgraph.engine.answer_text import fallback_warning, pause_answer
from opsgraph.engine.context import RunContext
from opsgraph.engine.harness_budget import (
    calls_so_far,
    check_budget,
    is_builtin,
    seconds_budget,
)
from opsgraph.engine.harness_steps import (
    Delegate,
    End,
    Goto,
    environment,
    find_step,
    onward,
    run_step,
)
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.state import Answer, HarnessState, RunState, TaskResult, state_update
from opsgraph.engine.task_run import run_task, task_finished
from opsgraph.errors import RunAborted, StepFailed
from opsgraph.harness import patterns, versions
from opsgraph.harness import spec as hs_spec
from opsgraph.harness.templates import render
from opsgraph.principal import WRITE_VERBS
from opsgraph.registry.loader import get_registry

log = logging.getLogger(__name__)


def load_version(ctx: RunContext, version: int) -> hs_spec.HarnessDoc:
    """The document of `version` of the run's tenant (0: the built-in)."""
    if ctx.harness is not None and ctx.harness[0] == version:
        return ctx.harness[1]
    return versions.load(ctx.scope, version)


def new_harness_state(ctx: RunContext, message: str, version: int) -> HarnessState:
    """A message's harness, at its first step."""
    doc = load_version(ctx, version)
    return HarnessState(version=version, registry_version=get_registry().version,
                        run_key=ctx.run_id, position=doc.steps[0].id, message=message,
                        started_at=ctx.started_at.isoformat())


def _delegated(doc: hs_spec.HarnessDoc, step_id: str) -> hs_spec.Agent | hs_spec.Supervisor:
    """The step the run waits on: the graph work it handed over."""
    step = find_step(doc, step_id)
    if not isinstance(step, hs_spec.Agent | hs_spec.Supervisor):
        raise StepFailed(f"step {step_id!r} hands no work to the graph")
    return step


def _result_status(results: dict[str, TaskResult]) -> str:
    if all(r.status == "completed" for r in results.values()):
        return "completed"
    return "incomplete"


def _fall_back(ctx: RunContext, state: HarnessState, step_id: str, exc: BaseException) -> None:
    log.warning("tenant %s: harness version %s failed at step %s (%s); falling back to the "
                "built-in harness", ctx.scope.tenant_id, state.version, step_id, exc,
                exc_info=not isinstance(exc, StepFailed | patterns.PatternError))
    state.fallback = {"version": state.version, "step": step_id,
                      "error": str(exc) or type(exc).__name__}
    ctx.seconds_budget = None  # the built-in answers: the safety net has no deadline
    state.vars = {}
    state.position = hs_spec.builtin_doc().steps[0].id


def harness(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run steps until graph work is needed or the run ends (see the module docstring)."""
    ctx = runtime.context
    if state.harness is None:  # a checkpoint from before harnesses, resumed: it is done
        return {}
    emit = get_stream_writer()
    hs = state.harness.model_copy(deep=True)
    doc = hs_spec.builtin_doc() if hs.fallback is not None else load_version(ctx, hs.version)
    ctx.seconds_budget = seconds_budget(hs, doc)
    update: dict[str, Any] = {}
    if hs.waiting is not None:  # the supervisor's (or agent's) work is back
        waited = _delegated(doc, hs.waiting)
        answer = state.answer or Answer(text="")
        result = {"answer": answer.text, "sources": answer.sources,
                  "status": _result_status(state.results)}
        if waited.save_as:
            hs.vars[waited.save_as] = result
        hs.waiting = None
        hs.position = None if waited.final else onward(doc, waited)
    if hs.position is None:  # its last step is back: the run has answered, and ends here
        hs.model_calls = calls_so_far(ctx)
        return {"harness": hs.model_dump()}
    if is_builtin(hs):
        # it hands over at once (the next node's step reads the lease) and reads only
        # {{message}}: its runs make no lookup for the rest
        env: dict[str, Any] = {"message": hs.message}
    else:
        ctx.step("harness")  # a stop asked after the answer is too late: it is said already
        env = environment(ctx, hs)
    while hs.position is not None:
        step_id = hs.position
        try:
            step = find_step(doc, step_id)
            check_budget(ctx, doc, hs)
            hs.steps_ran.append(step.id)
            if not is_builtin(hs):
                emit({"event": "progress", "data": {"stage": "step", "step": step.id,
                                                    "type": step.type}})
            outcome = run_step(ctx, step, doc, hs, env)
        except (GraphBubbleUp, RunAborted):
            raise
        except Exception as exc:
            if hs.fallback is not None or hs.version == 0:
                raise
            _fall_back(ctx, hs, step_id, exc)
            doc = hs_spec.builtin_doc()
            env = environment(ctx, hs)
            continue
        match outcome:
            case Goto(target):
                hs.position = target
            case Delegate(work):
                hs.waiting, hs.position = work.id, None
                hs.waiting_type, hs.sends = work.type, work.final
                update["request"] = render(work.message if isinstance(work, hs_spec.Supervisor)
                                           else work.instruction, env)
                break
            case End(said):
                hs.position = None
                if said is not None:
                    emit({"event": "token", "data": {"text": said["text"]}})
                    emit({"event": "answer", "data": {**said, **fallback_warning(hs)}})
                    update.update(state_update(
                        answer=Answer(text=said["text"], sources=said["sources"]),
                        history=[{"role": "assistant", "content": said["text"]}]))
    hs.model_calls = calls_so_far(ctx)
    return {**update, "harness": hs.model_dump()}


def route(state: RunState) -> str:
    """After the harness node: the supervisor graph, one agent, or the end."""
    hs = state.harness
    if hs is None or hs.waiting is None:
        return END
    return "agent" if hs.waiting_type == "agent" else "decompose"


def agent_step(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """An `agent` step: one registry agent on the step's instruction, run as a sub-task of
    a plan is (`engine.task_run`: the gates, `cap`, a fault a `failed` task with an `error`
    event); its proposals pause for approval as a sub-task's do. Its result goes to
    `synthesise`, which writes the answer as it does for a plan of one task."""
    ctx = runtime.context
    ctx.step("agent")
    ctx.history = list(state.history)  # the step's agent sees the thread's recent exchange
    hs = state.harness
    assert hs is not None and hs.waiting is not None
    step = find_step(load_version(ctx, hs.version), hs.waiting)
    assert isinstance(step, hs_spec.Agent)
    agent = get_registry().get(step.agent)
    # the verb the task is routed and gated as: an action agent's first write, else its
    # first read
    acts = agent.kind == "action"
    verb = sorted(agent.operations, key=lambda v: (v in WRITE_VERBS) != acts)[0]
    task = PlannedTask(id=step.id, domain=agent.domain, operation=verb,
                       instruction=state.request,  # rendered by the harness node
                       agent=agent.name)
    try:
        result = run_task(ctx, task, {})
    except GraphInterrupt as exc:
        interrupts: list[Interrupt] = list(exc.args[0] if exc.args else ())
        get_stream_writer()({"event": "answer", "data": pause_answer({}, interrupts)})
        raise
    task_finished(result)
    return state_update(plan=[task], results={step.id: result})
