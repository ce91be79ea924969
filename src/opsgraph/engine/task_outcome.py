"""What a finished agent loop amounts to: its task's status, and the words of the agent
that may reach an answer.

A query task is `completed` when its reads succeeded (a failed call that a later call of
the same tool recovered counts as read), `partial` when some of what it tried to read
could not be read, `failed` when nothing could: it never claims to have read what it did
not. An action task that proposed nothing is `no_proposal`.

An agent's text reaches an answer only without what belongs to the machinery: tool-call
and tool-response markup, JSON blobs, sentences naming a tool or announcing a call ("I
will call the members_update tool now"), and the words of our own prompts (the nudge, the
step budget, the data notice) that a small model repeats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from opsgraph.engine.state import TaskStatus
from opsgraph.engine.tool_loop import BUDGET_SPENT, NUDGE, LoopResult
from opsgraph.principal import DOMAINS
from opsgraph.tools.contract import DATA_NOTICE

ERROR_CHARS = 160
"""How much of a read's error the answer line quotes."""


def _error_of(call: dict[str, Any]) -> str:
    """The error a failed call answered, without the data notice and JSON around it."""
    text = str(call.get("result", ""))
    body = text.split("\n", 1)[1] if text.startswith(DATA_NOTICE) else text
    try:
        found = json.loads(body).get("error", body)
    except (json.JSONDecodeError, AttributeError):
        found = body
    message = found.get("message", found) if isinstance(found, dict) else found
    words = " ".join(str(message).split())
    return words if len(words) <= ERROR_CHARS else words[:ERROR_CHARS - 1] + "…"


def unread(calls: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed read calls no later call of the same tool recovered."""
    reads = [c for c in calls if "change" not in c]
    return [c for n, c in enumerate(reads) if not c.get("ok")
            and not any(later.get("ok") and later.get("tool") == c.get("tool")
                        for later in reads[n + 1:])]


def loop_status(acts: bool, loop: LoopResult) -> tuple[TaskStatus, str | None]:
    """The task's status from what its calls did, and (when it is not `completed`) what
    could not be read."""
    if loop.asking is not None:
        return "needs_input", None
    if acts:
        return ("completed" if loop.proposed else "no_proposal"), None
    missed = unread(loop.calls)
    if not missed:
        return "completed", None
    tools = list(dict.fromkeys(str(c.get("tool")) for c in missed))
    what = "; ".join(f"{tool}: {_error_of(next(c for c in missed if c.get('tool') == tool))}"
                     for tool in tools)
    read_any = any(c.get("ok") for c in loop.calls if "change" not in c)
    return ("partial" if read_any else "failed"), f"could not read {what}"


_MARKUP = re.compile(r"<(tool_calls?|tool_response|tools?|function_call|functions?|arguments"
                     r"|parameters?|invoke|\|[a-z_]+\|)(?:\s[^>]*)?>.*?(?:</\1>|$)"
                     r"|</(?:tool_calls?|tool_response|tools?|function_call|functions?"
                     r"|arguments|parameters?|invoke)>|```.*?(?:```|$)|<\|[a-z_]+\|>",
                     re.DOTALL | re.IGNORECASE)
"""A tool call a small model wrote as text (`<tool_call>`, `<tools><arguments>` ...) to its
end, a stray closing tag, a code fence, a chat-template token."""
_TOOLISH = re.compile(rf"\b(?:{'|'.join(DOMAINS)})_[a-z_]+\b|\btool[_ ]?(?:call|response)s?\b"
                      r"|\bI(?:'ll| will| am going to| shall| need to)\s+(?:now\s+)?"
                      r"(?:call|use|invoke|run)\b", re.IGNORECASE)
_PROMPT_WORDS = tuple(" ".join(p.split()[:6]).lower() for p in
                      (NUDGE, BUDGET_SPENT, DATA_NOTICE, "Your task:", "Their message:",
                       "Results of the tasks this one depends on", "Asked by:"))
_SENTENCE_END = re.compile(r"((?<=[.!?])[ \t]+|\n+)")
ECHO_WORDS = 5
"""A sentence sharing this many words in a row with one of our prompts echoes it."""


def _runs(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z']+", text.lower())
    return {tuple(words[n:n + ECHO_WORDS]) for n in range(len(words) - ECHO_WORDS + 1)}


_PROMPT_RUNS = frozenset().union(*(_runs(p) for p in (NUDGE, BUDGET_SPENT, DATA_NOTICE)))


def _machinery(sentence: str) -> bool:
    plain = " ".join(sentence.split())
    return bool(_TOOLISH.search(plain) or "{" in plain or "}" in plain
                or any(words in plain.lower() for words in _PROMPT_WORDS)
                or _runs(plain) & _PROMPT_RUNS)


def agent_words(text: str) -> str:
    """`text` as an answer may quote it: markup, JSON, tool talk and prompt echoes out (the
    rest as it was written, line breaks kept)."""
    text = _MARKUP.sub(" ", text)
    parts = _SENTENCE_END.split(text)  # sentence, separator, sentence, …
    kept: list[str] = []
    for n in range(0, len(parts), 2):
        sentence = parts[n]
        if sentence.strip() and not _machinery(sentence):
            kept += [sentence, parts[n + 1] if n + 1 < len(parts) else ""]
    return "".join(kept).strip()
