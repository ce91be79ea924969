"""Expected times relative to when a case runs, so that an invented date fails.

A case's `expect.args` and `expect.interrupts[].args` may give a time as
- `"+1d 18:00"`: N days after the day the case runs (the venue's today), at that time in
  the venue's time zone (`+0d` is today, `-1d` yesterday);
- `"week+3d 18:00"`: N days after the seeded week's Monday (the demo seed's anchor: its
  events and shifts are dated by such offsets), at that time;
- `"thu 19:00"`: the coming Thursday (today when the case runs on a Thursday), as a person
  means "thurs evening"; `"next-week thu 19:00"`: the Thursday of the week after the one the
  case runs in (weeks start on Monday), as in "wednesday next week";
- any of these without a time (`"+1d"`, `"week+3d"`, `"thu"`): that day, which matches any
  time on it.
Before scoring, `case_at` replaces each with the ISO 8601 value it stands for; the matcher
then compares instants (a datetime) or days (a date), so "tomorrow" read as today fails.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from opsgraph.evals.cases import Case
from opsgraph.resolve.score import OFFSET, at_offset

WEEK = "week"
"""The prefix of an offset from the seeded week's Monday ("week+3d 18:00")."""
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAY = re.compile(r"^(?P<next>next-week\s+)?(?P<day>" + "|".join(WEEKDAYS)
                     + r")(?P<time>\s+\d{1,2}:\d{2})?$")
"""A weekday, optionally of next week, optionally at a time of day: "next-week wed 17:00"."""


def is_relative(value: Any) -> bool:
    """Whether `value` is a relative time of this module's form."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return (OFFSET.match(text.removeprefix(WEEK)) is not None
            or WEEKDAY.match(text) is not None)


def _as_offset(text: str, today: date) -> str:
    """A weekday form as the day offset from `today` it stands for ("thu 19:00" on a Friday
    is "+6d 19:00"); any other text as it is."""
    m = WEEKDAY.match(text)
    if m is None:
        return text
    weekday = WEEKDAYS.index(m.group("day"))
    if m.group("next"):
        days = 7 - today.weekday() + weekday
    else:
        days = (weekday - today.weekday()) % 7
    return f"+{days}d{m.group('time') or ''}"


def absolute(value: str, today: date, week: date, zone: ZoneInfo) -> str:
    """The ISO 8601 date or datetime a relative time stands for."""
    text = value.strip()
    base = week if text.startswith(WEEK) else today
    when = at_offset(_as_offset(text, today).removeprefix(WEEK), base, zone)
    if when is None:
        return value
    return when.isoformat() if isinstance(when, datetime) else when


def _resolved(value: Any, today: date, week: date, zone: ZoneInfo) -> Any:
    if isinstance(value, dict):
        return {k: _resolved(v, today, week, zone) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolved(v, today, week, zone) for v in value]
    return absolute(value, today, week, zone) if is_relative(value) else value


def case_at(case: Case, now: datetime, timezone: str, anchor: datetime | None) -> Case:
    """`case` with every relative time of its expected arguments made absolute, for a run
    that starts at `now` in the venue's `timezone` on the week seeded at `anchor`."""
    zone = ZoneInfo(timezone)
    today = now.astimezone(zone).date()
    week = (anchor.astimezone(zone).date() if anchor is not None
            else today - timedelta(days=today.weekday()))
    expect = case.expect
    args = _resolved(expect.args, today, week, zone)
    cards = None if expect.interrupts is None else [
        card.model_copy(update={"args": _resolved(card.args, today, week, zone)})
        for card in expect.interrupts]
    return case.model_copy(update={"expect": expect.model_copy(
        update={"args": args, "interrupts": cards})})
