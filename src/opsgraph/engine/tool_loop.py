"""The one tool-calling primitive every agent uses.

Hand the model the agent's tools, dispatch each requested call by name — independent calls
of one round concurrently — and return each result to the context as data. Every tool is
offered from the first round; a call made before its prerequisites (the tool-prerequisite
DAG's frontier) answers a clear error ("first call bookings_availability"), which a model
can act on, where a hidden tool only gets written out as text.

Three stop rules:
- a query agent stops as soon as one round of calls all succeeded and opened no tool that
  waited for them (its spec's next step, e.g. a get after a search): what the tools
  returned goes to the synthesiser as it is, with no second model turn (a failed call gets
  another round, up to `max_rounds`);
- a query agent that writes its own answer (`answers`: the knowledge agents, which
  navigate — search, grep, outline — before they read) stops after the first turn that
  answers without tool calls; after `max_rounds` rounds it is told its step budget is
  spent and asked once for its answer from what it read, and one that still asks for
  tools ends with a line written by code saying it found no answer in its budget — never a
  silent failure; either way the result says it stopped on the budget (`stopped`);
- an action agent must call a tool in its first turn — the write tool that does what the
  task asks, when there is one (a grammar-constrained server then writes a well-formed call,
  and the reads it needs are made first when its arguments determine them) — and one that
  answers without having proposed anything is asked once more to propose; it stops after
  a decided proposal or `max_rounds` loops.
A call written as text instead of a tool call is read as the call it spells out. After the
last allowed round the model is told so and asked once more without tools; a model that
still asks for tools has run away and the loop stops with `CapReached` (an answering agent
ends with `NO_ANSWER` instead).
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from opsgraph.engine.context import CapReached
from opsgraph.operations.base import Source
from opsgraph.telemetry.traces import span
from opsgraph.tools.bounds import bound_data, narrowing_fields
from opsgraph.tools.contract import BoundTool, Proposal, ToolOutcome
from opsgraph.tools.prerequisites import frontier, prerequisite_args

AskModel = Callable[[list[BaseMessage], list[dict[str, Any]], str | None], AIMessage]
"""(messages, tools offered, tool choice) → the model's reply. The choice is None (the
model decides), "any" (it must call a tool) or a tool's name (it must call that one)."""
Dispatch = Callable[[Sequence[dict[str, Any]], Mapping[str, BoundTool],
                     Mapping[str, Sequence[str]], set[str]], list[ToolOutcome]]
"""Runs one round of tool calls; action agents pass a checkpointed one."""


@dataclass(frozen=True, slots=True)
class Decided:
    """What became of a proposal: applied or not, what the model is told, the card."""

    applied: bool
    message: str
    change: dict[str, Any]
    """`{change_id, operation, summary, outcome, decided_by?, feedback?}`"""


OnProposal = Callable[[Proposal], Decided]
"""Records a proposal and waits for the decision."""

# Tool calls are I/O (MongoDB); a small shared pool runs the calls of one round together.
_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="opsgraph-tool")
RESULT_CHARS = 2000
"""How much of a tool's output an event carries (the dashboard and the evals read it)."""
FINDING_CHARS = 6000
"""How much of a tool's output the synthesiser reads."""
BUDGET_SPENT = ("Your step budget of {rounds} tool rounds is spent: no more tool calls. Answer "
                "now from what the tools returned; if that does not answer the request, say "
                "plainly what you could not find.")
NO_ANSWER = ("I could not find an answer within my step budget of {rounds} tool rounds "
             "(searching did not lead to a section that answers it).")
NUDGE = ("You have not proposed anything yet. Call the write tool now with the details from "
         "the request; if a required detail is missing or a name matches several records, "
         "say exactly what is missing instead.")


@dataclass
class LoopResult:
    """What an agent's loop produced."""

    content: str
    rounds: int
    sources: list[Source] = field(default_factory=list)
    tool_calls: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Each call in order: tool, arguments, whether it succeeded, trimmed output and, for a
    proposal, the change and what became of it."""
    findings: list[dict[str, Any]] = field(default_factory=list)
    """What the successful read calls returned: `{tool, args, data}` (trimmed)."""
    stopped: str | None = None
    """The limit that ended the loop when one did: `tool_rounds` (the step budget)."""
    asking: dict[str, Any] | None = None
    """Set instead of running when a required slot is ambiguous: the clarifying question
    (`{question, slot, options}`)."""

    @property
    def proposed(self) -> bool:
        return any("change" in call for call in self.calls)


def trim(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str,
                                                           ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def call_record(call: Mapping[str, Any], ok: bool, result: Any) -> dict[str, Any]:
    """One tool call as events and task results keep it: name, arguments, outcome, output."""
    return {"tool": call.get("name", ""), "args": dict(call.get("args") or {}), "ok": ok,
            "result": trim(result, RESULT_CHARS)}


def _text(message: AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "".join(parts)


_FENCED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)|```(?:json)?\s*(.*?)```",
                     re.DOTALL)
_NAMED_CALL = re.compile(r"\b([a-z]+_[a-z_]+)\s*\(\s*(\{.*\})\s*\)", re.DOTALL)


def _json_objects(text: str) -> list[Any]:
    """The JSON values in `text`: fenced or tagged blocks, else the whole text."""
    blocks = [a or b for a, b in _FENCED.findall(text)] or [text]
    found = []
    for block in blocks:
        start = block.find("{")
        if start < 0:
            continue
        try:
            found.append(json.loads(block[start:block.rfind("}") + 1]))
        except json.JSONDecodeError:
            continue
    return found


def calls_in_text(text: str, names: Sequence[str]) -> list[dict[str, Any]]:
    """Tool calls a model wrote as text (`{"name": ..., "arguments": {...}}`, a
    `<tool_call>` block, or `tool_name({...})`), for tools in `names` only."""
    calls = []
    for value in _json_objects(text):
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict) or item.get("name") not in names:
                continue
            args: Any = next((item[k] for k in ("arguments", "args", "parameters")
                         if isinstance(item.get(k), dict)), {})
            calls.append({"name": item["name"], "args": args})
    if not calls:
        for name, body in _NAMED_CALL.findall(text):
            try:
                args = json.loads(body)
            except json.JSONDecodeError:
                continue
            if name in names and isinstance(args, dict):
                calls.append({"name": name, "args": args})
    return [{**c, "id": f"text_call_{n}", "type": "tool_call"} for n, c in enumerate(calls)]


def _looks_like_schema(args: Mapping[str, Any]) -> bool:
    return "properties" in args and args.get("type") in ("object", None)


def dispatch(calls: Sequence[dict[str, Any]], tools: Mapping[str, BoundTool],
             requires: Mapping[str, Sequence[str]], succeeded: set[str]) -> list[ToolOutcome]:
    """Run one round's calls by name, concurrently; an unknown tool, a call before its
    prerequisites or a schema passed as arguments answers an error the model can act on."""
    ready = frontier(list(tools), requires, succeeded)

    def one(call: dict[str, Any]) -> ToolOutcome:
        name = call.get("name", "")
        args = call.get("args") or {}
        if name not in tools:
            return ToolOutcome(False, f"unknown tool {name!r}; available: {', '.join(tools)}")
        if name not in ready:
            missing = [r for r in requires.get(name, ()) if r not in succeeded]
            return ToolOutcome(False, f"{name} cannot run yet: first call "
                                      + " and ".join(missing) + " successfully")
        if isinstance(args, Mapping) and _looks_like_schema(args):
            return ToolOutcome(False, f"those are {name}'s parameter definitions, not values: "
                                      "call it again with the values themselves")
        with span("tool", tool=name):
            return tools[name].call(args)

    if len(calls) == 1:
        return [one(calls[0])]
    # each call in a copy of this context: its log lines and spans keep the run's ids
    futures = [_POOL.submit(contextvars.copy_context().run, one, call) for call in calls]
    return [f.result() for f in futures]


def _read_as_calls(reply: AIMessage, names: Sequence[str]) -> AIMessage:
    """`reply`, with a call written as text turned into a real tool call."""
    if reply.tool_calls:
        return reply
    calls = calls_in_text(_text(reply), names)
    return AIMessage(content="", tool_calls=calls) if calls else reply


def run_tool_loop(*, ask: AskModel, tools: Mapping[str, BoundTool],
                  requires: Mapping[str, Sequence[str]], messages: list[BaseMessage],
                  max_rounds: int, agent: str, on_proposal: OnProposal | None = None,
                  run_round: Dispatch | None = None, first_call: str | None = None,
                  answers: bool = False, result_chars: int | None = None) -> LoopResult:
    """Run the model ↔ tools loop until the model answers without tool calls (or, for a
    query agent that does not write its own answer, until a round of calls all succeeded).
    `on_proposal` marks an action agent; `answers` a query agent that writes its answer;
    `result_chars` bounds each tool result as the model sees it (`tools.bounds`)."""
    acts = on_proposal is not None
    result = LoopResult(content="", rounds=0)
    succeeded: set[str] = set()
    nudged = False
    while True:
        open_ = result.rounds < max_rounds
        offered = list(tools) if open_ else []
        if not open_ and result.stopped is None:
            result.stopped = "tool_rounds"
            messages.append(HumanMessage(BUDGET_SPENT.format(rounds=max_rounds)))
        must_call = acts and open_ and result.rounds == 0 and not nudged
        choice = (first_call if first_call in offered else "any") if must_call else None
        shown = offered if choice is None or choice not in tools else [choice]  # held: only it
        reply = ask(messages, [tools[name].schema() for name in shown], choice)
        reply = _read_as_calls(reply, offered)
        messages.append(reply)
        if not reply.tool_calls:
            if acts and open_ and not result.proposed and not nudged:
                nudged = True
                messages.append(HumanMessage(NUDGE))
                continue
            result.content = _text(reply)
            return result
        if not open_ and answers:
            result.content = NO_ANSWER.format(rounds=max_rounds)
            messages[-1] = AIMessage(content=result.content)
            return result
        if not open_:
            raise CapReached("tool_rounds",
                             f"{agent} stopped at its cap of {max_rounds} tool rounds")
        result.rounds += 1
        ready = set(frontier(list(tools), requires, succeeded))
        all_ok, settled = _run_round(result, reply, Round(tools, requires, succeeded,
                                                          result_chars),
                                     messages, on_proposal, run_round or dispatch)
        opened = set(frontier(list(tools), requires, succeeded)) - ready - succeeded
        if (all_ok and not acts and not answers and not opened) or settled:
            return result


def _prerequisite_calls(calls: Sequence[dict[str, Any]], tools: Mapping[str, BoundTool],
                        requires: Mapping[str, Sequence[str]],
                        succeeded: set[str]) -> list[dict[str, Any]]:
    """The reads a round's calls skipped that their own arguments fully determine, to be
    made first (a model that calls `members_update` before `members_get` gets the get made
    for it, rather than an error it may not recover from)."""
    auto: list[dict[str, Any]] = []
    called = {c.get("name") for c in calls}
    for call in calls:
        for needed in requires.get(str(call.get("name")), ()):
            tool = tools.get(needed)
            if (tool is None or tool.kind != "read" or needed in succeeded or needed in called
                    or any(r not in succeeded for r in requires.get(needed, ()))):
                continue
            fields = {info.alias or name: info.is_required()
                      for name, info in tool.operation.input.model_fields.items()}
            args = prerequisite_args(fields, call.get("args") or {})
            if args is not None:
                called.add(needed)
                auto.append({"name": needed, "args": args, "id": f"auto_{needed}",
                             "type": "tool_call"})
    return auto


@dataclass(frozen=True, slots=True)
class Round:
    """What one round of calls runs against: the tools, their prerequisites, the tools that
    succeeded so far, and the bound on a result as the model sees it."""

    tools: Mapping[str, BoundTool]
    requires: Mapping[str, Sequence[str]]
    succeeded: set[str]
    result_chars: int | None = None

    def shown(self, name: str, outcome: ToolOutcome) -> str:
        """The tool message of one outcome: bounded, a cut list saying how to narrow it."""
        return outcome.for_model(self.result_chars, self.narrow(name))

    def narrow(self, name: str) -> list[str]:
        """The arguments that narrow a list of tool `name`."""
        tool = self.tools.get(name)
        return narrowing_fields(tool.operation) if tool is not None else []


def _run_round(result: LoopResult, reply: AIMessage, at: Round, messages: list[BaseMessage],
               on_proposal: OnProposal | None, run: Dispatch) -> tuple[bool, bool]:
    """Dispatch one round — the skipped prerequisite reads its calls determine first —
    record every call, answer each in the context.

    Returns (every call succeeded, a proposal was settled): a decided proposal — applied,
    rejected, expired — ends an action agent's work; only a revision asks for more.
    """
    calls: list[dict[str, Any]] = [dict(c) for c in reply.tool_calls]
    tools, requires, succeeded = at.tools, at.requires, at.succeeded
    auto = _prerequisite_calls(calls, tools, requires, succeeded)
    if auto:  # the context shows them as calls of this turn, answered like any other
        messages[-1] = AIMessage(content=reply.content, tool_calls=[*auto, *reply.tool_calls])
        _record(result, auto, run(auto, tools, requires, succeeded), at, messages, None)
    return _record(result, calls, run(calls, tools, requires, succeeded), at, messages,
                   on_proposal)


def _record(result: LoopResult, calls: list[dict[str, Any]], outcomes: list[ToolOutcome],
            at: Round, messages: list[BaseMessage],
            on_proposal: OnProposal | None) -> tuple[bool, bool]:
    """Keep each call's outcome (a proposal goes to `on_proposal`), answer it in the
    context; (all succeeded, a proposal was settled)."""
    all_ok = True
    settled = False
    succeeded = at.succeeded
    for call, outcome in zip(calls, outcomes, strict=True):
        ok, text = outcome.ok, at.shown(call["name"], outcome)
        record = call_record(call, ok, outcome.content if ok else text)
        if outcome.proposal is not None:
            if on_proposal is None:
                ok, text = False, "this agent cannot propose changes"
                record.update(ok=False, result=text)
            else:
                decided = on_proposal(outcome.proposal)
                ok, text = decided.applied, decided.message
                record.update(ok=ok, change=decided.change)
                settled = settled or decided.change.get("outcome") != "revise"
        elif ok:
            result.findings.append({"tool": call["name"], "args": record["args"],
                                    "data": trim(bound_data(outcome.content, FINDING_CHARS,
                                                            at.narrow(call["name"])),
                                                 FINDING_CHARS)})
        all_ok = all_ok and ok
        result.tool_calls += 1
        result.calls.append(record)
        result.sources.extend(outcome.sources)
        if ok:
            succeeded.add(call["name"])
        messages.append(ToolMessage(text, tool_call_id=call.get("id") or call["name"],
                                    name=call["name"]))
    return all_ok, settled
