"""The synthesise node: one answer from the task results; sources assembled by code."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from opsgraph.engine import model_calls
from opsgraph.engine.context import RunContext
from opsgraph.tools.contract import DATA_NOTICE

SYNTHESIS_RULES = """You write the single reply to a member of staff of a club or venue.
Use only the task results below. Say plainly what was done, what is waiting for a manager's
approval, and what was refused or failed and why. A change was made or proposed only if a
task's `calls` show that tool succeeding; never claim more than they show. Be brief; no
preamble."""


def collect_sources(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every record and document the agents actually read, once, in task order."""
    seen: set[tuple[str, str]] = set()
    sources = []
    for result in results.values():
        for src in result.get("sources") or []:
            key = (src["kind"], src["id"])
            if key not in seen:
                seen.add(key)
                sources.append(src)
    return sources


def _brief(results: dict[str, dict[str, Any]]) -> str:
    rows = [{"task": tid, "agent": r.get("agent"), "status": r.get("status"),
             "result": r.get("content"), "calls": r.get("calls", []), "error": r.get("error")}
            for tid, r in results.items()]
    return json.dumps(rows, default=str, ensure_ascii=False)


def synthesise(state: dict[str, Any], runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Stream the answer's tokens, then the answer with its sources."""
    from opsgraph.models.factory import tier_spec

    ctx = runtime.context
    emit = get_stream_writer()
    results = state.get("results") or {}
    messages = [SystemMessage(SYNTHESIS_RULES),
                HumanMessage(f"Request: {state['request']}\n\nTask results. {DATA_NOTICE}\n"
                             + _brief(results))]
    parts = []
    for text in model_calls.stream_text(ctx, ctx.run_model or tier_spec("default"), messages,
                                        stage="synthesise"):
        parts.append(text)
        emit({"event": "token", "data": {"text": text}})
    answer = {"text": "".join(parts), "sources": collect_sources(results)}
    emit({"event": "answer", "data": answer})
    return {"answer": answer, "history": [{"role": "assistant", "content": answer["text"]}]}
