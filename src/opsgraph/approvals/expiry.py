"""Closing a pending change nobody can approve any more; it never applies.

Expiry: a change past its `expires_at` moves to `expired`. A decision that arrives late
expires its change on the spot (and answers 410); the scheduled sweep `expire_due` expires
the rest, so the runs waiting on them can learn it.

Orphaning: a change whose run can no longer resume — the process died or the run failed
after it recorded the proposal and before it paused — moves to `orphaned`. Whether a run
still waits is the engine's to say (its checkpoints and thread leases); `orphan_change`
is the compare-and-set it calls, and a decision on an orphaned change answers 410.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo.database import Database

from opsgraph.approvals.dependents import withdraw_dependents
from opsgraph.approvals.pending import COLLECTION, PendingChange, utcnow
from opsgraph.audit import record_transition
from opsgraph.store.scope import Document, TenantScope

SWEEP_ACTOR = "system:expiry"


def expire_change(scope: TenantScope, change: PendingChange, actor: str, now: datetime,
                  detail: dict[str, Any] | None = None) -> bool:
    """CAS pending → expired when the change is past its expiry; True when this call won."""
    moved = scope[COLLECTION].find_one_and_update(
        {"_id": change.change_id, "status": "pending", "expires_at": {"$lte": now}},
        {"$set": {"status": "expired", "expired_at": now, "finished_at": now}},
    )
    if moved is None:
        return False
    record_transition(scope, change.change_id, "pending", "expired", actor, change.thread_id,
                      detail=detail, operation=change.operation, now=now)
    withdraw_dependents(scope, change, actor, "expired", now)
    return True


def orphan_change(scope: TenantScope, change: PendingChange, actor: str, now: datetime,
                  detail: dict[str, Any] | None = None) -> bool:
    """CAS pending → orphaned, unless the change moved on or to another run since `change`
    was read (a retry took it); True when this call won."""
    moved = scope[COLLECTION].find_one_and_update(
        {"_id": change.change_id, "status": "pending", "thread_id": change.thread_id,
         "task_id": change.task_id, "attempt": change.attempt},
        {"$set": {"status": "orphaned", "orphaned_at": now, "finished_at": now}},
    )
    if moved is None:
        return False
    record_transition(scope, change.change_id, "pending", "orphaned", actor, change.thread_id,
                      detail=detail, operation=change.operation, now=now)
    withdraw_dependents(scope, change, actor, "orphaned", now)
    return True


def unexpired_pending(db: Database[Document], now: datetime | None = None,
                      ) -> list[PendingChange]:
    """Every tenant's pending changes not yet past their expiry (the orphan sweep's list)."""
    docs = db[COLLECTION].find({"status": "pending", "expires_at": {"$gt": utcnow(now)}})
    return [PendingChange.model_validate(d) for d in docs]


def expired_unresumed(db: Database[Document]) -> list[Document]:
    """Expired changes (all tenants) whose paused run was never told: `{_id, tenant_id,
    thread_id}` each."""
    return list(db[COLLECTION].find({"status": "expired", "resumed_at": None},
                                    {"tenant_id": 1, "thread_id": 1}))


def expire_due(db_or_scope: Database[Document] | TenantScope, now: datetime | None = None,
               ) -> int:
    """Expire every pending change past its expiry (one tenant, or all given a database).

    Returns how many this sweep expired; safe to run concurrently with decisions and with
    other sweeps (each change moves by compare-and-set, once).
    """
    at = utcnow(now)
    due = {"status": "pending", "expires_at": {"$lte": at}}
    if isinstance(db_or_scope, TenantScope):
        scope = db_or_scope
        pairs = [(scope, d) for d in scope[COLLECTION].find(due)]
    else:
        db = db_or_scope
        pairs = [(TenantScope(db, d["tenant_id"]), d) for d in db[COLLECTION].find(due)]
    expired = 0
    for scope, doc in pairs:
        change = PendingChange.model_validate(doc)
        if expire_change(scope, change, SWEEP_ACTOR, at, detail={"by": "sweep"}):
            expired += 1
    return expired
