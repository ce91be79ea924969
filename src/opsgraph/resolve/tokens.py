"""The words of a request with their offsets, and numbers written as words.

Every finder works on `Token`s so a mention can say exactly which characters it came from,
and marks what it used (`Claimed`) so the next finder does not read the same words again
(a phone number is not also an amount, "court 1" is not also a time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opsgraph.store.search_keys import normalise

_WORD = re.compile(r"[^\W_]+(?:[_'’.-][^\W_]+)*", re.UNICODE)

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
          "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
          "eighteen": 18, "nineteen": 19, "a": 1, "an": 1}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
NUMBER_WORDS = frozenset(_UNITS) - {"a", "an"} | frozenset(_TENS) | {"hundred", "thousand"}


@dataclass(frozen=True, slots=True)
class Token:
    """One word of the request: its text, its normalised form and where it is."""

    text: str
    norm: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """The words of `text` (letters and digits, joined by `_ ' . -` inside a word)."""
    return [Token(m.group(), normalise(m.group()), m.start(), m.end())
            for m in _WORD.finditer(text)]


def number_value(words: list[str]) -> int | None:
    """The number that `words` spell ("fifteen", "twenty five", "one hundred and ten"),
    or None when they spell none."""
    total, current, seen = 0, 0, False
    for word in words:
        w = word.replace("-", " ")
        if " " in w:
            sub = number_value(w.split())
            if sub is None:
                return None
            current += sub
        elif w in _UNITS and (w not in ("a", "an") or not seen):
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total, current = total + max(current, 1) * 1000, 0
        elif w == "and" and seen:
            continue
        else:
            return None
        seen = True
    return total + current if seen else None


class Claimed:
    """The character ranges of the request that a finder has already used."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    def add(self, start: int, end: int) -> None:
        """Mark `[start, end)` as used."""
        self._spans.append((start, end))

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """The used ranges, in the order they were marked."""
        return tuple(self._spans)

    def overlaps(self, start: int, end: int) -> bool:
        """True when any of `[start, end)` is used."""
        return any(s < end and start < e for s, e in self._spans)

    def free(self, tokens: list[Token]) -> list[Token]:
        """The tokens no finder has used yet."""
        return [t for t in tokens if not self.overlaps(t.start, t.end)]
