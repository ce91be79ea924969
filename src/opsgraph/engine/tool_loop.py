"""The one tool-calling primitive every agent uses.

Hand the model the tools it may call now (the prerequisite frontier), dispatch each
requested call by name — independent calls of one round concurrently — and return each
result to the context as data. Two things differ per agent: the tool set and the stop rule
(`max_rounds`: query agents 2 tool rounds, action agents 5 loops). After the last allowed
round the model is asked once more without tools; a model that still asks for tools has
run away and the loop stops with `CapReached`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from opsgraph.engine.context import CapReached
from opsgraph.operations.base import Source
from opsgraph.tools.contract import BoundTool, Proposal, ToolOutcome
from opsgraph.tools.prerequisites import frontier

AskModel = Callable[[list[BaseMessage], list[dict[str, Any]]], AIMessage]
Dispatch = Callable[[Sequence[dict[str, Any]], Mapping[str, BoundTool], Sequence[str],
                     Mapping[str, Sequence[str]], set[str]], list[ToolOutcome]]
"""Runs one round of tool calls; action agents pass a checkpointed one."""
OnProposal = Callable[[Proposal], tuple[bool, str]]
"""Records a proposal and waits for the decision; returns (applied, message for the model)."""

# Tool calls are I/O (MongoDB); a small shared pool runs the calls of one round together.
_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="opsgraph-tool")


@dataclass
class LoopResult:
    """What an agent's loop produced."""

    content: str
    rounds: int
    sources: list[Source] = field(default_factory=list)
    tool_calls: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Each call in order: tool name and whether it succeeded (approved, for a proposal)."""


def _text(message: AIMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "".join(parts)


RESULT_CHARS = 600
"""How much of a tool's output an event carries (the dashboard and the evals read it)."""


def call_record(call: Mapping[str, Any], ok: bool, result: Any) -> dict[str, Any]:
    """One tool call as events and task results keep it: name, arguments, outcome, output."""
    text = result if isinstance(result, str) else json.dumps(result, default=str,
                                                              ensure_ascii=False)
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS] + "…"
    return {"tool": call.get("name", ""), "args": dict(call.get("args") or {}), "ok": ok,
            "result": text}


def _closed(name: str, tools: Mapping[str, BoundTool], requires: Mapping[str, Sequence[str]],
            succeeded: set[str]) -> ToolOutcome:
    if name not in tools:
        return ToolOutcome(False, f"unknown tool {name!r}; available: {', '.join(tools)}")
    missing = [r for r in requires.get(name, ()) if r not in succeeded]
    return ToolOutcome(False, f"{name} is not available yet: first complete "
                              + ", ".join(missing))


def dispatch(calls: Sequence[dict[str, Any]], tools: Mapping[str, BoundTool],
             offered: Sequence[str], requires: Mapping[str, Sequence[str]],
             succeeded: set[str]) -> list[ToolOutcome]:
    """Run one round's calls by name, concurrently; closed or unknown tools answer an error."""
    def one(call: dict[str, Any]) -> ToolOutcome:
        name = call.get("name", "")
        if name not in offered:
            return _closed(name, tools, requires, succeeded)
        return tools[name].call(call.get("args") or {})

    if len(calls) == 1:
        return [one(calls[0])]
    return list(_POOL.map(one, calls))


def run_tool_loop(*, ask: AskModel, tools: Mapping[str, BoundTool],
                  requires: Mapping[str, Sequence[str]], messages: list[BaseMessage],
                  max_rounds: int, agent: str, on_proposal: OnProposal | None = None,
                  run_round: Dispatch | None = None) -> LoopResult:
    """Run the model ↔ tools loop until the model answers without tool calls."""
    succeeded: set[str] = set()
    result = LoopResult(content="", rounds=0)
    while True:
        offered = frontier(list(tools), requires, succeeded) if result.rounds < max_rounds else []
        reply = ask(messages, [tools[name].schema() for name in offered])
        messages.append(reply)
        if not reply.tool_calls:
            result.content = _text(reply)
            return result
        if result.rounds >= max_rounds:
            raise CapReached("tool_rounds",
                             f"{agent} stopped at its cap of {max_rounds} tool rounds")
        result.rounds += 1
        calls: list[dict[str, Any]] = [dict(c) for c in reply.tool_calls]
        outcomes = (run_round or dispatch)(calls, tools, offered, requires, succeeded)
        for call, outcome in zip(calls, outcomes, strict=True):
            ok, text = outcome.ok, outcome.for_model()
            if outcome.proposal is not None:
                if on_proposal is None:
                    ok, text = False, "this agent cannot propose changes"
                else:
                    ok, text = on_proposal(outcome.proposal)
            result.tool_calls += 1
            result.calls.append(call_record(call, ok, text if not ok else outcome.content))
            result.sources.extend(outcome.sources)
            if ok:
                succeeded.add(call["name"])
            messages.append(ToolMessage(text, tool_call_id=call.get("id") or call["name"],
                                        name=call["name"]))
