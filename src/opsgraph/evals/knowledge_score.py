"""Deterministic scoring of one knowledge answer (no judge model).

- **correct**: every fact is in the answer (a fact with alternatives: any one of them); for
  an unanswerable question, the answer declines or asks, and states no number that is not
  already in the question or the earlier turns.
- **fabrication**: the answer states a number (price, time, duration, count, date) found in
  none of what the system read, the question or its earlier turns; or it names a
  `forbidden` fact (what the confusable document says); or, for an unanswerable question,
  it answers without declining. Conditions stated in words cannot be checked this way:
  only numbers are.

Both sides are read by `opsgraph.knowledge.figures`, the same reading the knowledge answer's
own check makes: "£10.00", "10 pounds" and "£10"; "7pm" and "19:00"; "two hours" and "2
hrs" agree, and numbers are matched whole ("£8" is not in "£80").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from opsgraph.knowledge.declines import declines
from opsgraph.knowledge.figures import contains, quantities, ungrounded

Fact = str | Sequence[str]


def _alternatives(fact: Fact) -> list[str]:
    return [fact] if isinstance(fact, str) else list(fact)


@dataclass(slots=True)
class AnswerScore:
    """One answer's score; `reasons` says what made it wrong or a fabrication."""

    correct: bool
    fabrication: bool
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"correct": self.correct, "fabrication": self.fabrication,
                "reasons": list(self.reasons)}


def score_answer(answer: str, *, facts: Sequence[Fact], unanswerable: bool,
                 read: Iterable[str], asked: Iterable[str],
                 forbidden: Sequence[str] = ()) -> AnswerScore:
    """Score `answer` against the facts. `read` is what the system read (tool results,
    retrieved passages); `asked` the question and its earlier turns."""
    reasons: list[str] = []
    asked = list(asked)
    asked_numbers = set().union(*(quantities(t) for t in asked))
    stated = quantities(answer)
    unread = ungrounded(answer, *read, *asked)
    if unread:
        reasons.append("not in what was read: " + ", ".join(unread))
    hits = [f for f in forbidden if contains(answer, f)]
    if hits:
        reasons.append("forbidden: " + ", ".join(hits))
    if unanswerable:
        declined = declines(answer)
        extra = sorted(stated - asked_numbers)
        if not declined:
            reasons.append("answered a question the knowledge base does not answer")
        elif extra:
            reasons.append("declined, but stated " + ", ".join(extra))
        correct = declined and not extra
        fabrication = bool(unread or hits or not declined)
        return AnswerScore(correct and not hits, fabrication, reasons)
    missing = [" | ".join(_alternatives(f)) for f in facts
               if not any(contains(answer, alt) for alt in _alternatives(f))]
    if missing:
        reasons.append("missing: " + "; ".join(missing))
    return AnswerScore(not missing and not hits, bool(unread or hits), reasons)
