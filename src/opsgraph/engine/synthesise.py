"""The synthesise node: one answer — the model writes what was read, code writes what was
done.

The status lines (a change applied, rejected or expired; a task refused, failed or that
proposed nothing) are written by code from each task's actual calls (`engine.answer_text`),
so the answer cannot claim an action nobody took. The model is asked only about what the
query tasks read, and only when they read something; a sentence of its text that claims an
action with no applied change behind it is dropped before it is streamed. Sources are
assembled by code from what the agents read.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from opsgraph.engine import model_calls
from opsgraph.engine.answer_text import collect_sources, fallback_warning, status_lines
from opsgraph.engine.context import RunContext
from opsgraph.engine.state import DONE, Answer, RunState, TaskResult, state_update
from opsgraph.engine.task_outcome import agent_words
from opsgraph.models.factory import tier_spec
from opsgraph.tools.contract import DATA_NOTICE

SYNTHESIS_RULES = """You answer a member of staff of a club or venue.
Use only the findings below: answer the request in one to four short sentences, and copy
names, dates, times and amounts exactly as the findings give them. When the findings do not
answer it, say what is missing. Never say that anything was changed, booked, sent or is
waiting for approval: other lines of the reply report that. No preamble."""

_ACTION = (r"updated|changed|sent|e-?mailed|texted|booked|cancell?ed|refunded|issued|"
           r"registered|assigned|created|applied|scheduled|added|removed|processed|"
           r"approved|rescheduled|moved|frozen|paused|enrolled|signed up|notified|reported")
CLAIM = re.compile(
    rf"\b(?:has|have|had|was|were)\s+(?:now\s+|just\s+|already\s+|successfully\s+)*"
    rf"(?:been\s+)?(?:{_ACTION})\b"
    rf"|\b(?:I|we)(?:'ve| have| just| already)?\s+(?:{_ACTION})\b"
    rf"|\b(?:awaiting|waiting for|pending|sent for|submitted for)\s+(?:\w+\s+){{0,2}}approval\b"
    rf"|\b(?:done|all set)\b[.!]",
    re.IGNORECASE)
NOTHING_FOUND = "I found nothing that answers this request."
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
COALESCE_S = 0.05
"""Sentences that become whole within this of the last `token` event go out together."""


def _applied(results: Mapping[str, TaskResult]) -> bool:
    return any(call.get("change", {}).get("outcome") == "applied"
               for r in results.values() for call in r.calls)


def truthful(sentences: Iterable[str], applied: bool) -> Iterator[str]:
    """The sentences, less any that claims an action when no change was applied."""
    for sentence in sentences:
        if applied or not CLAIM.search(sentence):
            yield sentence


def _findings(results: Mapping[str, TaskResult]) -> list[dict[str, Any]]:
    rows = []
    for tid, r in results.items():
        if r.writes or r.status not in DONE:
            continue
        said = agent_words(r.content)
        if r.findings or said:
            rows.append({"task": tid, "instruction": r.instruction,
                         "found": r.findings or said})
    return rows


def sentence_batches(chunks: Iterable[str], window_s: float = COALESCE_S
                     ) -> Iterator[list[str]]:
    """Whole sentences (with their trailing space) out of a stream of text chunks, in
    batches: the first as soon as it is whole, then whatever became whole since, once
    `window_s` has passed since the last batch (checked as each chunk arrives), and the rest
    at the end. Each batch is one stored `token` event, so a fast stream is a few events,
    not one per sentence, and nothing waits longer than the window and a chunk's gap."""
    buffer, ready = "", []
    last: float | None = None
    for chunk in chunks:
        buffer += chunk
        parts = _SENTENCE_END.split(buffer)
        ends = [m.group(0) for m in _SENTENCE_END.finditer(buffer)]
        ready += [sentence + end for sentence, end in zip(parts[:-1], ends, strict=True)]
        buffer = parts[-1]
        now = time.monotonic()
        if ready and (last is None or now - last >= window_s):
            yield ready
            ready, last = [], now
    if buffer:
        ready.append(buffer)
    if ready:
        yield ready


def shown(sentence: str) -> str:
    """A sentence of the answer as it may be shown: as written, or less what
    `agent_words` keeps out ("" when nothing is left)."""
    kept = agent_words(sentence)
    if kept == sentence.strip():
        return sentence
    return kept + " " if kept else ""


def read_sentences(ctx: RunContext, request: str,
                   results: Mapping[str, TaskResult]) -> Iterator[str]:
    """The answer to what the query tasks read, a few sentences at a time (model, checked;
    stored events coalesced, `sentence_batches`); none when they read nothing. A paused
    run answers with it before its cards are decided."""
    findings = _findings(results)
    if not findings:
        return
    if len(findings) == 1 and isinstance(findings[0]["found"], str):
        # one task answered in its own words from what it read (a knowledge agent,
        # held to its reading rules): passed on as it is, without a second model call
        stream: Iterable[str] = iter([findings[0]["found"]])
    else:
        messages = [SystemMessage(SYNTHESIS_RULES),
                    HumanMessage(f"Today: {ctx.today_line()}.\nRequest: {request}"
                                 f"\n\nFindings. {DATA_NOTICE}\n"
                                 + json.dumps(findings, default=str, ensure_ascii=False))]
        stream = model_calls.stream_text(ctx, ctx.run_model or tier_spec("default"),
                                         messages, stage="synthesise")
    applied = _applied(results)
    for batch in sentence_batches(stream):
        # markup, tool talk or our prompt's words: never in an answer
        text = "".join(shown(said) for said in truthful(batch, applied))
        if text:
            yield text


def synthesise(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Stream the answer: what was read (model, checked), then what was done (code).

    A harness step that is not final (`supervisor` with `final: false`) gets the answer in
    the state and nothing is streamed: a later step decides what the person sees. A plan
    with nothing to do (an off-topic message) is answered with the tenant's
    `off_topic_reply` when it has one."""
    ctx = runtime.context
    ctx.step("synthesise")
    sends = state.harness is None or state.harness.sends
    writer = get_stream_writer()

    def emit(event: dict[str, Any]) -> None:
        if sends:
            writer(event)

    results = state.results
    parts: list[str] = []
    for sentence in read_sentences(ctx, state.request, results):
        parts.append(sentence)
        emit({"event": "token", "data": {"text": sentence}})
    lines = status_lines(results)
    if lines:
        text = ("\n\n" if "".join(parts).strip() else "") + "\n".join(lines)
        parts.append(text)
        emit({"event": "token", "data": {"text": text}})
    if not "".join(parts).strip():
        empty = (ctx.off_topic_reply.strip() if not state.plan and ctx.off_topic_reply.strip()
                 else NOTHING_FOUND)
        parts.append(empty)
        emit({"event": "token", "data": {"text": empty}})
    answer = Answer(text="".join(parts).strip(), sources=collect_sources(results))
    asked = clarifying(state)
    options = {"options": [o["label"] for o in asked["options"]]} if asked else {}
    emit({"event": "answer", "data": {**answer.model_dump(), **options,
                                      **fallback_warning(state.harness)}})
    if not sends:
        return state_update(answer=answer, clarifying=asked)
    return state_update(answer=answer, clarifying=asked,
                        history=[{"role": "assistant", "content": answer.text}])


def clarifying(state: RunState) -> dict[str, Any]:
    """The question a task asked (`{task, slot, options}`) for the next message to answer,
    or {} (no question: an earlier one is cleared)."""
    for task in state.plan:
        result = state.results.get(task.id)
        if result is not None and result.status == "needs_input" and result.asking:
            return {"task": task.model_dump(), "slot": result.asking["slot"],
                    "options": list(result.asking["options"])}
    return {}
