"""Pre-search: a knowledge agent starts with the search already made and the best sections
already read, so that when the answer is there one model call is enough.

Before the agent's first model call, code calls the agent's own bound `knowledge_search`
tool on the task's instruction (the planner's words for this one task: on the labelled
questions it finds the right section in the top five more often than the person's whole
message, which may also ask for other things), then `knowledge_read_section` (or
`knowledge_get_object`) on the best hits while their text fits `READ_CHARS`. The calls go
through the same guarded path as the model's (gates, audit, the tool contract): a caller
who may not search gets no pre-search, and a tool left out (an empty knowledge base) is
not called. They are recorded in the task's calls like any other, marked `"by": "code"`;
what the pre-reads returned are sources exactly as if the agent had read them, while the
search hits are navigation only. The agent gets both in its first message, as data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opsgraph.engine.tool_loop import FINDING_CHARS, call_record, trim
from opsgraph.operations.base import Source
from opsgraph.tools.contract import DATA_NOTICE, BoundTool

SEARCH = "knowledge_search"
READS = {"section": "knowledge_read_section", "object": "knowledge_get_object"}
READ_CHARS = 2400
"""Text pre-read for the agent, at most (about 600 tokens; the demo's sections are 150
characters at the median and 630 at the longest, so this is the top three or four)."""
MAX_READS = 3
"""Sections pre-read at most: on the labelled questions the right one is among the top
three hits 96 % of the time (top one: 73 %)."""
HINT_CHARS = 160
"""How much of a hit that was not pre-read the agent sees (its id and title say more)."""
QUERY_CHARS = 500
"""The search tool's longest query."""


@dataclass
class PreSearch:
    """What code looked up and read before the agent's first turn."""

    block: str
    """The first message's data block: the hits, then the sections read."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    """What was read, one passage each: `[id] title` and its text."""
    unknown_words: list[str] = field(default_factory=list)
    """The query's words that nothing in the knowledge base uses (`Index.unknown_words`)."""


def search_query(instruction: str, message: str) -> str:
    """The instruction as one line (the message when there is none), within the limit."""
    text = " ".join((instruction.strip() or message).split())
    return text if len(text) <= QUERY_CHARS else text[:QUERY_CHARS].rsplit(" ", 1)[0]


def _read_args(hit: Mapping[str, Any]) -> dict[str, Any]:
    if hit.get("kind") == "section":
        return {"document": hit["document"], "section": hit["id"]}
    return {"object": hit["id"]}


def _call(tools: Mapping[str, BoundTool], name: str, args: dict[str, Any],
          done: PreSearch) -> Any | None:
    """Call one tool as the agent would; keep the record; the data, or None on failure."""
    outcome = tools[name].call(args)
    call = {"name": name, "args": args}
    record = call_record(call, outcome.ok, outcome.content if outcome.ok
                         else outcome.for_model())
    done.calls.append({**record, "by": "code"})
    if not outcome.ok:
        return None
    done.findings.append({"tool": name, "args": args,
                          "data": trim(outcome.content, FINDING_CHARS)})
    done.sources.extend(outcome.sources)
    return outcome.content


def pre_search(tools: Mapping[str, BoundTool], instruction: str, message: str
               ) -> PreSearch | None:
    """Search for the task and read its best hits; None when the agent cannot search."""
    query = search_query(instruction, message)
    if SEARCH not in tools or not query:
        return None
    done = PreSearch(block="")
    found = _call(tools, SEARCH, {"query": query}, done)
    hits: list[dict[str, Any]] = list((found or {}).get("results") or [])
    done.unknown_words = [str(w) for w in (found or {}).get("unknown_words") or []]
    read: list[tuple[dict[str, Any], str]] = []
    budget = READ_CHARS
    for hit in hits:
        tool = READS.get(str(hit.get("kind")), "")
        if len(read) >= MAX_READS or tool not in tools:
            continue
        size = len(json.dumps(hit.get("snippet", ""), ensure_ascii=False))
        if size > budget:
            continue
        data = _call(tools, tool, _read_args(hit), done)
        if data is not None:
            text = json.dumps(_readable(data), default=str, ensure_ascii=False)
            if len(text) > budget:  # longer than its snippet promised: keep what fits
                text = trim(text, budget)
            budget -= len(text)
            read.append((hit, text))
            done.passages.append(passage(hit, data, budget + len(text)))
    done.block = _block(query, hits, read, found is not None)
    return done


def passage(hit: Mapping[str, Any], data: Any, limit: int) -> str:
    """One read as a passage: `[id] title`, then the section's text (a catalogue object's
    fields, one per line), within `limit` characters."""
    title = " — ".join(str(t) for t in (hit.get("document_title"), hit.get("title")) if t)
    if isinstance(data, dict) and isinstance(data.get("text"), str):
        body = data["text"]
    elif isinstance(data, dict):
        body = "\n".join(f"{k}: {json.dumps(v, default=str, ensure_ascii=False)}"
                         for k, v in data.items() if k not in ("id", "_id", "path", "level"))
    else:
        body = json.dumps(data, default=str, ensure_ascii=False)
    return trim(f"[{hit['id']}] {title}\n{body.strip()}", limit)


def _readable(data: Any) -> Any:
    """A read's data less what the agent needs not see twice (the section's path)."""
    if isinstance(data, dict):
        return {k: v for k, v in data.items() if k not in ("path", "level")}
    return data


def _block(query: str, hits: list[dict[str, Any]], read: list[tuple[dict[str, Any], str]],
           searched: bool) -> str:
    if not searched:
        return ""
    read_ids = {str(hit["id"]) for hit, _ in read}
    lines = [f"Knowledge search for {json.dumps(query, ensure_ascii=False)}, made before you "
             f"started. {DATA_NOTICE}"]
    if not hits:
        lines.append("It found nothing: try other words, knowledge_grep for an exact string, "
                     "knowledge_find_objects by fields, or knowledge_outline before saying "
                     "it is not there.")
        return "\n".join(lines)
    lines.append("Search results (where to look — not sources; read a section to use it):")
    for n, hit in enumerate(hits, start=1):
        where = f" in {hit['document_title']}" if hit.get("document_title") else ""
        line = f"{n}. [{hit.get('kind')}] {hit['id']} — {hit.get('title')}{where}"
        if str(hit["id"]) in read_ids:
            line += " (read below)"
        else:
            line += ": " + trim(" ".join(str(hit.get("snippet", "")).split()), HINT_CHARS)
        lines.append(line)
    if read:
        lines.append("Already read for you (these count as read, like your own "
                     "knowledge_read_section calls):")
        lines.extend(text for _, text in read)
    return "\n".join(lines)
