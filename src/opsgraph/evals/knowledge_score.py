"""Deterministic scoring of one knowledge answer (no judge model).

- **correct**: every fact is in the answer (a fact with alternatives: any one of them); for
  an unanswerable question, the answer declines or asks, and states no number that is not
  already in the question or the earlier turns.
- **fabrication**: the answer states a number (price, time, duration, count, date) found in
  none of what the system read, the question or its earlier turns; or it names a
  `forbidden` fact (what the confusable document says); or, for an unanswerable question,
  it answers without declining. Conditions stated in words cannot be checked this way:
  only numbers are.

Both sides are normalised the same way before comparing, so that "£10.00", "10 pounds" and
"£10"; "7pm", "7:00 pm" and "19:00"; "two hours", "2 hrs" and "2-hour"; "1,200" and "1200"
agree. Numbers are matched whole ("£8" is not in "£80", "2 hours" not in "12 hours").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
          "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60}
_UNITS = {"hour": ("hours", "hour", "hrs", "hr", "h"),
          "minute": ("minutes", "minute", "mins", "min"),
          "day": ("days", "day"), "week": ("weeks", "week"), "month": ("months", "month"),
          "year": ("years", "year"), "m": ("metres", "metre", "meters", "meter", "m"),
          "working day": ("working days", "working day", "business days", "business day")}
_UNIT_RE = re.compile(
    r"(\d)\s*-?\s*(" + "|".join(sorted((re.escape(a) for aliases in _UNITS.values()
                                         for a in aliases), key=len, reverse=True))
    + r")\b")
_UNIT_OF = {a: unit for unit, aliases in _UNITS.items() for a in aliases}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s*m\b\.?")
_HHMM = re.compile(r"(?<![\d.:£])(\d{1,2})[:.](\d{2})(?![\d])")
_POUNDS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:pounds?|gbp)\b")
_PENCE = re.compile(r"(\d+)\s*(?:pence|p)\b")
_ZERO_PENCE = re.compile(r"£(\d+)\.0+\b")
_PERCENT = re.compile(r"(\d+)\s*(?:percent|per cent)\b")
_LIST_MARK = re.compile(r"^\s*\d+[.)]\s+", re.MULTILINE)
_QUANTITY = re.compile(r"£\d+(?:\.\d+)?|\d{2}:\d{2}|\d+(?:\.\d+)?")
_IDENTIFIER = re.compile(r"(?<![\w-])(?=[\w-]*[a-z_])(?=[\w-]*\d)(?!\d+p(?![\w-]))[\w-]+")

_DECLINES = re.compile("|".join((
    r"\b(?:do not|don't|does not|doesn't|did not|didn't|could not|couldn't|cannot|can't|"
    r"am unable to|unable to|wasn't able to|was not able to|not able to)\s+"
    r"(?:know|find|see|say|mention|cover|specify|state|include|list|contain|have|locate|"
    r"confirm|answer|provide)",
    r"\bno (?:information|details|mention|record|data|price|answer)\b",
    r"\b(?:cannot|can't|could not|couldn't) be (?:found|determined|confirmed)\b",
    r"\bnot (?:mentioned|covered|stated|specified|listed|included|documented|available|"
    r"found|provided|given|in the (?:knowledge|documents|passages|policy|policies))\b",
    r"\bnothing (?:about|on|in)\b",
    r"\b(?:please )?(?:ask|contact|check with|speak to) (?:at )?(?:reception|the club manager|"
    r"the duty manager|a member of staff|staff)\b",
    r"\bi'?m not sure\b", r"\bnot sure\b",
    r"\b(?:could|can|would) you (?:clarify|tell me|confirm|say)\b",
    r"\bdo you mean\b",
)), re.IGNORECASE)


def _clock(match: re.Match[str]) -> str:
    hour, minute, half = int(match.group(1)), match.group(2) or "00", match.group(3)
    if half == "p" and hour < 12:
        hour += 12
    if half == "a" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute}"


def normalise(text: str) -> str:
    """Lower case, single spaces, and numbers, prices, times and units in one spelling."""
    out = text.lower().replace("\u00a0", " ").replace("–", "-").replace("—", "-")
    out = _NUMBER_WORD.sub(lambda m: str(_WORDS[m.group(1)]), out)
    out = _THOUSANDS.sub("", out)
    out = _CLOCK.sub(_clock, out)
    out = _HHMM.sub(lambda m: f"{int(m.group(1)):02d}:{m.group(2)}", out)
    out = _POUNDS.sub(r"£\1", out)
    out = _ZERO_PENCE.sub(r"£\1", out)
    out = _PENCE.sub(r"\1p", out)
    out = _PERCENT.sub(r"\1%", out)
    out = _UNIT_RE.sub(lambda m: f"{m.group(1)} {_UNIT_OF[m.group(2)]}", out)
    return re.sub(r"\s+", " ", out).strip()


def contains(text: str, phrase: str) -> bool:
    """Whether the normalised text holds the normalised phrase as a whole (a number is not
    part of a longer number, a word not part of a longer word)."""
    wanted = normalise(phrase)
    if not wanted:
        return False
    pattern = (r"(?<![\w.£])" if wanted[0].isalnum() else "") + re.escape(wanted) + (
        r"(?![\w]|[.,:]\d)" if wanted[-1].isalnum() else "")
    return re.search(pattern, normalise(text)) is not None


def quantities(text: str) -> set[str]:
    """The numbers a text states, normalised ("£12", "19:00", "2.5", "14"); left out: list
    markers, identifiers that mix letters and digits (a card id, an SKU, a section id), and
    0 and 1 as plain numbers (ordinary words: "one of", "a 1-hour slot")."""
    text = _IDENTIFIER.sub(" ", normalise(_LIST_MARK.sub(" ", text)))
    found = set()
    for token in _QUANTITY.findall(text):
        if token[0].isdigit() and ":" not in token and "." not in token:
            token = str(int(token))  # "01" and "1" are one number
        if token not in ("0", "1"):
            found.add(token)
    return found


def _value(token: str) -> str:
    return token.lstrip("£")


def declines(answer: str) -> bool:
    """The answer says it does not know, or points the asker elsewhere, or asks back."""
    return bool(_DECLINES.search(answer)) or answer.rstrip().endswith("?")


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
    asked_numbers = set().union(*(quantities(t) for t in asked))
    grounded = set().union(*(quantities(t) for t in read)) | asked_numbers
    grounded_values = {_value(t) for t in grounded}
    stated = quantities(answer)
    # a price must be read as a price; any other number as any number of that value
    ungrounded = sorted(t for t in stated if (t not in grounded if t.startswith("£")
                                               else _value(t) not in grounded_values))
    if ungrounded:
        reasons.append("not in what was read: " + ", ".join(ungrounded))
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
        fabrication = bool(ungrounded or hits or not declined)
        return AnswerScore(correct and not hits, fabrication, reasons)
    missing = [" | ".join(_alternatives(f)) for f in facts
               if not any(contains(answer, alt) for alt in _alternatives(f))]
    if missing:
        reasons.append("missing: " + "; ".join(missing))
    return AnswerScore(not missing and not hits, bool(ungrounded or hits), reasons)
