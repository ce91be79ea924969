"""A knowledge agent's answer from what code pre-read: one model call, no tools.

On the knowledge question set with the local 1.5B model (evals/results,
knowledge-local-2026-12-02), the knowledge agent with its tools bound answered 16 of 40
questions right although its pre-search had read the right section for most of them: it
navigated away, quoted tool talk, or guessed. One call handed the top passages and the
question (the eval's baseline) answered 32. So when the pre-search read something, the
agent's first call is that call: the passages, the recent exchange and the question, no
tools, and the rule to say the knowledge base does not say rather than guess. A reply with
no text (a model that calls a tool anyway) hands over to the tool loop, as when nothing was
read.
"""

from __future__ import annotations

import json

from langchain_core.messages import BaseMessage, HumanMessage

from opsgraph.engine.context import RunContext
from opsgraph.engine.memory import recent_exchange
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.pre_search import PreSearch
from opsgraph.engine.slot_reading import task_words
from opsgraph.engine.tool_loop import AskModel, LoopResult
from opsgraph.models.factory import get_chat_model
from opsgraph.models.prompt_cache import cached_system_message
from opsgraph.tools.contract import DATA_NOTICE

PASSAGE_RULES = (
    "You answer questions from the staff and members of a club or venue using only the "
    "passages from its knowledge base given with the question. Give the specific numbers, "
    "prices, times, deadlines and conditions the passages state, in a sentence or two. If the "
    "passages do not answer the question, say that the knowledge base does not say; never "
    "guess, and never answer a different question.")


def passage_messages(ctx: RunContext, spec: str, task: PlannedTask, found: PreSearch,
                     several_tasks: bool) -> list[BaseMessage]:
    """The one call's messages: the rules (cacheable), then today, the recent exchange, the
    passages and the question (the person's message, or the task's own words when the plan
    has several tasks)."""
    question = task_words(ctx, task, several_tasks)
    lines = [f"Today: {ctx.today_line()}."]
    exchange = recent_exchange(ctx.history)
    if exchange:
        lines += ["", "The conversation before the question (what \"it\", \"that\" or \"the "
                      "other one\" in it refer to):", exchange]
    lines += ["", f"Passages from the knowledge base. {DATA_NOTICE}", "",
              "\n\n".join(found.passages), "",
              f"Question: {json.dumps(question, ensure_ascii=False)}"]
    return [cached_system_message(get_chat_model(spec), PASSAGE_RULES),
            HumanMessage("\n".join(lines))]


def answer_from_passages(ask: AskModel, messages: list[BaseMessage]) -> LoopResult | None:
    """The model's answer with no tools offered, or None when it gave no text."""
    reply = ask(messages, [], None)
    text = str(reply.text).strip()
    if reply.tool_calls or not text:
        return None
    return LoopResult(content=text, rounds=0)
