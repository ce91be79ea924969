"""The decompose node: who is asking → rank agents → model → a validated, routed TaskPlan."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from opsgraph.engine import model_calls
from opsgraph.engine.context import RunContext
from opsgraph.engine.memory import render_history
from opsgraph.engine.plan import MAX_TASKS, TaskPlan, plan_problems
from opsgraph.errors import RunAborted
from opsgraph.principal import DOMAINS, VERBS

if TYPE_CHECKING:
    from opsgraph.registry.registry import Registry


class PlanRejected(RunAborted):
    """The model's plan stayed invalid after one repair attempt."""

    code = "invalid_plan"


PLANNER_RULES = f"""You are the planner of an operations assistant for a club or venue.
Split the request into at most {MAX_TASKS} sub-tasks. Each task names one domain and one verb
from the capability table, an instruction an agent can act on, and depends_on listing the
ids of tasks whose results it needs. Tasks without dependencies run in parallel; only add a
dependency when a task truly needs another's result. Never invent domains or verbs."""


_systems: dict[str, str] = {}


def planner_system(registry: Registry) -> str:
    """The planner's stable system prompt, built once per registry version."""
    from opsgraph.registry.prompt import capability_summary

    if registry.version not in _systems:
        _systems[registry.version] = "\n\n".join(
            [PLANNER_RULES, "Capabilities:\n" + capability_summary(registry)])
    return _systems[registry.version]


def _planner_messages(ctx: RunContext, spec: str, request: str,
                      history: list[dict[str, Any]]) -> list[BaseMessage]:
    """A stable system prompt (rules and capabilities: cacheable), then this request."""
    from opsgraph.models.factory import get_chat_model
    from opsgraph.models.prompt_cache import cached_system_message
    from opsgraph.registry.loader import get_registry
    from opsgraph.registry.ranker import rank_agents

    ranked = rank_agents(request, top_k=6)
    hints = "\n".join(f"- {r.agent} ({r.domain}: {', '.join(r.operations)})" for r in ranked)
    roles = ", ".join(sorted(r.value for r in ctx.principal.roles))
    system = planner_system(get_registry())
    context = render_history(history[:-1])
    human = (f"Caller roles: {roles}; channel: {ctx.principal.channel.value}.\n"
             + f"Most relevant agents for this request:\n{hints}\n\n"
             + (f"Conversation so far:\n{context}\n\n" if context else "")
             + f"Request: {request}")
    return [cached_system_message(get_chat_model(spec), system), HumanMessage(human)]


def route(domain: str, verb: str, request: str) -> str | None:
    """The agent for (domain, verb): a capability-matrix lookup, the ranker as fallback."""
    from opsgraph.registry.loader import get_registry
    from opsgraph.registry.matrix import route as matrix_route
    from opsgraph.registry.ranker import rank_agents

    agent = matrix_route(domain, verb)
    if agent is not None:
        return str(agent.name)
    registry = get_registry()
    for ranked in rank_agents(request, top_k=len(registry.agents)):
        if ranked.domain == domain:
            return str(ranked.agent)
    return None


def make_plan(ctx: RunContext, request: str, history: list[dict[str, Any]]) -> TaskPlan:
    """Ask for a plan; one repair attempt if it is invalid; else PlanRejected."""
    from opsgraph.models.factory import tier_spec

    spec = ctx.run_model or tier_spec("default")
    messages = _planner_messages(ctx, spec, request, history)
    plan: TaskPlan = model_calls.structured(ctx, spec, messages, TaskPlan, stage="decompose")
    problems = plan_problems(plan)
    if problems:
        messages += [AIMessage(plan.model_dump_json()),
                     HumanMessage("That plan is invalid:\n- " + "\n- ".join(problems)
                                  + f"\nDomains: {', '.join(DOMAINS)}. Verbs: "
                                  + f"{', '.join(VERBS)}.\nReturn a corrected plan.")]
        plan = model_calls.structured(ctx, spec, messages, TaskPlan, stage="decompose")
        problems = plan_problems(plan)
    if problems:
        raise PlanRejected("the plan is invalid: " + "; ".join(problems), problems=problems)
    return plan


def decompose(state: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Plan the request and route every task to an agent."""
    ctx = runtime.context
    request = state["request"]
    plan = make_plan(ctx, request, state.get("history") or [])
    tasks = [{**t.model_dump(), "agent": route(t.domain, t.operation, t.instruction)}
             for t in plan.tasks]
    get_stream_writer()({"event": "plan", "data": {"tasks": tasks}})
    return {"plan": tasks, "results": {}}
