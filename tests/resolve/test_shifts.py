"""A shift named by its day, role and time (resolve.shifts), against the seeded demo club:
the expected shift is read from the store with the same words a rota shows."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pymongo.database import Database

from opsgraph.operations.base import Context
from opsgraph.principal import Principal, parse_channel, parse_role
from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.resolver import resolve_request
from opsgraph.resolve.score import anchor_of, clock_at
from opsgraph.resolve.shifts import find_shift
from opsgraph.store.scope import TenantScope

Document = dict[str, Any]
UTC_ZONE = ZoneInfo("UTC")


def _shift(club: Database[Document], text: str, now: str = "+2d 10:00",
           open_only: bool = False) -> Mention | None:
    principal = Principal("demo", "alex", frozenset({parse_role("manager")}),
                          parse_channel("dashboard"))
    scope = TenantScope(club, "demo")
    clock = clock_at(scope, now)
    ctx = Context(scope, principal, clock)
    found = resolve_request(ctx, text, timezone="UTC", now=clock)
    return find_shift(ctx, text, found.mentions, UTC_ZONE, open_only=open_only)


def _day(club: Database[Document], offset: int) -> date:
    return anchor_of(TenantScope(club, "demo")).date() + timedelta(days=offset)


def _shifts(club: Database[Document], day: date, **where: Any) -> list[Document]:
    return list(club["shifts"].find({"tenant_id": "demo", "date": day.isoformat(), **where}))


def test_the_open_shift_of_a_role_on_a_named_day(club: Database[Document]) -> None:
    monday = _day(club, 7)  # said on Wednesday: "next monday" is the anchor's next Monday
    rows = _shifts(club, monday, role="coach")
    open_ones = [r for r in rows if r["staff_id"] is None]
    found = _shift(club, "put ben on the coaching shift next monday", open_only=True)
    assert found is not None and found.kind == "shift" and found.text == "shift"
    expected = open_ones or rows
    if len(expected) == 1:
        assert found.value == expected[0]["_id"]
        assert found.label is not None and found.label.startswith("coach shift Mon")
    else:
        assert {c.value for c in found.candidates} == {r["_id"] for r in expected}


def test_role_words_place_words_and_parts_of_the_day_narrow_the_day(
        club: Database[Document]) -> None:
    tuesday = _day(club, 8)
    (morning,) = [r for r in _shifts(club, tuesday, role="front_desk")
                  if r["start"].hour < 12]
    found = _shift(club, "swap kim off the reception shift next tuesday morning")
    assert found is not None and found.value == morning["_id"], found
    (maintenance,) = _shifts(club, tuesday, role="maintenance")
    found = _shift(club, "who covers the grounds shift on tuesday next week")
    assert found is not None and found.value == maintenance["_id"]


def test_a_weekday_said_with_a_week_is_that_weekday_of_the_week(
        club: Database[Document]) -> None:
    sunday = _day(club, 13)
    evening = [r for r in _shifts(club, sunday, role="coach") if r["end"].hour >= 17]
    found = _shift(club, "give the sunday evening coaching shift next week to hana")
    assert found is not None
    assert {found.value} | {c.value for c in found.candidates} == {r["_id"] for r in evening}


def test_open_words_keep_only_open_shifts_and_none_fit_is_nothing(
        club: Database[Document]) -> None:
    days = [_day(club, n) for n in range(2, 14)]
    taken = next((d, r) for d in days for r in _shifts(club, d, role="maintenance")
                 if r["staff_id"] is not None
                 and all(x["staff_id"] is not None
                         for x in _shifts(club, d, role="maintenance")))
    day, _ = taken
    when = f"on {day:%A} {day.day} {day:%B}"
    assert _shift(club, f"put ben on the open maintenance shift {when}") is None
    found = _shift(club, f"put ben on the maintenance shift {when}")
    assert found is not None and found.value == taken[1]["_id"]


@pytest.mark.parametrize("text", ["book court 1 next monday at 6",
                                  "what shifts are there?"])
def test_no_shift_word_or_no_day_names_no_shift(club: Database[Document], text: str) -> None:
    assert _shift(club, text) is None
