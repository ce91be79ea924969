"""The context budget: every prompt opsgraph builds fits the model's context window.

The window is known per model (`context_window`: Claude models 200,000 tokens; any model
opsgraph does not know — `openai:`, `llamacpp:`, `scripted:` — `OPSGRAPH_CONTEXT_TOKENS`,
default 8,192). Tokens are estimated, not counted: characters / 4, the usual ratio for
English and JSON on the tokenisers we meet; it is cheap and needs no tokenizer, and the
reply reserve (`REPLY_SHARE`) absorbs its error.

Before every model call (`model_calls`), a prompt over the budget is trimmed, in this order,
until it fits:
1. tool results of earlier rounds, oldest first, become a one-line stub;
2. the data blocks of the first request message (earlier turns, dependency results,
   pre-read sections: everything after its head) are cut from the end;
3. the latest round's tool results are cut from the end;
4. any other text, longest first, the system prompt last.
Assistant messages (and so their tool calls) are never dropped: the tool-call pairing and
the scripted model's turn count stay intact.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from opsgraph.settings import get_settings

CHARS_PER_TOKEN = 4
KNOWN_WINDOWS = (("anthropic.claude", 200_000), ("claude-", 200_000))
"""(spec contains, window in tokens) — the models whose window opsgraph knows."""
REPLY_SHARE = 8
"""1 / REPLY_SHARE of the window is left for the reply (and the estimate's error)."""
RESULT_SHARE = 8
"""A tool result as the model sees it takes at most 1 / RESULT_SHARE of the window."""
MAX_RESULT_CHARS = 12_000
"""…and never more than this (a long list helps no model, whatever its window)."""
HEAD_CHARS = 800
"""What step 2 keeps of the first request message: its date, caller, message and task."""
TRIMMED = "\n… (trimmed to fit the model's context window)"


def context_window(spec: str) -> int:
    """The context window of the model `spec` names, in tokens."""
    lowered = spec.lower()
    for marker, window in KNOWN_WINDOWS:
        if marker in lowered:
            return window
    return get_settings().context_tokens


def result_chars(spec: str) -> int:
    """How many characters of one tool result the model `spec` is shown."""
    return min(MAX_RESULT_CHARS, context_window(spec) * CHARS_PER_TOKEN // RESULT_SHARE)


def tokens(text: str) -> int:
    """The estimated tokens of `text` (characters / 4, rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _text(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else json.dumps(content, default=str)


def message_tokens(message: BaseMessage) -> int:
    """The estimated tokens of one message, its tool calls included."""
    extra = 4  # role and separators
    if isinstance(message, AIMessage) and message.tool_calls:
        extra += tokens(json.dumps(message.tool_calls, default=str))
    return tokens(_text(message)) + extra


def prompt_tokens(messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]]) -> int:
    """The estimated tokens of a prompt: its messages and the tool block."""
    return (sum(message_tokens(m) for m in messages)
            + (tokens(json.dumps(list(tools), default=str)) if tools else 0))


def _cut(message: BaseMessage, keep_chars: int) -> BaseMessage:
    """`message` with its text cut to `keep_chars` (a text content only)."""
    text = message.content
    if not isinstance(text, str) or len(text) <= keep_chars:
        return message
    return message.model_copy(update={"content": text[:max(keep_chars, 0)] + TRIMMED})


def _stub(message: ToolMessage) -> ToolMessage:
    size = len(_text(message))
    return message.model_copy(update={
        "content": f"(this earlier tool result, {size} characters, was trimmed to fit the "
                   "context window; call the tool again, narrowed, if you need it)"})


def _last_round(messages: Sequence[BaseMessage]) -> set[int]:
    """Indexes of the tool results that answer the last assistant turn with tool calls."""
    last = max((i for i, m in enumerate(messages)
                if isinstance(m, AIMessage) and m.tool_calls), default=-1)
    return {i for i, m in enumerate(messages) if i > last and isinstance(m, ToolMessage)}


def fit_messages(messages: Sequence[BaseMessage], tools: Sequence[dict[str, Any]],
                 window: int) -> list[BaseMessage]:
    """`messages`, trimmed in the module's order until the prompt fits `window`."""
    out = list(messages)
    budget = window - window // REPLY_SHARE

    def excess() -> int:
        return prompt_tokens(out, tools) - budget

    if excess() <= 0:
        return out
    latest = _last_round(out)
    for i, message in enumerate(out):  # 1. earlier tool results, oldest first
        if isinstance(message, ToolMessage) and i not in latest:
            out[i] = _stub(message)
            if excess() <= 0:
                return out
    first = next((i for i, m in enumerate(out) if isinstance(m, HumanMessage)), None)
    steps: list[tuple[list[int], int]] = []
    if first is not None:
        steps.append(([first], HEAD_CHARS))  # 2. the request's data blocks
    steps.append((sorted(latest), 200))  # 3. the latest tool results
    others = sorted((i for i, m in enumerate(out) if not isinstance(m, SystemMessage)),
                    key=lambda i: -len(_text(out[i])))
    steps.append((others, 200))  # 4. any other text, longest first …
    steps.append(([i for i, m in enumerate(out) if isinstance(m, SystemMessage)], 400))
    for indexes, floor in steps:  # … the system prompt last
        for i in indexes:
            over = excess()
            if over <= 0:
                return out
            size = len(_text(out[i]))
            out[i] = _cut(out[i], max(floor, size - over * CHARS_PER_TOKEN - len(TRIMMED)))
    return out
