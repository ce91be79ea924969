"""Dates and times as mentions: days (resolve.days), clock times, ranges, parts of the
day and lengths (resolve.times) put together, in the venue's time zone.

A time goes with the nearest day named (before it when two are as near); a time with no
day is the next such time from now. A part of the day with no clock time makes a range
("tomorrow morning" 06:00–12:00, "tonight" 18:00–23:00); with one it settles am/pm.
A length ("for an hour") closes the time before it. A day alone is a `date` mention,
a range of days ("this weekend") a `date` with an `end`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from opsgraph.resolve.days import DayPhrase, find_days
from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.times import (
    PARTS,
    PartPhrase,
    TimePhrase,
    find_durations,
    find_parts,
    find_times,
)
from opsgraph.resolve.tokens import Claimed
from opsgraph.resolve.vocabulary import FUNCTION_WORDS

_WORD_BEFORE = re.compile(r"([^\W\d_]+)\W*$")
_TIME_WORDS = frozenset({"late", "early", "every", "each", "mid", "tomorrow", "tmrw", "today",
                         "tonight", "friday", "saturday", "sunday"})
_NEAR = 40  # characters: a part of the day or a day further from a time is not its own


@dataclass
class _Moment:
    """One date or datetime mention being put together from its pieces."""

    spans: list[tuple[int, int]]
    day: DayPhrase | None = None
    clock: TimePhrase | None = None
    part: PartPhrase | None = None
    length: timedelta | None = None
    pieces: list[str] = field(default_factory=list)


def find_moments(text: str, claimed: Claimed, now: datetime, zone: ZoneInfo,
                 day_first: bool = True) -> list[Mention]:
    """Every date, datetime and range `text` names, read at `now` in `zone`."""
    local = now.astimezone(zone)
    taken = list(claimed.spans)
    days = [d for d in find_days(text, local.date(), day_first)
            if not claimed.overlaps(d.start, d.end)]
    taken += [(d.start, d.end) for d in days]
    durations = [d for d in find_durations(text) if not claimed.overlaps(d[0], d[1])]
    taken += [(s, e) for s, e, _ in durations]
    parts = [p for p in find_parts(text) if not claimed.overlaps(p.start, p.end)
             and not any(d.start <= p.start and p.end <= d.end for d in days)
             and not _names_a_thing(text, p, days)]
    clocks = find_times(text, taken + [(p.start, p.end) for p in parts])
    moments = _assemble(days, clocks, parts, durations)
    out = []
    for moment in moments:
        mention = _mention(text, moment, local, zone)
        if mention is not None:
            for s, e in moment.spans:
                claimed.add(s, e)
            out.append(mention)
    return sorted(out, key=lambda m: m.start)


def _names_a_thing(text: str, part: PartPhrase, days: list[DayPhrase]) -> bool:
    """True when a part of the day is the end of a name, not a time: "the movie night",
    "quiz night" (after a word that is neither a function word nor a day)."""
    if part.tonight or " " in text[part.start:part.end].strip():
        return False  # "tonight", "in the evening", "this morning"
    before = _WORD_BEFORE.search(text[:part.start])
    if before is None or any(d.end <= part.start and not text[d.end:part.start].strip()
                             for d in days):
        return False
    word = before.group(1).lower()
    return word not in FUNCTION_WORDS and word not in _TIME_WORDS


def _distance(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(a[0] - b[1], b[0] - a[1], 0)


def _assemble(days: list[DayPhrase], clocks: list[TimePhrase], parts: list[PartPhrase],
              durations: list[tuple[int, int, timedelta]]) -> list[_Moment]:
    moments = [_Moment([(d.start, d.end)], day=d) for d in days]
    for clock in clocks:
        span = (clock.start, clock.end)
        free = [m for m in moments if m.clock is None and m.day is not None
                and m.day.last is None and _distance(span, m.spans[0]) <= _NEAR]
        if free:
            best = min(free, key=lambda m: (_distance(span, m.spans[0]),
                                            0 if m.spans[0][0] < clock.start else 1))
            best.clock = clock
            best.spans.append(span)
        else:
            moments.append(_Moment([span], clock=clock))
    for part in parts:
        span = (part.start, part.end)
        near = [m for m in moments if m.part is None and (m.day is None or m.day.last is None)
                and min(_distance(span, s) for s in m.spans) <= _NEAR]
        if part.tonight:
            near = [m for m in near if m.day is None]
        if near:
            best = min(near, key=lambda m: min(_distance(span, s) for s in m.spans))
            best.part = part
            best.spans.append(span)
        else:
            moments.append(_Moment([span], part=part))
    for start, end, length in durations:
        timed = [m for m in moments if m.clock is not None and m.clock.last is None
                 and m.clock.end <= start and start - m.clock.end <= _NEAR]
        if timed:
            best = max(timed, key=lambda m: m.clock.end if m.clock else 0)
            best.length = length
            best.spans.append((start, end))
    return moments


def _mention(text: str, moment: _Moment, local: datetime, zone: ZoneInfo) -> Mention | None:
    spans = sorted(moment.spans)
    words = " ".join(text[s:e] for s, e in spans)
    start = spans[0][0]
    if moment.day is not None and moment.day.last is not None:
        return Mention(words, "date", moment.day.first.isoformat(),
                       end=moment.day.last.isoformat(), start=start)
    part = moment.part.part if moment.part else None
    day = moment.day.first if moment.day else None
    if moment.clock is None and moment.part is None:
        return None if day is None else Mention(words, "date", day.isoformat(), start=start)
    if day is None:
        day = local.date()
    if moment.clock is None:
        assert moment.part is not None
        opens, closes = PARTS[moment.part.part]
        begin = datetime.combine(day, opens, tzinfo=zone)
        return Mention(words, "datetime", begin.isoformat(),
                       end=datetime.combine(day, closes, tzinfo=zone).isoformat(), start=start)
    first, last = _clock_range(moment.clock, part)
    begin = datetime.combine(day, first, tzinfo=zone)
    if moment.day is None and begin < local:
        begin += timedelta(days=1)  # "at 9am", said at ten: tomorrow's
    end: datetime | None = None
    if last is not None:
        end = datetime.combine(begin.date(), last, tzinfo=zone)
        if end <= begin:
            end += timedelta(days=1)
    elif moment.length is not None:
        end = begin + moment.length
    return Mention(words, "datetime", begin.isoformat(),
                   end=end.isoformat() if end else None, start=start)


def _clock_range(phrase: TimePhrase, part: str | None) -> tuple[time, time | None]:
    """The start and end of a time phrase, am/pm settled between them: "8-10pm" is 20:00
    to 22:00, "11-1pm" 11:00 to 13:00."""
    a, b = phrase.first, phrase.last
    if b is None:
        return a.read(part), None
    if b.sure and not a.sure:
        close = b.read(part)
        readings = [time(a.hour % 24, a.minute)] + ([time(a.hour + 12, a.minute)]
                                                    if a.hour < 12 else [])
        before = [t for t in readings if t < close]
        return (max(before) if before else readings[0]), close
    first = a.read(part)
    return first, b.read(part, after=first)
