"""Times of day a request names: "6pm", "6.30", "18:00", "noon", "half six", "at 6",
ranges ("from 6 to 8", "6-8pm", "between 10 and 12"), parts of the day ("in the
morning", "evening", "tonight") and lengths ("for an hour", "for 90 mins").

A clock time without am/pm is read as a venue would: the part of the day named beside it
decides ("8 in the evening"); otherwise 1 to 7 are afternoon and evening (nobody books a
court for 6 in the morning by saying "at 6"), 8 to 11 morning, 12 noon. A written 24-hour
time ("18:00", "06:30") is taken as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time, timedelta

from opsgraph.resolve.vocabulary import GENERIC, NUMBER_SIGNS

PARTS = {"morning": (time(6), time(12)), "afternoon": (time(12), time(17)),
         "evening": (time(17), time(22)), "night": (time(18), time(23)),
         "lunchtime": (time(12), time(14))}
"""A part of the day → its hours ("tonight" is today's night)."""
_HOUR_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_HW = "|".join(_HOUR_WORDS)
_CLOCK = (rf"(?P<h>\d{{1,2}}|{_HW})(?:[:.](?P<m>[0-5]\d))?\s*"
          r"(?P<ap>a\.?m\.?|p\.?m\.?|o['’]?\s?clock)?(?:-?\s?ish)?(?![\w:])")
_NAMED = r"noon|midday|midnight"
_HOUR = rf"(?:\d{{1,2}}|{_HW})"
_TIME = (rf"(?:{_NAMED}|(?:half|quarter)\s+(?:past|to)\s+{_HOUR}|half\s+{_HOUR}"
         rf"|{_CLOCK})")
_LEAD = r"\b(?:at|from|after|before|by|till|til|until|starting|start|around|about|@)\s+"
_RANGE = re.compile(
    rf"(?:\b(?P<lead>from|between)\s+)?(?P<a>{_TIME.replace('(?P<', '(?P<a_')})"
    rf"\s*(?:-|–|to|till|til|until|and)\s*(?P<b>{_TIME.replace('(?P<', '(?P<b_')})", re.I)
_BARE_RANGE = re.compile(r"\d\s*(?:-|–|till|til|until)\s*\d", re.I)  # "6-8", "6 till 7"
_SINGLE = re.compile(rf"(?P<lead>{_LEAD})?(?P<t>{_TIME})", re.I)
_PART_AFTER = re.compile(r"\s*(?:(?:in|during)\s+the\s+(?:morning|afternoon|evening)|at\s+night"
                         r"|this\s+(?:morning|afternoon|evening)|tonight|tonite)\b", re.I)
"""A part of the day right after a bare number makes it a time: "7 in the morning" (not
after a word that numbers things: "court 2 this afternoon")."""
_WORD_BEFORE = re.compile(r"([^\W\d_]+)\W*$")
_PART = re.compile(r"\b(?:(?:in|during)\s+the\s+|this\s+)?(?P<part>morning|afternoon|"
                   r"evening|night|lunchtime|lunch)\b|\b(?P<tonight>tonight|tonite)\b", re.I)
_DURATION = re.compile(
    r"\bfor\s+(?:(?P<half>half\s+an?\s+hour)|(?P<n>\d+(?:\.\d+)?|an?|one|two|three|four|"
    r"ninety|thirty|forty[- ]five)\s*(?P<unit>hours?|hrs?|h|minutes?|mins?|m)\b"
    r"(?P<andhalf>\s+and\s+a\s+half)?)", re.I)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "thirty": 30,
            "ninety": 90, "forty-five": 45, "forty five": 45}


@dataclass(frozen=True, slots=True)
class Clock:
    """A time of day as written: the hour may still need am/pm (`sure` False)."""

    hour: int
    minute: int
    sure: bool  # am/pm given, a 24-hour or leading-zero time, or a named time

    def read(self, part: str | None = None, after: time | None = None) -> time:
        """The time of day, settling am/pm by the part of the day named, the start of a
        range it closes (`after`), or the venue's habits."""
        hour = self.hour
        if not self.sure and hour < 12:
            if after is not None:
                hour = hour if time(hour, self.minute) > after else hour + 12
            elif part in ("afternoon", "evening", "night"):
                hour += 12
            elif part not in ("morning",) and 1 <= hour <= 7:
                hour += 12
        return time(hour % 24, self.minute)


@dataclass(frozen=True, slots=True)
class TimePhrase:
    """A time of day or a range of them, and the characters that named it."""

    start: int
    end: int
    first: Clock
    last: Clock | None = None


@dataclass(frozen=True, slots=True)
class PartPhrase:
    """A part of the day ("morning"; "tonight" is today's night)."""

    start: int
    end: int
    part: str
    tonight: bool = False


def clock_of(written: str) -> Clock | None:
    """A `Clock` from one written time ("6pm", "18:00", "noon", "half six"), or None."""
    w = " ".join(written.lower().split())
    if w in ("noon", "midday"):
        return Clock(12, 0, True)
    if w == "midnight":
        return Clock(0, 0, True)
    m = re.fullmatch(rf"(half|quarter)\s+(past|to)\s+(\d{{1,2}}|{_HW})", w)
    if m:
        hour = _hour(m.group(3))
        minute = 30 if m.group(1) == "half" else 15
        if m.group(2) == "to":
            hour, minute = (hour - 1) % 12 or 12, 60 - minute
        return Clock(hour, minute, False)
    m = re.fullmatch(rf"half\s+(\d{{1,2}}|{_HW})", w)  # British "half six" = 6:30
    if m:
        return Clock(_hour(m.group(1)), 30, False)
    m = re.fullmatch(_CLOCK, w)
    if not m:
        return None
    hour, minute, ap = _hour(m.group("h")), int(m.group("m") or 0), m.group("ap")
    if ap and ap[0] == "o":  # "six o'clock": a time for sure, am or pm still open
        return Clock(hour, minute, False) if 1 <= hour <= 12 else None
    if ap:
        if hour > 12 or hour == 0:
            return None
        return Clock(hour % 12 + (12 if ap.startswith("p") else 0), minute, True)
    if hour > 23:
        return None
    sure = hour >= 13 or hour == 0 or (m.group("h").startswith("0") and m.group("m") is not None)
    return Clock(hour, minute, sure)


def _hour(word: str) -> int:
    return _HOUR_WORDS.get(word, None) or int(word)


def find_times(text: str, taken: list[tuple[int, int]]) -> list[TimePhrase]:
    """Every time or range of times; a bare number counts only after "at", "from", ...,
    before a part of the day ("7 in the morning") or as part of a range, and only as an
    hour of the day."""
    found: list[TimePhrase] = []

    def free(start: int, end: int) -> bool:
        spans = taken + [(p.start, p.end) for p in found]
        return not any(s < end and start < e for s, e in spans)

    for m in _RANGE.finditer(text):
        a, b = clock_of(m.group("a")), clock_of(m.group("b"))
        explicit = (m.group("lead") or any(x is not None and x.sure for x in (a, b))
                    or any(":" in g or "." in g for g in (m.group("a"), m.group("b")))
                    or _BARE_RANGE.search(m.group()) is not None)
        if a and b and explicit and free(m.start(), m.end()):
            found.append(TimePhrase(m.start(), m.end(), a, b))
    for m in _SINGLE.finditer(text):
        t = m.group("t")
        bare = re.fullmatch(rf"\d{{1,2}}|{_HW}", t.strip(), re.I) is not None
        if re.search(r"clock$", t, re.I):
            bare = False
        c = clock_of(t)
        timed = m.group("lead") or (_PART_AFTER.match(text, m.end())
                                    and not _numbers_a_thing(text, m.start("t")))
        if c is None or (bare and not timed) or not free(m.start("t"), m.end()):
            continue
        if not bare or c.hour <= 12:
            found.append(TimePhrase(m.start("t"), m.end(), c))
    return sorted(found, key=lambda p: p.start)


def _numbers_a_thing(text: str, start: int) -> bool:
    """True when the word before `start` is one a number follows as its number ("court")."""
    before = _WORD_BEFORE.search(text[:start])
    return before is not None and before.group(1).lower() in GENERIC | NUMBER_SIGNS


def find_parts(text: str) -> list[PartPhrase]:
    """Every part of the day named."""
    out = []
    for m in _PART.finditer(text):
        if m.group("tonight"):
            out.append(PartPhrase(m.start(), m.end(), "night", tonight=True))
        else:
            part = m.group("part").lower()
            out.append(PartPhrase(m.start(), m.end(), "lunchtime" if part == "lunch" else part))
    return out


def find_durations(text: str) -> list[tuple[int, int, timedelta]]:
    """Every length of time ("for an hour", "for 90 mins"): (start, end, length)."""
    out = []
    for m in _DURATION.finditer(text):
        if m.group("half"):
            length = timedelta(minutes=30)
        else:
            raw = m.group("n").lower()
            n = float(_NUMBERS.get(raw, 0) or raw) if raw not in _NUMBERS else _NUMBERS[raw]
            minutes = n if m.group("unit").lower().startswith("m") else n * 60
            length = timedelta(minutes=minutes + (30 if m.group("andhalf") else 0))
        out.append((m.start(), m.end(), length))
    return out
