"""An event named without its date ("yoga") picked out by the day the request names
("yoga on thursday"): one indexed lookup of the candidates by id."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from opsgraph.operations.base import Context
from opsgraph.resolve.mentions import Mention


def _days(moment: Mention) -> tuple[date, date] | None:
    """The first and last day a date or datetime mention covers."""
    if moment.value is None:
        return None
    first = date.fromisoformat(moment.value[:10])
    last = date.fromisoformat(moment.end[:10]) if moment.end else first
    return first, last


def narrow_events(ctx: Context, found: list[Mention], moments: list[Mention],
                  zone: ZoneInfo) -> list[Mention]:
    """`found` with each ambiguous event mention settled when exactly one of its
    candidates falls on a day the request names (else narrowed to those that do)."""
    spans = [d for m in moments if (d := _days(m)) is not None]
    if not spans:
        return found
    out = []
    for mention in found:
        if mention.kind != "event" or not mention.candidates:
            out.append(mention)
            continue
        ids = [c.value for c in mention.candidates]
        docs = ctx.scope["events"].find({"_id": {"$in": ids}}, projection={"start": 1, "title": 1})
        by_id = {str(d["_id"]): d for d in docs}
        starts = {k: _local_day(d.get("start"), zone) for k, d in by_id.items()}
        keep = [c for c in mention.candidates
                if any(a <= (starts.get(c.value) or date.min) <= b for a, b in spans)]
        if len(keep) == 1:
            title = str(by_id[keep[0].value].get("title") or keep[0].label)
            out.append(Mention(mention.text, "event", keep[0].value, title,
                               start=mention.start))
        elif keep:
            out.append(Mention(mention.text, "event", candidates=tuple(keep),
                               start=mention.start))
        else:
            out.append(mention)
    return out


def _local_day(value: object, zone: ZoneInfo) -> date | None:
    if not isinstance(value, datetime):
        return None
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    return aware.astimezone(zone).date()
