"""The decompose node: who is asking → rank agents → model → a reviewed, routed TaskPlan.

The planner is shown only the capabilities the ranker finds for the request (ranked as a
whole and clause by clause, so each ask of a several-ask message has its candidates), and
its structured output holds `capability` to that list: prompt size is latency on a small
model, and a closed list is what a grammar-constrained server enforces. Code numbers the
tasks, drops impossible dependencies, reviews the plan (`plan_review`) and routes each task
through the capability matrix. A question whose best candidates are knowledge agents, and a
single change the ranker and the resolver leave in no doubt, get their one-task plan from
code, with no planner call (`code_plans`); a plan whose capability no agent serves is moved
to the nearest agent before it is refused.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from pydantic import ValidationError

from opsgraph.engine import model_calls
from opsgraph.engine.code_plans import (
    QUESTION_NOTE,
    clauses_of,
    knowledge_follow_up,
    knowledge_plan,
    knowledge_question,
    question_naming_nothing,
    rule_question,
    single_read,
    single_write,
)
from opsgraph.engine.context import RunContext
from opsgraph.engine.few_shot import planner_examples
from opsgraph.engine.memory import Turn, render_history
from opsgraph.engine.plan import (
    MAX_TASKS,
    PlanDraft,
    PlannedTask,
    TaskPlan,
    number_tasks,
    plan_problems,
)
from opsgraph.engine.plan_review import review_plan
from opsgraph.engine.request_words import asks_for_information, reads_as_question
from opsgraph.engine.state import RunState, state_update
from opsgraph.errors import RunAborted
from opsgraph.gates import decide
from opsgraph.knowledge.embeddings import get_embedder
from opsgraph.models.factory import get_chat_model, tier_spec
from opsgraph.models.prompt_cache import cached_system_message
from opsgraph.principal import READ_VERBS, WRITE_VERBS
from opsgraph.registry.loader import get_registry
from opsgraph.registry.matrix import capability_matrix, route
from opsgraph.registry.ranker import rank_agents

if TYPE_CHECKING:
    from opsgraph.registry.registry import Registry

CANDIDATE_AGENTS = 6
"""Agents the ranker proposes for the whole request; each clause adds its best three."""
MAX_CAPABILITIES = 14


class PlanRejected(RunAborted):
    """The model's plan stayed invalid after one repair attempt."""

    code = "invalid_plan"


PLANNER_RULES = f"""You plan the work of the assistant of a club or venue.
List the tasks needed to do what the person asks, at most {MAX_TASKS}.
- One task per distinct thing asked. A single question or a single change is ONE task.
- capability: pick it from the list given with the request.
- Read verbs (get, list, search, check, report) look things up. Write verbs (create,
  update, cancel, assign, send, issue, refund, register) propose a change for a manager to
  approve: use one only when the person asks for that change. A question is never a write.
- Verbs: get = one record's details; list = the records that match; search = find by
  name or words; check = whether something is free, open, valid or due; report = figures
  over a period; create = something new (a booking, a fault report, a member); update =
  change a record; cancel = call off or end; assign = give a shift to someone; send = an
  email or message; issue = an invoice; refund = money back; register = a place at an event.
- instruction: one sentence an agent can act on alone; repeat every name, date, time and
  amount from the request, and add none it does not give (not today's).
- depends_on: numbers of the earlier tasks whose results this task needs; usually [].
- A message that asks nothing of the club (small talk, another subject): {{"tasks": []}}.

Example. Request: "whats jane smith's phone no, and book her court 2 tmrw 7pm"
{{"tasks": [
 {{"instruction": "Find Jane Smith's phone number.", "capability": "members.get",
  "depends_on": []}},
 {{"instruction": "Book Court 2 for Jane Smith tomorrow at 19:00.",
  "capability": "bookings.create", "depends_on": []}}]}}"""

def _first_sentence(text: str) -> str:
    text = re.sub(r'"[^"]*"', "", text).strip()
    return re.split(r"(?<=[.:])\s", text, maxsplit=1)[0].rstrip(":").strip()


def candidate_capabilities(request: str, registry: Registry) -> dict[str, str]:
    """`domain.verb` → what it does, for the agents the ranker finds for `request` (and
    the knowledge search for any question)."""
    ranked = list(rank_agents(request, top_k=CANDIDATE_AGENTS))
    for clause in clauses_of(request):
        ranked.extend(rank_agents(clause, top_k=3))
    found: dict[str, str] = {}
    for candidate in sorted(ranked, key=lambda r: -r.score):
        spec = registry.get(candidate.agent)
        for verb in spec.operations:
            agent = route(spec.domain, verb)
            key = f"{spec.domain}.{verb}"
            if agent is not None and key not in found and len(found) < MAX_CAPABILITIES:
                found[key] = _first_sentence(agent.description)
    knowledge = route("knowledge", "search")
    if (knowledge is not None and reads_as_question(request)
            and not any(key.startswith("knowledge.") for key in found)):
        # any question may be one the knowledge base answers ("how far ahead can a premium
        # member book a court?" ranks the booking agents first): the planner may choose it
        found["knowledge.search"] = _first_sentence(knowledge.description)
    return found


def plan_schema(capabilities: list[str]) -> dict[str, Any]:
    """The JSON schema of the planner's answer, `capability` held to the candidates."""
    return {
        "title": "TaskPlan",
        "description": "The request split into tasks",
        "type": "object",
        "properties": {"tasks": {"type": "array", "minItems": 0, "maxItems": MAX_TASKS,
                                 "items": {
            "type": "object",
            "properties": {
                "instruction": {"type": "string"},
                "capability": {"type": "string", "enum": capabilities},
                "depends_on": {"type": "array", "maxItems": MAX_TASKS - 1,
                               "items": {"type": "integer", "minimum": 1,
                                         "maximum": MAX_TASKS}}},
            "required": ["instruction", "capability", "depends_on"],
            "additionalProperties": False}}},
        "required": ["tasks"],
        "additionalProperties": False,
    }


def _planner_messages(ctx: RunContext, spec: str, request: str, history: list[Turn],
                      capabilities: dict[str, str]) -> list[BaseMessage]:
    """A stable system prompt (rules and one example: cacheable), then this request."""
    by_what: dict[str, list[str]] = {}
    for key, what in capabilities.items():  # one line for the verbs one agent serves
        by_what.setdefault(what, []).append(key)
    listed = "\n".join(f"- {', '.join(keys)}: {what}" for what, keys in by_what.items())
    context = render_history(history[:-1])
    human = (f"Today: {ctx.today_line(clock=False)}. Caller: {ctx.caller_line()}, "
             f"channel {ctx.principal.channel.value}.\n"
             f"Capabilities for this request:\n{listed}\n\n"
             + (f"Conversation so far:\n{context}\n\n" if context else "")
             + planner_examples(ctx.scope, request, ctx.few_shot_agents())
             + f"Request: {request}")
    return [cached_system_message(get_chat_model(spec), PLANNER_RULES), HumanMessage(human)]


def _draft(ctx: RunContext, spec: str, messages: list[BaseMessage],
           schema: dict[str, Any]) -> tuple[PlanDraft | None, str]:
    """One planner call: the draft, or None and why it could not be read."""
    raw = model_calls.structured(ctx, spec, messages, schema, stage="decompose")
    try:
        return PlanDraft.model_validate(raw), ""
    except ValidationError as exc:
        return None, str(exc).replace("\n", " ")[:400]


def nearest_capability(ctx: RunContext, task: PlannedTask,
                       served: set[tuple[str, str]]) -> PlannedTask | None:
    """`task` moved to the nearest agent of the capability matrix (the ranker's cached agent
    embeddings, over the whole registry) when its own capability is served by none: a read
    becomes that agent's read, a write only an agent's of the same write verb. None when
    the verb is unknown or nothing the caller may use fits."""
    if task.operation not in (*READ_VERBS, *WRITE_VERBS):
        return None
    registry = get_registry()
    for ranked in rank_agents(task.instruction, top_k=len(registry.agents)):
        spec = registry.get(ranked.agent)
        if task.operation in WRITE_VERBS:
            verbs = [task.operation] if task.operation in spec.operations else []
        else:
            verbs = [v for v in spec.operations if v in READ_VERBS]
        for verb in verbs:
            if (spec.domain, verb) in served and decide(ctx.principal, spec, verb,
                                                        plan=ctx.plan):
                return task.model_copy(update={"domain": spec.domain, "operation": verb})
    return None


def _fallback(ctx: RunContext, plan: TaskPlan | None,
              served: set[tuple[str, str]]) -> TaskPlan | None:
    """The last draft with every unserved task moved to its nearest served capability, if
    that makes it valid."""
    if plan is None or not plan.tasks:
        return None
    moved = []
    for task in plan.tasks:
        if (task.domain, task.operation) in served:
            moved.append(task)
            continue
        near = nearest_capability(ctx, task, served)
        if near is None:
            return None
        moved.append(near)
    fixed = plan.model_copy(update={"tasks": moved, "notes": [
        *plan.notes, "capabilities the ranker's candidates missed were matched to the "
                     "nearest agent"]})
    return fixed if not plan_problems(fixed, served) else None


def make_plan(ctx: RunContext, request: str, history: list[Turn]) -> TaskPlan:
    """A knowledge question's, a single change's or a single lookup's plan from code
    (`code_plans`); otherwise ask for a plan, number and review it, with one repair attempt,
    then the nearest-agent fallback, if it is invalid."""
    quick = (knowledge_question(request, history)
             or question_naming_nothing(ctx, request, history)
             or rule_question(ctx, request, history)
             or knowledge_follow_up(ctx, request, history)
             or single_write(ctx, request, history)
             or single_read(ctx, request, history))
    if quick is not None:
        return quick
    registry = get_registry()
    served = {(domain, verb) for verb, domain in capability_matrix(registry).cells}
    spec = ctx.run_model or tier_spec("default")
    capabilities = candidate_capabilities(request, registry)
    schema = plan_schema(list(capabilities))
    messages = _planner_messages(ctx, spec, request, history, capabilities)
    problems: list[str] = []
    plan: TaskPlan | None = None
    for attempt in range(2):
        draft, unreadable = _draft(ctx, spec, messages, schema)
        if draft is None:
            problems = [f"tasks: {unreadable}"]
        elif not draft.tasks:  # nothing to do (off topic): synthesise answers without tasks
            return TaskPlan(tasks=[], notes=["the request asks for nothing the agents do"])
        else:
            plan = review_plan(number_tasks(draft), request,
                               can_write=not ctx.principal.read_only,
                               conversation=render_history(history[:-1]))
            if not plan.tasks and attempt == 1:
                # writes nobody asked for, twice: nothing is done, or a question for
                # information is asked of the knowledge agents ("what's the deadline to
                # cancel my place?" was planned as cancelling the class)
                return (knowledge_plan(request, QUESTION_NOTE)
                        if asks_for_information(request) else plan)
            problems = (plan_problems(plan, served) if plan.tasks else [
                "tasks: the request asks for no change, so a write cannot be its plan: plan "
                "the lookups that answer it, or no tasks"])
            if not problems:
                return plan
        if attempt == 0:
            messages += [AIMessage(draft.model_dump_json() if draft else "(unreadable)"),
                         HumanMessage("That plan is invalid:\n- " + "\n- ".join(problems)
                                      + "\nCapabilities: " + ", ".join(capabilities)
                                      + ".\nReturn a corrected plan.")]
    fixed = _fallback(ctx, plan, served)
    if fixed is not None:
        return fixed
    raise PlanRejected("the plan is invalid: " + "; ".join(problems), problems=problems)


def answered_question(asked: dict[str, Any] | None, request: str) -> TaskPlan | None:
    """The task a clarifying question held, with the slot the person picked, when their
    message is one of its options (a button's text, or the option's words in theirs)."""
    if not asked:
        return None
    said = " ".join(request.split()).casefold()
    picked = [o for o in asked["options"] if o["label"].casefold() == said] or [
        o for o in asked["options"] if o["label"].casefold() in said]
    if len(picked) != 1:
        return None
    task = PlannedTask.model_validate(asked["task"])
    resolved = {**task.resolved, asked["slot"]: {"value": picked[0]["value"],
                                                 "label": picked[0]["label"]}}
    return TaskPlan(tasks=[task.model_copy(update={"resolved": resolved})],
                    notes=[f"the answer to the clarifying question: {asked['slot']} is "
                           f"{picked[0]['label']}"])


def choose_agent(ctx: RunContext, domain: str, verb: str, instruction: str) -> str | None:
    """The agent for one task: of the agents serving (domain, verb), those this caller may
    use (none → all of them, so that a refusal is reported); several → the one the ranker
    finds best for the instruction, so that a refusal names the agent the request meant."""
    registry = get_registry()
    names = capability_matrix(registry).agents_for(domain, verb)
    allowed = [n for n in names if decide(ctx.principal, registry.get(n), verb, plan=ctx.plan)]
    chosen = allowed or list(names)
    if len(chosen) > 1:
        order = [r.agent for r in rank_agents(instruction, top_k=len(registry.agents))]
        chosen.sort(key=lambda n: order.index(n) if n in order else len(order))
    return chosen[0] if chosen else None


def _embed_instructions(plan: TaskPlan) -> None:
    """The instructions `choose_agent` will rank (their capability has several agents), in
    one embedding call rather than one each."""
    matrix = capability_matrix(get_registry())
    ranked = [t.instruction for t in plan.tasks
              if len(matrix.agents_for(t.domain, t.operation)) > 1]
    if len(ranked) > 1:
        get_embedder().embed_queries(ranked)


def decompose(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Plan the request and route every task to an agent."""
    ctx = runtime.context
    ctx.step("decompose")
    plan = answered_question(state.clarifying, state.request) or make_plan(
        ctx, state.request, state.history)
    _embed_instructions(plan)
    tasks = [task.model_copy(update={
        "agent": choose_agent(ctx, task.domain, task.operation, task.instruction)})
        for task in plan.tasks]
    # the plan event keeps its shape: a picked option's record id stays in the checkpoint
    data: dict[str, Any] = {"tasks": [task.model_dump(exclude={"resolved"}) for task in tasks]}
    if plan.notes:
        data["notes"] = plan.notes
    get_stream_writer()({"event": "plan", "data": data})
    return state_update(plan=tasks, results={}, clarifying={})
