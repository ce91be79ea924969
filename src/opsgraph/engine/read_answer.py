"""A knowledge agent's answer from what code pre-read: one model call, no tools.

On the knowledge question set with the local 1.5B model (evals/results,
knowledge-local-2026-12-02), the knowledge agent with its tools bound answered 16 of 40
questions right although its pre-search had read the right section for most of them: it
navigated away, quoted tool talk, or guessed. One call handed the top passages and the
question (the eval's baseline) answered 32. So when the pre-search read something, the
agent's first call is that call: the passages, the recent exchange and the question, no
tools, and the rule to say it does not know rather than guess. A reply with no text (a
model that calls a tool anyway) hands over to the tool loop, as when nothing was read.

The wording is measured, at temperature 0 on the six questions the 1.5B model got wrong with
the right section in front of it (2026-12-05): the question quoted as a JSON string and the
rule "say that the knowledge base does not say" made it answer "The knowledge base does not
say." to four of them; the question as written and "say that you do not know" answered all
six (five right).

Code checks the figures: an answer stating a price, time, duration or count that none of
the passages, the question or the conversation states (a small model's guess: "the sauna is
open 13:00 to 23:00", "£35 per kWh" for 35p) is sent back once, naming the figures; a second
such answer is replaced by saying the knowledge base does not say. An answer that does not
decline but uses a word of the question that nothing in the knowledge base uses ("the padel
court costs £8 per hour", the tennis court's price) is sent back once too, naming the word;
its second answer stands (unless its figures are not grounded).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from opsgraph.engine.context import RunContext
from opsgraph.engine.memory import recent_exchange
from opsgraph.engine.plan import PlannedTask
from opsgraph.engine.pre_search import PreSearch
from opsgraph.engine.slot_reading import task_words
from opsgraph.engine.tool_loop import AskModel, LoopResult
from opsgraph.knowledge.declines import declines
from opsgraph.knowledge.figures import ungrounded
from opsgraph.knowledge.search import stem
from opsgraph.models.factory import get_chat_model
from opsgraph.models.prompt_cache import cached_system_message
from opsgraph.tools.contract import DATA_NOTICE

PASSAGE_RULES = (
    "You answer questions from the staff and members of a club or venue using only the "
    "passages from its knowledge base given with the question. Give the specific numbers, "
    "prices, times, deadlines and conditions the passages state, in a sentence or two. If the "
    "passages do not answer the question, say that you do not know; never guess.")
TODAY = "Today: "
"""How the passages' message starts: the date line (`RunContext.today_line`)."""


def passage_messages(ctx: RunContext, spec: str, task: PlannedTask, found: PreSearch,
                     several_tasks: bool) -> list[BaseMessage]:
    """The one call's messages: the rules (cacheable), then today, the recent exchange, the
    passages and the question (the person's message, or the task's own words when the plan
    has several tasks)."""
    question = task_words(ctx, task, several_tasks)
    lines = [f"{TODAY}{ctx.today_line()}."]
    exchange = recent_exchange(ctx.history)
    if exchange:
        lines += ["", "The conversation before the question (what \"it\", \"that\" or \"the "
                      "other one\" in it refer to):", exchange]
    lines += ["", f"Passages from the knowledge base. {DATA_NOTICE}", "",
              "\n\n".join(found.passages), "",
              f"Question: {' '.join(question.split())}"]
    return [cached_system_message(get_chat_model(spec), PASSAGE_RULES),
            HumanMessage("\n".join(lines))]


NOT_SAID = "The knowledge base does not say."
"""The answer when the model's figures were not in what was read, twice."""


def answer_from_passages(ask: AskModel, messages: list[BaseMessage],
                         unknown_words: Sequence[str] = ()) -> LoopResult | None:
    """The model's answer with no tools offered, or None when it gave no text. Checked by
    code, with one retry naming what is wrong: its figures against the passages
    (`ungrounded`: a second answer with such figures is replaced by `NOT_SAID`), and, unless
    it declines, the question's words the knowledge base never uses (`unknown_words`) in
    it: "the padel court is £8 an hour" read off the tennis courts' price. The second answer
    stands unless its figures are not grounded (a word is a weaker sign than a figure: "is
    the club open on boxing day?" is answered from "closed on 25 and 26 December")."""
    read = _without_today(str(messages[-1].content))
    text = _reply_text(ask, messages)
    if text is None:
        return None
    notes = []
    unread = ungrounded(text, read)
    if unread:
        notes.append(f"No passage states {', '.join(unread)}: use only the figures the "
                     "passages give.")
    named = _named(text, unknown_words)
    if named:
        notes.append(f"The knowledge base never mentions {', '.join(named)}: if the passages "
                     "do not answer the question as it was asked, say so.")
    if notes:
        retry = [*messages, AIMessage(text), HumanMessage(
            " ".join(notes) + " Answer again, or say that the knowledge base does not say.")]
        again = _reply_text(ask, retry)
        text = again if again is not None and not ungrounded(again, read) else NOT_SAID
    return LoopResult(content=text, rounds=0)


def _without_today(shown: str) -> str:
    """What the model was shown less the date line: today's date and clock ground no figure
    of a knowledge answer ("the squash court reopens on Saturday 5 December at 21:56", "we
    open at 22:45 tomorrow" were both read off it)."""
    return "\n".join(line for line in shown.splitlines() if not line.startswith(TODAY))


def _named(answer: str, unknown_words: Sequence[str]) -> list[str]:
    """The words the knowledge base never uses that an answer which does not decline uses."""
    return [] if declines(answer) else [w for w in unknown_words if _uses(answer, w)]


def _uses(text: str, word: str) -> bool:
    """Whether `text` has `word` in any form (its stem of four letters or more starts a word:
    "restring" in "restringing"; a shorter stem stands for too much: "wed" of "wedding")."""
    base = stem(word)
    return re.search(r"\b" + re.escape(base if len(base) >= 4 else word), text,
                     re.IGNORECASE) is not None


def _reply_text(ask: AskModel, messages: list[BaseMessage]) -> str | None:
    reply = ask(messages, [], None)
    text = str(reply.text).strip()
    return None if reply.tool_calls or not text else text
