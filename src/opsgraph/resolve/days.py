"""Days a request names, relative to today in the venue's time zone.

Hand-written here, because a general date parser gets them wrong for a venue: "thurs",
"tmrw", "this weekend" (Saturday and Sunday, a range), "this week" / "next week" (Monday
to Sunday), "next tuesday" and "tuesday next week" (the Tuesday of next week), "the
22nd" (the next 22nd, never a past one), typos of day names ("thrusday", "wednsday", by
rapidfuzz's ratio). Dates written out in full ("3 December", "Dec 3rd", "3/12", "2026-12-03") go to
`dateparser`, with two of its quirks corrected: a day and month without a year that fall
today come back a year ahead, and numeric dates follow the venue's day/month order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from rapidfuzz import fuzz

WEEKDAYS = {"monday": 0, "mon": 0, "tuesday": 1, "tues": 1, "tue": 1, "wednesday": 2,
            "weds": 2, "wed": 2, "thursday": 3, "thurs": 3, "thur": 3, "thu": 3, "friday": 4,
            "fri": 4, "saturday": 5, "sat": 5, "sunday": 6, "sun": 6}
_WEEKDAY = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_MONTH = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
          r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_ORD = r"(?:st|nd|rd|th)"
_TOMORROW = r"tomorrow|tmrw|tmrrw|tmr|tmw|tomoz|2moro|2morrow|tomorow|tommorow|tommorrow"
_TODAY = r"today|tday|2day"
_DAY_AFTER = r"(?:the\s+)?day\s+after\s+(?:" + _TOMORROW + ")"
_N = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten"
_SMALL = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10}

_FULL_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
              "tomorrow")
_LETTERS = re.compile(r"\b[a-z]{6,}\b", re.I)
_DAY_TYPO = 85.0

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(name, re.compile(rx, re.I)) for name, rx in (
    ("written", rf"\b(?:(?:{_WEEKDAY})\s+)?(?:the\s+)?\d{{1,2}}{_ORD}?\s+(?:of\s+)?(?:{_MONTH})\b"
                rf"(?:\s+\d{{4}})?"),
    ("written", rf"\b(?:{_MONTH})\s+(?:the\s+)?\d{{1,2}}{_ORD}?\b(?:,?\s+\d{{4}})?"),
    ("written", r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"),
    ("day_after", rf"\b{_DAY_AFTER}\b"),
    ("today", rf"\b(?:{_TODAY})\b"),
    ("tomorrow", rf"\b(?:{_TOMORROW})\b"),
    ("yesterday", r"\byesterday\b"),
    ("in_days", rf"\bin\s+(?P<n>{_N})\s+(?P<unit>days?|weeks?)\b"),
    ("month", r"\b(?P<which>this|next|last)\s+month\b"),
    # "wednesday next week", "next week on weds": a day of that week, before the week alone
    ("weekday", rf"\b(?P<day>{_WEEKDAY})\b\.?,?\s+(?P<which>this|next|last)\s+week\b"),
    ("weekday", rf"\b(?P<which>this|next|last)\s+week,?\s+(?:on\s+)?(?P<day>{_WEEKDAY})\b"),
    ("week", r"\b(?P<which>this|next|last|the)\s+(?P<span>weekend|week)\b"
             r"|\b(?P<bare>weekend)\b"),
    ("weekday", rf"\b(?:(?P<which>this|next|last|coming)\s+)?(?P<day>{_WEEKDAY})\b\.?"
                rf"(?:\s+(?P<week>week))?(?:\s+(?:the\s+)?(?P<dom>\d{{1,2}}){_ORD})?"),
    ("ordinal", rf"\b(?:the\s+)?(?P<dom>\d{{1,2}}){_ORD}\b"),
)]


@dataclass(frozen=True, slots=True)
class DayPhrase:
    """A day (or a range of days, `last` set) and the characters that named it."""

    start: int
    end: int
    first: date
    last: date | None = None

    def text(self, source: str) -> str:
        """The words of the phrase."""
        return source[self.start:self.end]


def find_days(text: str, today: date, day_first: bool = True) -> list[DayPhrase]:
    """Every day or range of days `text` names, in order, none overlapping."""
    found: list[DayPhrase] = []
    for name, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(p.start < m.end() and m.start() < p.end for p in found):
                continue
            span = _read(name, m, today, day_first)
            if span is not None:
                found.append(DayPhrase(m.start(), m.end(), *span))
    found += _misspelt(text, today, found)
    return sorted(found, key=lambda p: p.start)


def _misspelt(text: str, today: date, found: list[DayPhrase]) -> list[DayPhrase]:
    """Day words with a typo ("thrusday", "wednsday", "tomorow"), by rapidfuzz's ratio."""
    out = []
    for m in _LETTERS.finditer(text):
        word = m.group().lower()
        if any(p.start < m.end() and m.start() < p.end for p in found):
            continue
        best = max(_FULL_DAYS, key=lambda d: fuzz.ratio(word, d))
        if fuzz.ratio(word, best) < _DAY_TYPO:
            continue
        which = _before(text, m.start())
        if best == "tomorrow":
            day = today + timedelta(days=1)
        else:
            day = weekday_date(today, WEEKDAYS[best], which or "")
        start = m.start() - (len(which) + 1 if which else 0)
        out.append(DayPhrase(start, m.end(), day))
    return out


def _before(text: str, at: int) -> str | None:
    """"this", "next" or "last" right before offset `at`, if there."""
    m = re.search(r"\b(this|next|last)\s+$", text[:at], re.I)
    return m.group(1).lower() if m else None


def _read(name: str, m: re.Match[str], today: date, day_first: bool
          ) -> tuple[date, date | None] | None:
    if name == "written":
        day = written_date(m.group(), today, day_first)
        return None if day is None else (day, None)
    if name in ("today", "tomorrow", "yesterday", "day_after"):
        shift = {"today": 0, "tomorrow": 1, "yesterday": -1, "day_after": 2}[name]
        return today + timedelta(days=shift), None
    if name == "in_days":
        count = _SMALL.get(m.group("n").lower()) or int(m.group("n"))
        return today + timedelta(days=count * (7 if m.group("unit").startswith("w") else 1)), None
    if name == "month":
        return month_range(today, m.group("which").lower())
    if name == "week":
        return week_range(today, (m.group("which") or "this").lower(),
                          (m.group("span") or m.group("bare")).lower())
    if name == "weekday":
        day = weekday_date(today, WEEKDAYS[m.group("day").lower()],
                           (m.group("which") or "").lower())
        later = "week" in m.re.groupindex and m.group("week")
        return day + timedelta(days=7 if later else 0), None
    dom = int(m.group("dom"))
    day = next_day_of_month(today, dom)
    return None if day is None else (day, None)


def weekday_date(today: date, weekday: int, which: str) -> date:
    """The day `weekday` (0 = Monday) that "this", "next", "last" or nothing picks: the
    next such day from today on; "next" the one in next week; "last" the latest before
    today."""
    if which == "next":
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=weekday)
    if which == "last":
        back = (today.weekday() - weekday) % 7 or 7
        return today - timedelta(days=back)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def week_range(today: date, which: str, span: str) -> tuple[date, date]:
    """This, next or last week (Monday to Sunday) or weekend (Saturday and Sunday)."""
    monday = today - timedelta(days=today.weekday())
    monday += timedelta(days={"next": 7, "last": -7}.get(which, 0))
    if span == "weekend":
        return monday + timedelta(days=5), monday + timedelta(days=6)
    return monday, monday + timedelta(days=6)


def month_range(today: date, which: str) -> tuple[date, date]:
    """This, next or last calendar month, first day to last."""
    first = today.replace(day=1)
    if which == "next":
        first = (first + timedelta(days=32)).replace(day=1)
    elif which == "last":
        first = (first - timedelta(days=1)).replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    return first, following - timedelta(days=1)


def next_day_of_month(today: date, dom: int) -> date | None:
    """The next `dom`th of a month from today on ("the 22nd"), None if no month has it
    soon."""
    year, month = today.year, today.month
    for _ in range(3):
        try:
            day = date(year, month, dom)
        except ValueError:
            day = None
        if day is not None and day >= today:
            return day
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def written_date(phrase: str, today: date, day_first: bool = True) -> date | None:
    """A date written out ("3 December", "Dec 3rd 2026", "3/12"), through dateparser, the
    nearest such day from today on when it names no year."""
    import dateparser  # heavy: dateparser (cold start)

    cleaned = re.sub(rf"^(?:{_WEEKDAY})\s+", "", phrase.strip(), flags=re.I)
    settings = {"RELATIVE_BASE": datetime.combine(today, datetime.min.time()),
                "PREFER_DATES_FROM": "future", "DATE_ORDER": "DMY" if day_first else "MDY",
                "REQUIRE_PARTS": ["day", "month"]}
    parsed = dateparser.parse(cleaned, languages=["en"], settings=settings)  # type: ignore[arg-type]
    if parsed is None:
        return None
    day = parsed.date()
    if not re.search(r"\d{4}", cleaned) and day.year > today.year:
        try:
            earlier = day.replace(year=day.year - 1)
        except ValueError:
            return day
        if earlier >= today:  # dateparser's "future" leaves out today itself
            return earlier
    return day
