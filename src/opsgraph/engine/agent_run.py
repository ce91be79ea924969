"""Run one sub-task with its agent: prompt, bound tools, the tool loop, proposals."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.types import interrupt

from opsgraph.approvals.pending import record_pending
from opsgraph.approvals.resume import ResumeValue
from opsgraph.engine import model_calls
from opsgraph.engine.context import RunContext
from opsgraph.engine.context_budget import result_chars
from opsgraph.engine.few_shot import agent_examples
from opsgraph.engine.memory import recent_exchange
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.pre_search import PreSearch, pre_search
from opsgraph.engine.read_answer import answer_from_passages, passage_messages
from opsgraph.engine.slot_reading import SlotReading, checked_tools, direct_calls, pick_free
from opsgraph.engine.state import TaskResult
from opsgraph.engine.tool_loop import AskModel, Decided, LoopResult, OnProposal, run_tool_loop
from opsgraph.faults import crash_point
from opsgraph.harness import modules
from opsgraph.models.factory import get_chat_model
from opsgraph.models.overrides import resolve_model_spec
from opsgraph.models.prompt_cache import cached_system_message
from opsgraph.operations.base import Context
from opsgraph.registry.prompt import system_prompt
from opsgraph.settings import get_settings
from opsgraph.status_words import OUTCOME_STATUS, change_label
from opsgraph.tools.binding import bind_agent_tools
from opsgraph.tools.contract import DATA_NOTICE, BoundTool, Proposal

if TYPE_CHECKING:
    from opsgraph.registry.spec import AgentSpec


def task_brief(ctx: RunContext, task: PlannedTask, dep_results: dict[str, TaskResult]) -> str:
    """The human turn of an agent: today's date, who asks, their words, its own task, the
    thread's recent exchange and what earlier tasks found (as data) — and nothing else."""
    lines = [f"Today: {ctx.today_line()}.",
             f"Asked by: {ctx.caller_line()}.",
             f"Their message: {json.dumps(ctx.request, ensure_ascii=False)}",
             f"Your task: {task.instruction}",
             *agent_examples(ctx.scope, task.agent, task.instruction,
                             ctx.few_shot_agents())]
    exchange = recent_exchange(ctx.history)
    if exchange:  # a follow-up keeps its subject: "and off-peak?", "her other one"
        lines += ["", "The conversation before their message (names in it are who and what "
                      "\"her\", \"it\" or \"that one\" refer to):", exchange]
    if dep_results:
        found = {tid: {"agent": r.agent, "status": r.status,
                       "result": r.content or r.findings}
                 for tid, r in dep_results.items()}
        lines += ["", "Results of the tasks this one depends on. " + DATA_NOTICE,
                  json.dumps(found, default=str, ensure_ascii=False)]
    return "\n".join(lines)


def decision_message(decision: ResumeValue) -> tuple[bool, str]:
    """What the agent is told after a person decided its proposal."""
    outcome = decision.outcome
    who = decision.decided_by_name or decision.decided_by or "a manager"
    if outcome == "applied":
        edited = " with edits" if decision.edited else ""
        return True, (f"Approved{edited} by {who} and applied. Result: "
                      + json.dumps(decision.result, default=str))
    if outcome == "revise":
        return False, (f"{who} asked for a revision: {decision.feedback or '(no text)'}. "
                       "Propose a revised change with the same tool.")
    if outcome == "rejected":
        why = decision.feedback
        return False, f"Rejected by {who}" + (f": {why}" if why else "") + ". Nothing changed."
    if outcome == "expired":
        return False, "The proposal expired before anyone decided. Nothing changed."
    return False, f"The change failed to apply: {decision.error or outcome}."


def proposal_handler(ctx: RunContext, agent: str, task_id: str,
                     waits_for: tuple[str, ...] = ()) -> OnProposal:
    """Record each proposal as a pending change (waiting for `waits_for`, the changes of
    the tasks it depends on), then pause for the decision.

    Recording is idempotent (thread, task, fingerprint), because on resume the code before
    `interrupt()` runs again.
    """
    attempts = itertools.count()  # replays in the same order, so the same attempt numbers

    def on_proposal(proposal: Proposal) -> Decided:
        ctx.step(f"the proposal of task {task_id}")  # a write to the thread: lease first
        change = record_pending(
            ctx.scope, thread_id=ctx.thread_id, task_id=task_id, agent=agent,
            operation=proposal.operation, args=proposal.args, preview=proposal.preview,
            proposed_by=ctx.principal.user_id, attempt=next(attempts), waits_for=waits_for)
        crash_point("after_propose")
        decision = interrupt({"change_id": change.change_id, "task_id": task_id,
                              "card": change.card()})
        told = ResumeValue.model_validate(decision)
        applied, message = decision_message(told)
        outcome = {"change_id": change.change_id, "operation": change.operation,
                   "summary": change.summary, "outcome": told.outcome,
                   "decided_by": told.decided_by, "decided_by_name": told.decided_by_name,
                   "feedback": told.feedback, "error": told.error,
                   "status_label": change_label(OUTCOME_STATUS.get(told.outcome,
                                                                   told.outcome))}
        return Decided(applied, message, {k: v for k, v in outcome.items() if v is not None})

    return on_proposal


def _asker(ctx: RunContext, spec: str, task_id: str, checkpointed: bool) -> AskModel:
    def ask(messages: list[BaseMessage], tools: list[dict[str, Any]],
            choice: str | None) -> AIMessage:
        if checkpointed:
            return model_calls.model_turn_task(spec, list(messages), tools, "task", task_id,
                                          choice).result()
        return model_calls.invoke(ctx, spec, messages, tools, stage="task", task_id=task_id,
                                  choice=choice)

    return ask


def run_agent(ctx: RunContext, agent: AgentSpec, task: PlannedTask,
              dep_results: dict[str, TaskResult],
              waits_for: tuple[str, ...] = ()) -> LoopResult:
    """Run `agent` on `task`; action agents' turns are checkpointed and may interrupt (their
    proposals waiting for `waits_for`)."""
    tools = bind_agent_tools(Context(ctx.scope, ctx.principal),
                             [*agent.tools, *(op for op in modules.extra_tools(ctx.modules,
                                                                                agent.name)
                                              if op not in agent.tools)], ctx.plan)
    requires = {op.replace(".", "_"): [r.replace(".", "_") for r in needs]
                for op, needs in agent.requires.items()}
    spec = resolve_model_spec(ctx.scope, agent.name, agent.model_tier, ctx.run_model,
                              overrides=ctx.model_overrides)
    acts = agent.kind == "action"
    answers = searches_first(agent)
    reading = read_slots(ctx, agent, task) if acts else SlotReading()
    pick_free(tools, reading)
    asked = reading.question()
    if asked is not None:  # ask, don't guess: no model call until the person picks one
        return clarifying_result(reading, asked)
    tools = checked_tools(tools, reading)
    found = pre_search(tools, task.instruction, ctx.request) if answers else None
    system = cached_system_message(get_chat_model(spec), system_prompt(agent)
                                   + modules.prompt_section(ctx.modules, agent.name))
    brief = task_brief(ctx, task, dep_results)
    for block in (reading.brief(), found.block if found is not None else ""):
        if block:
            brief += "\n\n" + block
    messages: list[BaseMessage] = [system, HumanMessage(brief)]
    write_tool = task_write_tool(tools, task) if acts else None
    ask = _asker(ctx, spec, task.id, checkpointed=acts)
    if found is not None and found.passages:  # one call from what was read, no tools
        answered = answer_from_passages(ask, passage_messages(ctx, spec, task, found,
                                                              ctx.tasks_planned > 1),
                                        found.unknown_words)
        if answered is not None:
            with_pre_search(answered, found)
            answered.findings = []  # its answer, not the raw reads, is what it found
            return answered
    direct = (direct_calls(ctx, tools, write_tool, reading) if acts and direct_proposals()
              else None)
    result = run_tool_loop(
        ask=ask if direct is None else code_first(ask, write_tool or "", direct),
        tools=tools, requires=requires,
        messages=messages, max_rounds=agent.round_limit, agent=agent.name,
        on_proposal=proposal_handler(ctx, agent.name, task.id, waits_for) if acts else None,
        run_round=model_calls.replayable_round if acts else None,
        first_call=write_tool, answers=answers,
        result_chars=result_chars(spec))
    if found is not None:
        with_pre_search(result, found)
    result.calls[:0] = reading.code_calls  # the reads code made to fill a slot
    result.tool_calls += len(reading.code_calls)
    if answers and result.content.strip():
        # Its answer was written and checked from what it read (or says what it could not
        # find, or asks which reading is meant): that, not the raw reads, is what it found.
        result.findings = []
    return result


def read_slots(ctx: RunContext, agent: AgentSpec, task: PlannedTask) -> SlotReading:
    """An action agent's typed slots as the resolver reads them in the task's words."""
    # Only an action agent's task reads its words with the resolver: a run whose agents
    # only read (the usual first request) never imports it.
    # heavy: opsgraph.resolve.resolver (cold start)
    from opsgraph.engine import slot_filling

    return slot_filling.read_slots(ctx, agent, task, ctx.tasks_planned > 1)


def direct_proposals() -> bool:
    """`OPSGRAPH_DIRECT_PROPOSALS`: a write whose every required argument code resolved is
    proposed with no model turn."""
    return get_settings().direct_proposals


def code_first(ask: AskModel, tool: str, calls: list[dict[str, Any]]) -> AskModel:
    """`ask`, except that the first turn (no assistant message yet) is the write calls code
    built from the resolved slots — checkpointed like a model turn, so a resumed run
    replays them rather than resolving again at another clock."""
    def first(messages: list[BaseMessage], tools: list[dict[str, Any]],
              choice: str | None) -> AIMessage:
        if any(isinstance(m, AIMessage) for m in messages):
            return ask(messages, tools, choice)
        return model_calls.code_turn_task(tool, calls).result()

    return first


def clarifying_result(reading: SlotReading, asked: tuple[str, list[str], str]) -> LoopResult:
    """The loop's result for a task that asks which record a required slot means."""
    question, _, slot = asked
    mention = reading.ambiguous[slot]
    options = [{"value": c.value, "label": c.label} for c in mention.candidates]
    return LoopResult(content=question, rounds=0,
                      asking={"question": question, "slot": slot, "options": options})


def searches_first(agent: AgentSpec) -> bool:
    """A query agent with the knowledge search: it starts from a pre-search and writes its
    own answer (it navigates before it reads, so a successful round is not the end)."""
    return agent.kind == "query" and "knowledge.search" in agent.tools


def with_pre_search(result: LoopResult, found: PreSearch) -> LoopResult:
    """The loop's result with the pre-search's calls, findings and sources first."""
    result.calls[:0] = found.calls
    result.findings[:0] = found.findings
    result.sources[:0] = found.sources
    result.tool_calls += len(found.calls)
    return result


def task_write_tool(tools: dict[str, BoundTool], task: PlannedTask) -> str | None:
    """The one write tool that does what the task asks (its domain and verb), if there is
    exactly one: an action agent's first turn is held to calling it."""
    found = [name for name, tool in tools.items() if tool.kind == "preview"
             and tool.operation.domain == task.domain
             and tool.operation.verb == task.operation]
    if len(found) != 1:  # no exact match: the verb may be served by a differently named op
        writes = [name for name, tool in tools.items() if tool.kind == "preview"]
        found = writes if len(writes) == 1 else []
    return found[0] if found else None
