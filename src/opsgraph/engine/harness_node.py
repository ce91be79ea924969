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

import json
import logging
import re
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.runtime import Runtime
from langgraph.types import Interrupt

from opsgraph.engine import model_calls
from opsgraph.engine.budget import BudgetExceeded, SecondsBudget, seconds_used
from opsgraph.engine.context import ROLE_ORDER, RunContext
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.state import (
    Answer,
    HarnessState,
    RunState,
    TaskResult,
    state_update,
)
from opsgraph.errors import OpsgraphError, RunAborted
from opsgraph.harness import patterns, versions
from opsgraph.harness import spec as hs_spec
from opsgraph.harness.spec import Condition, HarnessDoc
from opsgraph.harness.templates import check as template_paths
from opsgraph.harness.templates import lookup, render, render_text
from opsgraph.harness.versions import BUILTIN_DOC

log = logging.getLogger(__name__)


class StepFailed(Exception):
    """A step of a tenant's version failed at run time (the run falls back)."""


def load_version(ctx: RunContext, version: int) -> HarnessDoc:
    """The document of `version` of the run's tenant (0: the built-in)."""
    if ctx.harness is not None and ctx.harness[0] == version:
        return ctx.harness[1]
    return versions.load(ctx.scope, version)


def new_harness_state(ctx: RunContext, message: str, version: int) -> HarnessState:
    """A message's harness, at its first step."""
    from opsgraph.registry.loader import get_registry

    doc = load_version(ctx, version)
    return HarnessState(version=version, registry_version=get_registry().version,
                        run_key=ctx.run_id, position=doc.steps[0].id, message=message,
                        started_at=ctx.started_at.isoformat())


def is_builtin(state: HarnessState) -> bool:
    """The run executes the built-in harness (not one it fell back to)."""
    return state.version == 0 and state.fallback is None


def seconds_budget(state: HarnessState, doc: HarnessDoc) -> SecondsBudget | None:
    """The deadline's budget while a tenant's version runs (None: the built-in, or a run
    that fell back to it)."""
    if state.version == 0 or state.fallback is not None:
        return None
    return SecondsBudget(state.version, doc.budget.seconds)


# -- the template environment and conditions ----------------------------------------------

def environment(ctx: RunContext, state: HarnessState) -> dict[str, Any]:
    """What templates and conditions read: the saved variables, `message`, `user` (name,
    role), `tenant` and `client` (the member the conversation is about, when known)."""
    from opsgraph.store.people import display_name

    principal = ctx.principal
    roles = {r.value for r in principal.roles}
    role = next((r for r in ROLE_ORDER if r in roles), "visitor")
    client: dict[str, Any] = {}
    if role == "member":
        member = ctx.scope["members"].find_one({"_id": principal.user_id},
                                               projection={"name": 1, "membership": 1,
                                                           "status": 1})
        if member:
            client = {k: member.get(k) for k in ("name", "membership", "status")}
    return {**state.vars, "message": state.message,
            "user": {"name": display_name(ctx.scope, principal.user_id), "role": role},
            "tenant": dict(ctx.tenant_view), "client": client}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def holds(cond: Condition, env: dict[str, Any]) -> bool:
    """Whether the condition holds in `env` (a missing variable is None)."""
    if cond.all is not None:
        return all(holds(c, env) for c in cond.all)
    if cond.any is not None:
        return any(holds(c, env) for c in cond.any)
    if cond.not_ is not None:
        return not holds(cond.not_, env)
    value = lookup(env, cond.var or "")
    given = cond.model_fields_set
    if "eq" in given:
        return bool(value == cond.eq)
    if "ne" in given:
        return bool(value != cond.ne)
    if "in_" in given:
        return value in (cond.in_ or [])
    if "contains" in given:
        needle = (cond.contains or "").lower()
        if isinstance(value, str):
            return needle in value.lower()
        return isinstance(value, list) and any(str(v).lower() == needle for v in value)
    if "matches" in given:
        text = value if isinstance(value, str) else "" if value is None else json.dumps(value)
        return patterns.search(cond.matches or "", text, ignore_case=True)
    if "exists" in given:
        return (value is not None) == bool(cond.exists)
    number = _number(value)
    if number is None:
        return False
    if "gt" in given:
        return number > float(cond.gt or 0)
    return number < float(cond.lt or 0)


def _render_values(value: Any, env: dict[str, Any]) -> Any:
    """Strings rendered as templates, inside lists and objects too."""
    if isinstance(value, str):
        return render(value, env)
    if isinstance(value, list):
        return [_render_values(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _render_values(v, env) for k, v in value.items()}
    return value


def used_sources(text: hs_spec.Text, prompts: dict[str, str],
                 env: dict[str, Any]) -> list[dict[str, Any]]:
    """The sources of the saved results a text reads (`{{draft.answer}}` → draft's)."""
    from opsgraph.harness.templates import PROMPT_REF

    parts = [text] if isinstance(text, str) else list(text)
    sources: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for part in parts:
        ref = PROMPT_REF.match(part.strip())
        for path in template_paths(prompts.get(ref[1], "") if ref else part):
            saved = env.get(path.split(".")[0])
            for src in saved.get("sources") or [] if isinstance(saved, dict) else []:
                key = (str(src.get("kind")), str(src.get("id")))
                if isinstance(src, dict) and key not in seen:
                    seen.add(key)
                    sources.append(src)
    return sources


# -- steps ----------------------------------------------------------------------------------

Outcome = tuple[Literal["next", "goto", "end", "delegate"], Any]
"""What a step did: go on (`next`), jump (`goto`, a step id), end the run (`end`, the
answer's data or None) or hand over to graph work (`delegate`, the step)."""


def _guard(step: hs_spec.Guard, env: dict[str, Any], state: HarnessState,
           prompts: dict[str, str]) -> Outcome:
    for rule in step.rules:
        if any(patterns.search(p, state.message, ignore_case=True) for p in rule.patterns):
            if rule.action == "block":
                return "end", {"text": render_text(rule.text or "", env, prompts),
                               "sources": []}
            flags = _render_values(dict(rule.set or {}), env)
            state.vars.update(flags)
            env.update(flags)
    return "next", None


def _operation_call(ctx: RunContext, op_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """One read operation as the run's requester, through every gate: `{data, sources}`,
    or `{error: {code, message}}` when it is refused or fails (the run goes on)."""
    from opsgraph.operations.base import Context
    from opsgraph.operations.catalogue import get_operation
    from opsgraph.operations.invoke import invoke

    try:
        op = get_operation(op_id)
        ran = invoke(op, Context(ctx.scope, ctx.principal), args, "read", plan=ctx.plan)
    except OpsgraphError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    return {"data": ran.result.data, "sources": [s.to_json() for s in ran.result.sources]}


def _search(ctx: RunContext, step: hs_spec.Search, env: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"query": render(step.query, env)}
    if step.filters:
        args["filters"] = _render_values(dict(step.filters), env)
    found = _operation_call(ctx, "knowledge.search", args)
    if "error" in found:
        return found
    hits = list(found["data"].get("results") or [])[: step.limit]
    sources = [{"kind": h["kind"], "id": h["id"], "title": h.get("title") or h["id"]}
               for h in hits]
    return {"hits": hits, "count": len(hits), "sources": sources}


def _json_object(text: str) -> Any:
    body = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.DOTALL)
    return json.loads(fenced[1] if fenced else body)


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Why `value` does not match the JSON schema (None when it does)."""
    import jsonschema

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        return f"{where}: {exc.message}"
    return None


def _llm(ctx: RunContext, step: hs_spec.Llm, env: dict[str, Any], doc: HarnessDoc,
         state: HarnessState) -> Any:
    from opsgraph.models.factory import tier_spec

    spec = ctx.run_model or tier_spec(step.model_tier)
    system = (render_text(step.prompt, env, doc.prompts)
              + "\n\nAnswer with one JSON object, nothing else, that matches this JSON "
                "Schema:\n" + json.dumps(step.output_schema, ensure_ascii=False))
    messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(render(step.input, env))]
    problem = ""
    for attempt in range(2):
        _check_calls(ctx, doc, state, extra=1)
        reply = model_calls.invoke(ctx, spec, messages, [], stage="harness", step_id=step.id)
        text = reply.text if isinstance(reply.text, str) else str(reply.content)
        try:
            value = _json_object(text)
        except ValueError as exc:
            problem = f"not JSON: {exc}"
        else:
            problem = schema_problem(value, step.output_schema) or ""
            if not problem:
                return value
        if attempt == 0:
            messages += [AIMessage(text), HumanMessage(
                f"That answer does not match the schema: {problem}. Answer again with one "
                "JSON object that matches it.")]
    raise StepFailed(f"llm step {step.id}: the output did not match its output_schema "
                     f"twice ({problem})")


def run_step(ctx: RunContext, step: Any, doc: HarnessDoc, state: HarnessState,
             env: dict[str, Any]) -> Outcome:
    """Run one step; what it saved is in `state.vars` (and `env`)."""
    prompts = doc.prompts
    kind = step.type
    if kind == "guard":
        return _guard(step, env, state, prompts)
    if kind == "check":
        return "goto", step.then if holds(step.if_, env) else step.else_
    if kind == "switch":
        return "goto", next((case.goto for case in step.cases if holds(case.if_, env)),
                            step.default)
    saved: Any
    if kind == "set":
        saved = _render_values(dict(step.values), env)
        state.vars.update(saved)
        env.update(saved)
        return "next", None
    if kind == "search":
        saved = _search(ctx, step, env)
    elif kind == "tool":
        saved = _operation_call(ctx, step.operation, _render_values(dict(step.args), env))
    elif kind == "llm":
        saved = _llm(ctx, step, env, doc, state)
    elif kind in ("supervisor", "agent"):
        return "delegate", step
    elif kind == "clarify":
        return "end", {"text": render_text(step.question, env, prompts), "sources": [],
                       "options": list(step.options)}
    elif kind == "answer":
        return "end", {"text": render_text(step.text, env, prompts),
                       "sources": used_sources(step.text, prompts, env)}
    elif kind == "stop":
        if step.text is None:
            return "end", None
        return "end", {"text": render_text(step.text, env, prompts),
                       "sources": used_sources(step.text, prompts, env)}
    else:  # the spec admits no other type
        raise StepFailed(f"step {step.id}: unknown type {kind!r}")
    state.vars[step.save_as] = saved
    env[step.save_as] = saved
    return "next", None


def find_step(doc: HarnessDoc, step_id: str) -> Any:
    """The step of that id (typed loosely: each type has its own fields)."""
    found = next((s for s in doc.steps if s.id == step_id), None)
    if found is None:
        raise StepFailed(f"no step {step_id!r} in the harness version")
    return found


def successor(doc: HarnessDoc, step: Any) -> str | None:
    """The step after `step`: its `next`, else the following one in the list."""
    if step.next:
        return str(step.next)
    ids = [s.id for s in doc.steps]
    at = ids.index(step.id)
    return ids[at + 1] if at + 1 < len(ids) else None


# -- budget -----------------------------------------------------------------------------

def _calls(ctx: RunContext) -> int:
    return ctx.spent_calls + ctx.usage.calls


def _check_calls(ctx: RunContext, doc: HarnessDoc, state: HarnessState, extra: int) -> None:
    if is_builtin(state) or state.fallback is not None:
        return
    calls = _calls(ctx) + extra
    if calls > doc.budget.model_calls:
        raise BudgetExceeded(f"harness version {state.version}: {calls} model calls, over "
                             f"its budget of {doc.budget.model_calls}", cap="model_calls")


def _check_budget(ctx: RunContext, doc: HarnessDoc, state: HarnessState) -> None:
    """Before a step: the steps, model calls and active seconds so far fit the budget."""
    if state.fallback is not None:
        return  # the built-in answers once a version failed: the safety net has no cap
    budget, version = doc.budget, state.version
    steps = len(state.steps_ran) + 1
    if steps > budget.steps:
        raise BudgetExceeded(f"harness version {version}: {steps} steps, over its budget of "
                             f"{budget.steps}", cap="steps")
    _check_calls(ctx, doc, state, extra=0)
    seconds = seconds_used(ctx)
    if seconds > budget.seconds:
        raise BudgetExceeded(f"harness version {version}: {seconds:.0f} seconds, over its "
                             f"budget of {budget.seconds}", cap="seconds")


# -- the node -----------------------------------------------------------------------------

def _answer_data(answer: dict[str, Any], state: HarnessState) -> dict[str, Any]:
    """The `answer` event's data: with a `warning` when the run fell back."""
    if state.fallback is None:
        return answer
    failed = state.fallback
    return {**answer, "warning": f"harness version {failed['version']} failed at step "
                                 f"{failed['step']}; the built-in harness answered instead"}


def answer_warning(state: RunState) -> dict[str, Any]:
    """`{warning}` for the answer of a run that fell back (synthesise adds it)."""
    hs = state.harness
    return _answer_data({}, hs) if hs is not None else {}


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
    state.position = BUILTIN_DOC.steps[0].id


def harness(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run steps until graph work is needed or the run ends (see the module docstring)."""
    ctx = runtime.context
    if state.harness is None:  # a checkpoint from before harnesses, resumed: it is done
        return {}
    ctx.step("harness")
    emit = get_stream_writer()
    hs = state.harness.model_copy(deep=True)
    doc = BUILTIN_DOC if hs.fallback is not None else load_version(ctx, hs.version)
    ctx.seconds_budget = seconds_budget(hs, doc)
    update: dict[str, Any] = {}
    if hs.waiting is not None:  # the supervisor's (or agent's) work is back
        step = find_step(doc, hs.waiting)
        answer = state.answer or Answer(text="")
        result = {"answer": answer.text, "sources": answer.sources,
                  "status": _result_status(state.results)}
        if step.save_as:
            hs.vars[step.save_as] = result
        hs.waiting = None
        hs.position = None if step.final else successor(doc, step)
    # the built-in harness reads only {{message}}: its runs make no lookup for the rest
    env = ({"message": hs.message} if is_builtin(hs)
           else environment(ctx, hs) if hs.position is not None else {})
    while hs.position is not None:
        step_id = hs.position
        try:
            step = find_step(doc, step_id)
            _check_budget(ctx, doc, hs)
            hs.steps_ran.append(step.id)
            if not is_builtin(hs):
                emit({"event": "progress", "data": {"stage": "step", "step": step.id,
                                                    "type": step.type}})
            kind, value = run_step(ctx, step, doc, hs, env)
        except (GraphBubbleUp, RunAborted):
            raise
        except Exception as exc:
            if hs.fallback is not None or hs.version == 0:
                raise
            _fall_back(ctx, hs, step_id, exc)
            doc = BUILTIN_DOC
            env = environment(ctx, hs)
            continue
        if kind == "next":
            hs.position = successor(doc, step)
        elif kind == "goto":
            hs.position = str(value)
        elif kind == "delegate":
            hs.waiting, hs.position = step.id, None
            hs.waiting_type, hs.sends = step.type, bool(step.final)
            update["request"] = render(step.message if step.type == "supervisor"
                                       else step.instruction, env)
            break
        else:  # end
            hs.position = None
            if value is not None:
                data = _answer_data(value, hs)
                emit({"event": "token", "data": {"text": value["text"]}})
                emit({"event": "answer", "data": data})
                update.update(state_update(
                    answer=Answer(text=value["text"], sources=value["sources"]),
                    history=[{"role": "assistant", "content": value["text"]}]))
    hs.model_calls = _calls(ctx)
    return {**update, "harness": hs.model_dump()}


def route(state: RunState) -> str:
    """After the harness node: the supervisor graph, one agent, or the end."""
    from langgraph.graph import END

    hs = state.harness
    if hs is None or hs.waiting is None:
        return END
    return "agent" if hs.waiting_type == "agent" else "decompose"


def agent_step(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """An `agent` step: one registry agent on the step's instruction, through the gates;
    its proposals pause for approval as a sub-task's do. Its result goes to `synthesise`,
    which writes the answer as it does for a plan of one task."""
    from opsgraph.engine.agent_run import run_agent
    from opsgraph.engine.execute import pause_answer
    from opsgraph.engine.task_outcome import loop_status
    from opsgraph.gates import decide
    from opsgraph.principal import WRITE_VERBS
    from opsgraph.registry.loader import get_registry

    ctx = runtime.context
    ctx.step("agent")
    ctx.history = list(state.history)  # the step's agent sees the thread's recent exchange
    emit = get_stream_writer()
    hs = state.harness
    assert hs is not None and hs.waiting is not None
    doc = load_version(ctx, hs.version)
    step = find_step(doc, hs.waiting)
    assert isinstance(step, hs_spec.Agent)
    agent = get_registry().get(step.agent)
    # the verb the task is routed and gated as: an action agent's first write, else its
    # first read
    acts = agent.kind == "action"
    verb = sorted(agent.operations, key=lambda v: (v in WRITE_VERBS) != acts)[0]
    instruction = state.request  # the step's instruction, rendered by the harness node
    task = PlannedTask(id=step.id, domain=agent.domain, operation=verb,
                       instruction=instruction, agent=agent.name)
    decision = decide(ctx.principal, agent, verb, plan=ctx.plan,
                      mode="enforce" if ctx.capability_mode == "enforce" else "observe")
    if not decision:
        result = TaskResult(task_id=step.id, agent=agent.name, status="denied",
                            instruction=instruction, writes=task.writes,
                            error=decision.reason, gate=decision.gate)
    else:
        emit({"event": "task_started", "data": {"task_id": step.id, "agent": agent.name}})
        try:
            loop = run_agent(ctx, agent, task, {})
        except GraphInterrupt as exc:
            interrupts: list[Interrupt] = list(exc.args[0] if exc.args else ())
            emit({"event": "answer", "data": pause_answer({}, interrupts)})
            raise
        status, unread = loop_status(agent.kind == "action", loop)
        result = TaskResult(task_id=step.id, agent=agent.name, status=status, error=unread,
                            asking=loop.asking,
                            instruction=instruction, writes=task.writes, content=loop.content,
                            sources=[s.to_json() for s in loop.sources],
                            tool_calls=loop.tool_calls, calls=loop.calls,
                            findings=loop.findings)
        emit({"event": "task_finished", "data": {"task_id": step.id, "agent": agent.name,
                                                 "status": result.status,
                                                 "calls": result.calls}})
    return state_update(plan=[task], results={step.id: result})
