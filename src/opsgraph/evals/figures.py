"""What an answer states that can be checked: figures, dates, times, contacts, claims.

`claims(text)` lists the checkable statements of an answer; `Evidence` holds the same
kinds of things found in what the run saw (request, history, tool calls, cards), each in
a normal form, so that a claim is grounded when its normal form is in the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from opsgraph.evals.matching import as_number, phone_digits

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
PHONE = re.compile(r"(?<![\w+])(?:\+|0)\d[\d\s()-]{7,}\d(?![\w])")
ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?"
                 r"(?:Z|[+-]\d{2}:?\d{2})?)?\b")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(january|jan|february|feb|march|mar|april|apr|may|june|jun|july|jul|august|aug"
          r"|september|sept|sep|october|oct|november|nov|december|dec)\b\.?")
DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+" + _MONTH
                       + r"(?:,?\s+(\d{4}))?\b", re.I)
MONTH_DAY = re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?",
                       re.I)
CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?::\d{2})?\s*(a\.?m\.?|p\.?m\.?)?",
                   re.I)
MERIDIEM = re.compile(r"\b(1[0-2]|0?[1-9])\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I)
MONEY = re.compile(r"[£$€]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:GBP|EUR|USD|pounds?"
                   r"|euros?|dollars?)\b", re.I)
NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?%?(?![\w])")
ANY_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True, slots=True)
class Claim:
    """One checkable statement: its kind, the text as written and its normal form."""

    kind: str  # money | number | date | time | email | phone
    text: str
    key: str


def _minutes(hour: int, minute: int, meridiem: str | None) -> int:
    if meridiem:
        pm = meridiem.lower().startswith("p")
        hour = hour % 12 + (12 if pm else 0)
    return hour * 60 + minute


def _day_key(month: int, day: int, year: str | None) -> str:
    return f"{year or '*'}-{month:02d}-{day:02d}"


def _long_dates(text: str) -> Iterable[tuple[re.Match[str], str]]:
    for m in DAY_MONTH.finditer(text):
        yield m, _day_key(_MONTHS.index(m.group(2)[:3].lower()) + 1, int(m.group(1)),
                          m.group(3))
    for m in MONTH_DAY.finditer(text):
        yield m, _day_key(_MONTHS.index(m.group(1)[:3].lower()) + 1, int(m.group(2)),
                          m.group(3))


def _number_key(text: str) -> str | None:
    value = as_number(re.sub(r"(?i)[^\d.,£$€]", "", text))
    return None if value is None else str(value.normalize())


def _take(text: str, found: list[Claim], kind: str, pattern: re.Pattern[str],
          key: Callable[[re.Match[str]], object]) -> str:
    """Record each match of `pattern` as a claim and blank it out of the text."""
    def repl(m: re.Match[str]) -> str:
        value = key(m)
        if value is not None:
            found.append(Claim(kind, m.group(0).strip(), str(value)))
        return " " * len(m.group(0))

    return pattern.sub(repl, text)


def claims(text: str) -> list[Claim]:
    """The answer's checkable statements, longest patterns first (an e-mail's digits are
    not also a number)."""
    found: list[Claim] = []
    text = _take(text, found, "email", EMAIL, lambda m: m.group(0).lower())
    text = _take(text, found, "phone", PHONE, lambda m: phone_digits(m.group(0)))
    text = _take(text, found, "date", ISO, lambda m: f"{m.group(1)}-{m.group(2)}-{m.group(3)}")
    for m, key in sorted(_long_dates(text), key=lambda mk: -len(mk[0].group(0))):
        if text[m.start():m.end()].strip():
            found.append(Claim("date", m.group(0).strip(), key))
            text = text[:m.start()] + " " * (m.end() - m.start()) + text[m.end():]
    text = _take(text, found, "time", CLOCK, lambda m: _minutes(int(m.group(1)),
                                                                 int(m.group(2)), m.group(3)))
    text = _take(text, found, "time", MERIDIEM, lambda m: _minutes(int(m.group(1)), 0,
                                                                    m.group(2)))
    text = _take(text, found, "money", MONEY, lambda m: _number_key(m.group(0)))
    for m in NUMBER.finditer(text):
        raw = m.group(0).rstrip("%")
        if len(re.sub(r"\D", "", raw)) >= 2 or "." in raw:
            value = _number_key(raw)
            if value is not None:
                found.append(Claim("number", m.group(0), value))
    return found


@dataclass(slots=True)
class Evidence:
    """Normal forms of everything the run saw: what an answer may state."""

    keys: dict[str, set[str]] = field(default_factory=lambda: {
        k: set() for k in ("email", "phone", "date", "time", "number")})

    def add(self, text: str) -> None:
        """Take in one piece of text (JSON is fine: it is read as text)."""
        for claim in claims(text):
            kind = "number" if claim.kind == "money" else claim.kind
            self.keys[kind].add(claim.key)
        for m in ISO.finditer(text):
            if m.group(4) is not None:
                self.keys["time"].add(str(_minutes(int(m.group(4)), int(m.group(5)), None)))
        for raw in ANY_NUMBER.findall(text):
            for variant in (raw.replace(",", ""), raw.replace(",", ".")):
                value = as_number(variant)
                if value is not None:
                    self.keys["number"].add(str(value.normalize()))

    def backs(self, claim: Claim) -> bool:
        """Whether the evidence holds this claim."""
        kind = "number" if claim.kind == "money" else claim.kind
        if kind == "date":
            return any(_same_day(claim.key, seen) for seen in self.keys["date"])
        if kind == "number":
            return claim.key in self.keys["number"] or _as_percent(claim, self.keys["number"])
        return claim.key in self.keys[kind]


def _same_day(a: str, b: str) -> bool:
    ya, rest_a = a.split("-", 1)
    yb, rest_b = b.split("-", 1)
    return rest_a == rest_b and (ya == yb or "*" in (ya, yb))


def _as_percent(claim: Claim, numbers: set[str]) -> bool:
    """`15%` is backed by 0.15 as well as by 15."""
    if not claim.text.endswith("%"):
        return False
    value = Decimal(claim.key) / 100
    return str(value.normalize()) in numbers
