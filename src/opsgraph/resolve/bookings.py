"""A booking named by whose it is and when: "Jane Smith's booking on Sunday", "cancel Tom's
court 2 slot tomorrow at 6".

Bookings have no names, so a request names one by its member and its day (or time, or
court). When the request says "booking" (or "reservation", "slot") and names one member,
one indexed query reads that member's confirmed bookings on the days named (from today on
when it names none), and the court and time named narrow them. A member asking sees only
their own bookings (the member mention is theirs already, resolve.names).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from opsgraph.operations.base import Context
from opsgraph.resolve.keys import label_of
from opsgraph.resolve.mentions import Candidate, Mention

Document = dict[str, Any]
_BOOKING = re.compile(r"\b(?:booking|bookings|reservation|slot|court\s+booking)\b", re.I)
_AHEAD = timedelta(days=28)  # "her booking", no day named: the next four weeks
MAX_CANDIDATES = 10


def find_booking(ctx: Context, text: str, found: list[Mention], zone: ZoneInfo
                 ) -> Mention | None:
    """The booking `text` names by member and day, if it names one that way."""
    word = _BOOKING.search(text)
    members = [m for m in found if m.kind == "member" and m.value]
    if word is None or len(members) != 1 or any(m.kind == "booking" for m in found):
        return None
    first, last, at = _window(found, ctx.now, zone)
    docs = list(ctx.scope["bookings"].find(
        {"member_id": members[0].value, "status": "confirmed",
         "start": {"$gte": first, "$lt": last}}))
    resources = {m.value for m in found if m.kind == "resource" and m.value}
    docs = [d for d in docs if not resources or d.get("resource_id") in resources]
    if at is not None:
        docs = [d for d in docs if _aware(d["start"]) == at] or docs
    docs.sort(key=lambda d: (_aware(d["start"]), str(d["_id"])))
    if len(docs) == 1:
        return Mention(word.group(), "booking", str(docs[0]["_id"]),
                       label_of("bookings", docs[0]), start=word.start())
    cands = tuple(Candidate(str(d["_id"]), label_of("bookings", d))
                  for d in docs[:MAX_CANDIDATES])
    return Mention(word.group(), "booking", candidates=cands, start=word.start())


def _window(found: list[Mention], now: datetime, zone: ZoneInfo
            ) -> tuple[datetime, datetime, datetime | None]:
    """The instants to look between, and the exact start when a time is named."""
    for m in found:
        if m.kind == "datetime" and m.value:
            at = datetime.fromisoformat(m.value)
            day = at.astimezone(zone).date()
            return _midnight(day, zone), _midnight(day + timedelta(days=1), zone), (
                at if m.end is None or _is_hour(m) else None)
        if m.kind == "date" and m.value:
            first = date.fromisoformat(m.value)
            last = date.fromisoformat(m.end) if m.end else first
            return _midnight(first, zone), _midnight(last + timedelta(days=1), zone), None
    start = _midnight(now.astimezone(zone).date(), zone)
    return start, start + _AHEAD, None


def _is_hour(m: Mention) -> bool:
    assert m.value is not None and m.end is not None
    return datetime.fromisoformat(m.end) - datetime.fromisoformat(m.value) <= timedelta(hours=2)


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)
