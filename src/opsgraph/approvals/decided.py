"""The approvals history: changes that reached a final status, newest first, filtered.

Filters (each optional, each checked: a bad one is BadInput naming it): `status` (one or
more of the final statuses), `operation` (an operation id), `requester` (a user id or a
person's name, whole, any case), `since`/`until` (ISO 8601 dates or times: when the change
ended), and `q` (text found, any case, in the summary, the request, the requester's name,
the feedback or the operation). Pages are `limit` rows long; `next` is the cursor of the
page after (ended before the last row shown), stable while new changes arrive on top.
Each row is the change's card with who decided and when — names, not user ids.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from opsgraph.approvals.pending import COLLECTION, FINAL, PendingChange
from opsgraph.errors import BadInput
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.operations.records import to_json
from opsgraph.store.people import display_names
from opsgraph.store.scope import Document, TenantScope

DEFAULT_LIMIT: Final = 25
MAX_LIMIT: Final = 100
MAX_QUERY: Final = 200
SEARCHED: Final = ("summary", "request", "proposed_by_name", "feedback", "operation")
DECISION: Final = ("decision", "decided_by", "decided_at", "finished_at", "feedback",
                   "withdrawn_reason", "error")
"""What a row adds to the change's card (`decided_by` by name)."""


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """What to list: every field optional, checked by `parse_query`."""

    statuses: tuple[str, ...] = FINAL
    operation: str | None = None
    requester: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    q: str | None = None
    limit: int = DEFAULT_LIMIT
    after: tuple[datetime, str] | None = None


def _moment(text: str, name: str, end: bool) -> datetime:
    """An ISO 8601 date (its start, or for `until` its end) or time, as UTC."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            start = datetime.combine(day, time(0), tzinfo=UTC)
            return start + timedelta(days=1) if end else start
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"{name}: {text!r} is not an ISO 8601 date (2026-12-01) or time "
                       "(2026-12-01T18:00:00Z)", field=name) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _cursor(text: str) -> tuple[datetime, str]:
    try:
        at, _, change_id = base64.urlsafe_b64decode(text.encode()).decode().partition("|")
        return datetime.fromisoformat(at), change_id
    except (ValueError, UnicodeError, binascii.Error):
        raise BadInput("cursor: not a cursor this list gave (use `next` as it came)",
                       field="cursor") from None


def _statuses(text: str) -> tuple[str, ...]:
    wanted = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in wanted if s not in FINAL]
    if unknown or not wanted:
        raise BadInput(f"status: {', '.join(map(repr, unknown)) or 'empty'} is not a final "
                       f"status (allowed: {', '.join(FINAL)})", field="status")
    return wanted


def _limit(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise BadInput(f"limit: a whole number from 1 to {MAX_LIMIT}", field="limit")
    return int(text)


def parse_query(params: Mapping[str, str]) -> HistoryQuery:
    """The query of `params` (a route's query string, the CLI's flags); BadInput naming the
    first bad one."""
    known = {"status", "operation", "requester", "since", "until", "q", "limit", "cursor"}
    for name in params:
        if name not in known:
            raise BadInput(f"{name}: unknown filter (allowed: {', '.join(sorted(known))})",
                           field=name)
    operation = params.get("operation") or None
    if operation is not None and operation not in CATALOGUE:
        raise BadInput(f"operation: unknown operation {operation!r}", field="operation")
    for name in ("q", "requester"):
        text = params.get(name) or ""
        if len(text) > MAX_QUERY or any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in text):
            raise BadInput(f"{name}: at most {MAX_QUERY} characters of text on one line",
                           field=name)
    q = (params.get("q") or "").strip() or None
    query = HistoryQuery(
        statuses=_statuses(params["status"]) if params.get("status") else FINAL,
        operation=operation, requester=(params.get("requester") or "").strip() or None,
        since=_moment(params["since"], "since", end=False) if params.get("since") else None,
        until=_moment(params["until"], "until", end=True) if params.get("until") else None,
        q=q, limit=_limit(params["limit"]) if params.get("limit") else DEFAULT_LIMIT,
        after=_cursor(params["cursor"]) if params.get("cursor") else None)
    if query.since and query.until and query.since >= query.until:
        raise BadInput("since: must be before until", field="since")
    return query


def _filter(query: HistoryQuery) -> Document:
    clauses: list[Document] = [{"status": {"$in": list(query.statuses)}},
                               {"finished_at": {"$ne": None}}]
    if query.operation:
        clauses.append({"operation": query.operation})
    if query.requester:
        whole = f"^{re.escape(query.requester)}$"
        clauses.append({"$or": [{"proposed_by": query.requester},
                                {"proposed_by_name": {"$regex": whole, "$options": "i"}}]})
    span: Document = {}
    if query.since:
        span["$gte"] = query.since
    if query.until:
        span["$lt"] = query.until
    if span:
        clauses.append({"finished_at": span})
    if query.q:
        text = {"$regex": re.escape(query.q), "$options": "i"}
        clauses.append({"$or": [{field: text} for field in SEARCHED]})
    if query.after:
        at, change_id = query.after
        clauses.append({"$or": [{"finished_at": {"$lt": at}},
                                {"finished_at": at, "_id": {"$lt": change_id}}]})
    return {"$and": clauses}


def _decider(user_id: str | None, names: Mapping[str, str]) -> Document | None:
    return {"user_id": user_id, "name": names[user_id]} if user_id else None


def _row(change: PendingChange, names: Mapping[str, str]) -> Document:
    row: Document = change.card()
    row.update(to_json({name: getattr(change, name) for name in DECISION}))
    row["decided_by"] = _decider(change.decided_by, names)
    return row


def decided_changes(scope: TenantScope, query: HistoryQuery) -> dict[str, Any]:
    """`{changes: [row], next: cursor | None}`, the newest ended first."""
    docs = list(scope[COLLECTION].find(_filter(query), sort=[("finished_at", -1), ("_id", -1)],
                                       limit=query.limit + 1))
    shown = [PendingChange.model_validate(d) for d in docs[:query.limit]]
    names = display_names(scope, {c.decided_by for c in shown if c.decided_by})
    rows = [_row(change, names) for change in shown]
    following = None
    if len(docs) > query.limit:
        last = docs[query.limit - 1]
        at = last["finished_at"].astimezone(UTC)
        following = base64.urlsafe_b64encode(f"{at.isoformat()}|{last['_id']}".encode()).decode()
    return {"changes": rows, "next": following}
