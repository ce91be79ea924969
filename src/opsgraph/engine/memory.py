"""Conversation memory: the thread's past turns, compacted as it grows.

Past 20 messages the older part is folded into one summary entry and the latest 10 stay
verbatim. The summary is extractive (the first sentence of each older turn), so it costs
no model call and is the same on every replay.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from typing_extensions import TypedDict  # pydantic validates only this one before 3.12

from opsgraph.errors import BadInput

KEEP_VERBATIM = 10
COMPACT_AFTER = 20
_SENTENCE = re.compile(r"(?<=[.!?])\s")


class Turn(TypedDict):
    """One entry of a thread's history (kept as a plain dict in the checkpoint)."""

    role: Literal["user", "assistant", "summary"]
    content: str


ROLES = ("user", "assistant", "summary")


def as_turns(history: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """Earlier turns handed in from outside (`{role, content}`), checked."""
    turns = []
    for n, item in enumerate(history):
        role, content = item.get("role"), item.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise BadInput(f"history[{n}]: needs a role ({', '.join(ROLES)}) and a text "
                           "content")
        turns.append(Turn(role=role, content=content))
    return turns


def _gist(text: str, limit: int = 160) -> str:
    first = _SENTENCE.split(text.strip(), maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def add_history(left: list[Turn] | None, right: list[Turn] | None) -> list[Turn]:
    """State reducer: append turns, then compact when the thread grows past the limit."""
    merged = [*(left or []), *(right or [])]
    if len(merged) <= COMPACT_AFTER:
        return merged
    older, recent = merged[:-KEEP_VERBATIM], merged[-KEEP_VERBATIM:]
    lines = []
    for turn in older:
        if turn["role"] == "summary":
            lines.append(turn["content"])
        else:
            lines.append(f"{turn['role']}: {_gist(turn['content'])}")
    return [Turn(role="summary", content="\n".join(lines)), *recent]


def render_history(history: list[Turn]) -> str:
    """The history as text for the planner (empty string for a new thread)."""
    lines = []
    for turn in history:
        if turn["role"] == "summary":
            lines.append("Earlier in this conversation (summary):\n" + turn["content"])
        else:
            lines.append(f"{turn['role']}: {turn['content']}")
    return "\n".join(lines)


RECENT_TURNS = 4
"""The turns an agent sees of the thread before the message it works on."""
TURN_CHARS = 600
"""…each cut to this many characters (the context budget trims the block further)."""


def earlier_turns(history: list[Turn]) -> list[Turn]:
    """The last `RECENT_TURNS` turns before the current message (the history's last entry)."""
    return history[:-1][-RECENT_TURNS:]


def recent_exchange(history: list[Turn]) -> str:
    """The last turns before the current message, as an agent's brief shows them; empty for
    a new thread."""
    lines = []
    for turn in earlier_turns(history):
        text = " ".join(turn["content"].split())
        if len(text) > TURN_CHARS:
            text = text[:TURN_CHARS - 1] + "…"
        who = "earlier (summary)" if turn["role"] == "summary" else turn["role"]
        lines.append(f"{who}: {text}")
    return "\n".join(lines)
