"""Indexes of the approval collections, created idempotently."""

from __future__ import annotations

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.database import Database

from opsgraph import audit
from opsgraph.approvals import pending
from opsgraph.store.scope import Document

PENDING_INDEXES = (
    # The idempotency key of record_pending: the race of two first recordings ends here.
    IndexModel([("tenant_id", ASCENDING), ("thread_id", ASCENDING), ("task_id", ASCENDING),
                ("attempt", ASCENDING), ("fingerprint", ASCENDING)],
               unique=True, name="proposal_key"),
    IndexModel([("tenant_id", ASCENDING), ("status", ASCENDING), ("created_at", ASCENDING)],
               name="tenant_status_created"),
    # A retried request: the same proposal (fingerprint) pending, or proposed by this run
    # before a retry moved it (`earlier_runs`).
    IndexModel([("tenant_id", ASCENDING), ("fingerprint", ASCENDING), ("status", ASCENDING)],
               name="tenant_fingerprint_status"),
    # The history (`approvals.decided`): ended changes, newest first.
    IndexModel([("tenant_id", ASCENDING), ("finished_at", DESCENDING)],
               name="tenant_finished"),
    # The expiry sweep runs across tenants.
    IndexModel([("status", ASCENDING), ("expires_at", ASCENDING)], name="status_expires"),
)
AUDIT_INDEXES = (
    # `history`: one change's rows in order.
    IndexModel([("tenant_id", ASCENDING), ("change_id", ASCENDING), ("at", ASCENDING)],
               name="tenant_change_at"),
    # A tenant's trail, newest first (direct writes are audited here too).
    IndexModel([("tenant_id", ASCENDING), ("at", DESCENDING)], name="tenant_at"),
)


def ensure_indexes(db: Database[Document]) -> None:
    """Create the indexes of `pending_changes` and `audit` (a no-op when they exist)."""
    db[pending.COLLECTION].create_indexes(list(PENDING_INDEXES))
    db[audit.COLLECTION].create_indexes(list(AUDIT_INDEXES))
