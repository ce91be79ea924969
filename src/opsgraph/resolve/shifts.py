"""A shift named by its day, its part of the day and its role: "the open maintenance shift
next monday", "the empty sunday evening coaching shift next week", "Kim's desk shift on
thursday".

Shifts have no names, so a request names one the way the rota shows it. When the request
says "shift" (or "duty") and names a day, one indexed query reads the shifts of that day;
the role or place words the request uses ("maintenance", "coaching" for coach, "desk" for
front_desk, "reception"), a time or part of the day ("evening": shifts overlapping it, "at
9": the one starting then), "open" / "empty" (nobody on it) and a staff member named with
it narrow them. A day named with a week ("sunday evening … next week") is that weekday of
the week. Only an agent whose slot holds a shift asks for one (engine.slot_reading), so
these mentions are not part of what `opsgraph resolve` prints.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from opsgraph.operations.base import Context
from opsgraph.resolve.mentions import Candidate, Mention
from opsgraph.resolve.tokens import tokenize

Document = dict[str, Any]
_SHIFT = re.compile(r"\b(?:shifts?|duty|rota\s+slot)\b", re.I)
_OPEN = re.compile(r"\b(?:open|empty|free|unfilled|vacant|spare|uncovered|unassigned|"
                   r"unstaffed)\b", re.I)
MAX_CANDIDATES = 10


def find_shift(ctx: Context, text: str, found: tuple[Mention, ...], zone: ZoneInfo, *,
               open_only: bool = False) -> Mention | None:
    """The shift `text` names by day (and role, time, staff), if it names one that way:
    a mention with the shift's id, or its candidates when several fit, or None when the
    request names no shift and day (or nothing fits). `open_only`: the caller wants a
    shift to give someone (an open one when any fits)."""
    word = _SHIFT.search(text)
    days = _days(found, zone)
    if word is None or not days:
        return None
    first, last = min(days), max(days)
    docs = list(ctx.scope["shifts"].find(
        {"start": {"$gte": _midnight(first, zone),
                   "$lt": _midnight(last + timedelta(days=1), zone)}}))
    docs = [d for d in docs if _local_day(d["start"], zone) in days]
    docs = _by_words(docs, text) or docs
    docs = _by_time(docs, found, zone)
    staff = {m.value for m in found if m.kind == "staff" and m.value}
    if _OPEN.search(text) or open_only:
        docs = [d for d in docs if not d.get("staff_id")] or ([] if _OPEN.search(text) else docs)
    elif staff:  # "Kim's desk shift": the one Kim works, when the request names no one else
        docs = [d for d in docs if d.get("staff_id") in staff] or docs
    if not docs:
        return None
    docs.sort(key=lambda d: (_aware(d["start"]), str(d["_id"])))
    names = _staff_names(ctx, docs)
    if len(docs) == 1:
        return Mention(word.group(), "shift", str(docs[0]["_id"]),
                       shift_label(docs[0], names, zone), start=word.start())
    cands = tuple(Candidate(str(d["_id"]), shift_label(d, names, zone))
                  for d in docs[:MAX_CANDIDATES])
    return Mention(word.group(), "shift", candidates=cands, start=word.start())


def shift_label(doc: Document, staff_names: dict[str, str], zone: ZoneInfo) -> str:
    """How a shift is named to a person or a model: role, day, hours, place and who is
    on it ("maintenance shift Mon 7 Dec 07:00–11:00 at Grounds, open")."""
    start, end = _aware(doc["start"]).astimezone(zone), _aware(doc["end"]).astimezone(zone)
    who = staff_names.get(str(doc.get("staff_id")), "") if doc.get("staff_id") else "open"
    role = str(doc.get("role") or "").replace("_", " ")
    return (f"{role} shift {start:%a} {start.day} {start:%b %H:%M}–{end:%H:%M} at "
            f"{doc.get('location', '')}, {who}")


def _days(found: tuple[Mention, ...], zone: ZoneInfo) -> set[date]:
    """The days the request names, a weekday or part of a day moved into the week it
    names ("sunday evening … next week": that week's Sunday)."""
    weeks = [(date.fromisoformat(m.value[:10]), date.fromisoformat(m.end[:10]))
             for m in found if m.kind == "date" and m.value and m.end]
    days: set[date] = set()
    for m in found:
        if m.kind not in ("date", "datetime") or not m.value or (m.kind == "date" and m.end):
            continue
        day = datetime.fromisoformat(m.value).astimezone(zone).date() if m.kind == "datetime" \
            else date.fromisoformat(m.value)
        for first, last in weeks:
            if not first <= day <= last and (last - first).days == 6:
                day = first + timedelta(days=(day.weekday() - first.weekday()) % 7)
        days.add(day)
    if not days:  # only a range ("next week"): each of its days
        for first, last in weeks:
            days.update(first + timedelta(days=n) for n in range((last - first).days + 1))
    return days


def _by_words(docs: list[Document], text: str) -> list[Document]:
    """The shifts whose role or place the request's words name ("coaching" names coach,
    "desk" front_desk), or none when no word names one."""
    said = [t.norm for t in tokenize(text) if len(t.norm) >= 4]

    def named(doc: Document) -> bool:
        words = re.split(r"[\s_]+", f"{doc.get('role', '')} {doc.get('location', '')}".lower())
        return any(w and len(w) >= 4 and (s.startswith(w) or w.startswith(s))
                   for w in words for s in said)

    return [d for d in docs if named(d)]


def _by_time(docs: list[Document], found: tuple[Mention, ...], zone: ZoneInfo
             ) -> list[Document]:
    """The shifts a time the request names fits: starting at a moment ("at 9"), or
    overlapping a part of the day ("evening"); all of them when it names no time."""
    for m in found:
        if m.kind != "datetime" or not m.value:
            continue
        start = datetime.fromisoformat(m.value)
        if m.end is None:
            exact = [d for d in docs if _clock(d["start"], zone) == _clock(start, zone)]
            return exact or docs
        first, last = _clock(start, zone), _clock(datetime.fromisoformat(m.end), zone)
        last = last if last > first else time.max  # "evening" may end at midnight
        return [d for d in docs
                if _clock(d["start"], zone) < last and _ends(d["end"], zone) > first] or docs
    return docs


def _staff_names(ctx: Context, docs: list[Document]) -> dict[str, str]:
    ids = sorted({str(d["staff_id"]) for d in docs if d.get("staff_id")})
    if not ids:
        return {}
    return {str(s["_id"]): str(s.get("name", s["_id"]))
            for s in ctx.scope["staff"].find({"_id": {"$in": ids}}, projection={"name": 1})}


def _clock(value: datetime, zone: ZoneInfo) -> time:
    return _aware(value).astimezone(zone).time()


def _ends(value: datetime, zone: ZoneInfo) -> time:
    """The clock time a shift ends at, midnight as the day's end."""
    clock = _clock(value, zone)
    return time.max if clock == time(0) else clock


def _local_day(value: datetime, zone: ZoneInfo) -> date:
    return _aware(value).astimezone(zone).date()


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)
