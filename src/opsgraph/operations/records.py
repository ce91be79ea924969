"""Record plumbing shared by the domain modules: fetch, render as JSON, derive ids, time.

Times are stored as UTC datetimes; an input without an offset is read as UTC (the venue
clock of the demo tenants). Money is a float rounded to cents.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from bson.decimal128 import Decimal128
from pymongo.errors import DuplicateKeyError

from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.operations.base import Context
from opsgraph.operations.fields import money_json
from opsgraph.store.scope import ScopedCollection
from opsgraph.store.search_keys import KEY_FIELDS

Document = dict[str, Any]

# Bookkeeping fields that say nothing to a reader of the record.
_HIDDEN = frozenset({"tenant_id", "applied_changes", *KEY_FIELDS})


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime (a naive one is taken to be UTC already)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """[midnight, next midnight) of `day` in UTC."""
    start = datetime.combine(day, time(0), tzinfo=UTC)
    return start, start + timedelta(days=1)


def at_time(day: date, hhmm: str) -> datetime:
    """`day` at the wall-clock time "HH:MM" (UTC)."""
    hours, minutes = (int(part) for part in hhmm.split(":"))
    return datetime.combine(day, time(hours, minutes), tzinfo=UTC)


def to_json(value: Any) -> Any:
    """Datetimes and dates as ISO 8601 strings, amounts as JSON numbers, recursively;
    everything else unchanged."""
    if isinstance(value, datetime):
        return as_utc(value).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal | Decimal128):
        return money_json(value)
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


def record_json(doc: Mapping[str, Any]) -> Document:
    """A stored document as callers see it: `_id` → `id`, bookkeeping dropped."""
    out: Document = {"id": doc["_id"]}
    out.update({k: to_json(v) for k, v in doc.items() if k != "_id" and k not in _HIDDEN})
    return out


def require(ctx: Context, collection: str, record_id: str, kind: str) -> Document:
    """The record with this id in the caller's tenant, or NotFound."""
    doc = ctx.scope[collection].find_one({"_id": record_id})
    if doc is None:
        raise NotFound(f"{kind}: no {kind} with id {record_id!r}")
    return doc


def stable_id(ctx: Context, prefix: str, *parts: str) -> str:
    """A short id that is a pure function of the tenant and `parts`."""
    key = ":".join((ctx.scope.tenant_id, *parts))
    return f"{prefix}_{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def derived_id(ctx: Context, prefix: str, change_id: str) -> str:
    """The id of the record a change creates: the same change always makes the same id."""
    return stable_id(ctx, prefix, change_id)


def insert_once(coll: ScopedCollection, doc: Document) -> Document:
    """Insert `doc` unless a record with its `_id` exists; return the stored record."""
    existing = coll.find_one({"_id": doc["_id"]})
    if existing is not None:
        return existing
    try:
        coll.insert_one(doc)
    except DuplicateKeyError:
        # A concurrent apply of the same change won the race; its record is ours.
        existing = coll.find_one({"_id": doc["_id"]})
        if existing is None:
            raise Conflict(f"{coll.name}: another record already holds the same key") from None
        return existing
    return {**doc, "tenant_id": coll.tenant_id}


def update_once(coll: ScopedCollection, record_id: str, change_id: str,
                update: Mapping[str, Any], guard: Mapping[str, Any] | None = None) -> bool:
    """Apply `update` unless this change already did; False when nothing was applied.

    The record remembers the change ids applied to it, so a retried apply is a no-op.
    `guard` adds compare-and-set conditions (the state the change was computed from).
    """
    flt: Document = {"_id": record_id, "applied_changes": {"$ne": change_id}, **(guard or {})}
    full = {**update, "$addToSet": {"applied_changes": change_id}}
    return coll.update_one(flt, full).modified_count == 1


def was_applied(coll: ScopedCollection, record_id: str, change_id: str) -> bool:
    """True when `change_id` has already been applied to the record."""
    return coll.count({"_id": record_id, "applied_changes": change_id}) > 0


def not_in_past(ctx: Context, when: datetime, field: str) -> None:
    """BadInput naming `field` when `when` is before now."""
    if as_utc(when) < ctx.now:
        raise BadInput(f"{field}: {as_utc(when).isoformat()} is in the past")


def short_when(value: datetime) -> str:
    """'Fri 04 Dec 18:00' for summaries."""
    return as_utc(value).strftime("%a %d %b %H:%M")
