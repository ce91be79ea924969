"""The harness interpreter: one step of a tenant's version, run against the run's
variables, says where the run goes (`Goto`), that it ends (`End`) or that graph work is
needed (`Delegate`: the supervisor graph or one agent). A step's reads go through every
gate as the run's requester; a refusal is data (`{error: {code, message}}`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, assert_never

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from opsgraph.engine import model_calls
from opsgraph.engine.context import ROLE_ORDER, RunContext
from opsgraph.engine.harness_budget import check_calls
from opsgraph.engine.state import HarnessState
from opsgraph.errors import OpsgraphError, StepFailed
from opsgraph.harness import patterns
from opsgraph.harness import spec as hs
from opsgraph.harness.conditions import holds
from opsgraph.harness.templates import render, render_text, render_values, used_sources
from opsgraph.models.factory import tier_spec
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.invoke import invoke


@dataclass(frozen=True, slots=True)
class Goto:
    """Go on at that step (None: past the last step, the run ends without an answer)."""

    step: str | None


@dataclass(frozen=True, slots=True)
class End:
    """The run ends, with this answer (`{text, sources, options?}`) or none."""

    answer: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Delegate:
    """Graph work: the supervisor graph or one agent, on the step's rendered text."""

    step: hs.Agent | hs.Supervisor


Outcome = Goto | End | Delegate


def environment(ctx: RunContext, state: HarnessState) -> dict[str, Any]:
    """What templates and conditions read: the saved variables, `message`, `user` (name,
    role), `tenant` and `client` (the member the conversation is about, when known)."""
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
            "user": {"name": ctx.caller_name() or principal.user_id, "role": role},
            "tenant": dict(ctx.tenant_view), "client": client}


def find_step(doc: hs.HarnessDoc, step_id: str) -> hs.Step:
    """The step of that id."""
    found = next((s for s in doc.steps if s.id == step_id), None)
    if found is None:
        raise StepFailed(f"no step {step_id!r} in the harness version")
    return found


def onward(doc: hs.HarnessDoc, step: hs.StepBase) -> str | None:
    """The step after one that neither branches nor ends the run."""
    return step.goes_on_to(doc.following(step.id))


def _save(state: HarnessState, env: dict[str, Any], values: dict[str, Any]) -> None:
    state.vars.update(values)
    env.update(values)


def _guard(step: hs.Guard, env: dict[str, Any], state: HarnessState,
           prompts: dict[str, str]) -> End | None:
    for rule in step.rules:
        if any(patterns.search(p, state.message, ignore_case=True) for p in rule.patterns):
            if rule.action == "block":
                return End({"text": render_text(rule.text or "", env, prompts), "sources": []})
            _save(state, env, render_values(dict(rule.set or {}), env))
    return None


def _operation_call(ctx: RunContext, op_id: str, args: dict[str, Any]) -> dict[str, Any]:
    """One read operation as the run's requester, through every gate: `{data, sources}`,
    or `{error: {code, message}}` when it is refused or fails (the run goes on)."""
    try:
        op = get_operation(op_id)
        ran = invoke(op, Context(ctx.scope, ctx.principal), args, "read", plan=ctx.plan)
    except OpsgraphError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    return {"data": ran.result.data, "sources": [s.to_json() for s in ran.result.sources]}


def _search(ctx: RunContext, step: hs.Search, env: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"query": render(step.query, env)}
    if step.filters:
        args["filters"] = render_values(dict(step.filters), env)
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
    import jsonschema  # heavy: jsonschema (cold start)

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        return f"{where}: {exc.message}"
    return None


def _llm(ctx: RunContext, step: hs.Llm, env: dict[str, Any], doc: hs.HarnessDoc,
         state: HarnessState) -> Any:
    spec = ctx.run_model or tier_spec(step.model_tier)
    system = (render_text(step.prompt, env, doc.prompts)
              + "\n\nAnswer with one JSON object, nothing else, that matches this JSON "
                "Schema:\n" + json.dumps(step.output_schema, ensure_ascii=False))
    messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(render(step.input, env))]
    problem = ""
    for attempt in range(2):
        check_calls(ctx, doc, state, extra=1)
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


def _said(text: hs.Text, env: dict[str, Any], prompts: dict[str, str]) -> End:
    return End({"text": render_text(text, env, prompts),
                "sources": used_sources(text, prompts, env)})


def run_step(ctx: RunContext, step: hs.Step, doc: hs.HarnessDoc, state: HarnessState,
             env: dict[str, Any]) -> Outcome:
    """Run one step; what it saved is in `state.vars` (and `env`)."""
    prompts = doc.prompts
    match step:
        case hs.Guard():
            return _guard(step, env, state, prompts) or Goto(onward(doc, step))
        case hs.Check():
            return Goto(step.then if holds(step.if_, env) else step.else_)
        case hs.Switch():
            return Goto(next((case.goto for case in step.cases if holds(case.if_, env)),
                             step.default))
        case hs.Set():
            _save(state, env, render_values(dict(step.values), env))
        case hs.Search():
            _save(state, env, {step.save_as: _search(ctx, step, env)})
        case hs.Tool():
            _save(state, env, {step.save_as: _operation_call(
                ctx, step.operation, render_values(dict(step.args), env))})
        case hs.Llm():
            _save(state, env, {step.save_as: _llm(ctx, step, env, doc, state)})
        case hs.Agent() | hs.Supervisor():
            return Delegate(step)
        case hs.Clarify():
            return End({"text": render_text(step.question, env, prompts), "sources": [],
                        "options": list(step.options)})
        case hs.Answer():
            return _said(step.text, env, prompts)
        case hs.Stop():
            return End(None) if step.text is None else _said(step.text, env, prompts)
        case _:
            assert_never(step)
    return Goto(onward(doc, step))
