"""Indexes of the domain collections; `ensure_indexes` is safe to run on every start.

Every compound index leads with `tenant_id`, because every query the tenant scope sends
filters on it. Names are explicit so re-running with the same spec is a no-op.
"""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.database import Database

Document = dict[str, Any]
T = ("tenant_id", ASCENDING)
_HAS_EMAIL = {"email": {"$type": "string"}}


def _ix(name: str, *keys: tuple[str, int], unique: bool = False,
        partial: Document | None = None) -> IndexModel:
    options: Document = {"name": name, "unique": unique}
    if partial is not None:
        options["partialFilterExpression"] = partial
    return IndexModel([T, *keys], **options)


INDEXES: dict[str, list[IndexModel]] = {
    "members": [_ix("tenant_email", ("email", ASCENDING), unique=True, partial=_HAS_EMAIL),
                _ix("tenant_name", ("name", ASCENDING))],
    "staff": [_ix("tenant_name", ("name", ASCENDING))],
    "shifts": [_ix("tenant_date", ("date", ASCENDING), ("start", ASCENDING)),
               _ix("tenant_staff_start", ("staff_id", ASCENDING), ("start", ASCENDING))],
    "resources": [_ix("tenant_name", ("name", ASCENDING))],
    "bookings": [
        _ix("tenant_resource_start", ("resource_id", ASCENDING), ("start", ASCENDING)),
        _ix("tenant_member_start", ("member_id", ASCENDING), ("start", ASCENDING)),
        _ix("tenant_start", ("start", ASCENDING)),
        # Two confirmed bookings can never start on the same resource at the same moment,
        # even if two applies race past the overlap check.
        _ix("tenant_resource_start_confirmed", ("resource_id", ASCENDING),
            ("start", ASCENDING), unique=True, partial={"status": "confirmed"}),
    ],
    "events": [_ix("tenant_start", ("start", ASCENDING))],
    "registrations": [_ix("tenant_event_status", ("event_id", ASCENDING),
                          ("status", ASCENDING), ("at", ASCENDING)),
                      _ix("tenant_member", ("member_id", ASCENDING)),
                      _ix("tenant_event_member", ("event_id", ASCENDING),
                          ("member_id", ASCENDING), unique=True)],
    "invoices": [_ix("tenant_number", ("number", ASCENDING), unique=True),
                 _ix("tenant_seq", ("seq", DESCENDING)),
                 _ix("tenant_member_issued", ("member_id", ASCENDING), ("issued", DESCENDING)),
                 _ix("tenant_status_due", ("status", ASCENDING), ("due", ASCENDING))],
    "inbox": [_ix("tenant_status_received", ("status", ASCENDING),
                  ("received_at", DESCENDING))],
    "outbox": [_ix("tenant_created", ("created_at", DESCENDING))],
    "knowledge": [_ix("tenant_slug", ("slug", ASCENDING), unique=True)],
    "tickets": [_ix("tenant_resource_status", ("resource_id", ASCENDING),
                    ("status", ASCENDING))],
}
"""Collection → its indexes. `tenants` is keyed by `_id` (the tenant id) and needs none."""


def ensure_indexes(db: Database[Document]) -> dict[str, list[str]]:
    """Create any missing index of the domain collections; returns names per collection."""
    return {name: db[name].create_indexes(models) for name, models in INDEXES.items()}
