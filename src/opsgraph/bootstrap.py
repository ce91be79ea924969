"""Prepare the store once per process: every index, idempotently."""

from __future__ import annotations

import threading
from typing import Any

from pymongo.database import Database

from opsgraph.approvals.indexes import ensure_indexes as approval_indexes
from opsgraph.engine.thread_log import ensure_indexes as thread_log_indexes
from opsgraph.harness.versions import ensure_indexes as harness_indexes
from opsgraph.store.client import get_db
from opsgraph.store.indexes import ensure_indexes as domain_indexes
from opsgraph.store.run_slots import ensure_indexes as run_slot_indexes
from opsgraph.store.seed import seed_all

_done: set[str] = set()
_lock = threading.Lock()


def prepare_store(db: Database[dict[str, Any]] | None = None) -> Database[dict[str, Any]]:
    """Create every collection's indexes (once per process and database)."""
    # heavy: langgraph (cold start)
    from opsgraph.engine.threads import ensure_indexes as thread_indexes

    db = db if db is not None else get_db()
    with _lock:
        if db.name not in _done:
            domain_indexes(db)
            approval_indexes(db)
            thread_indexes(db)
            thread_log_indexes(db)
            harness_indexes(db)
            run_slot_indexes(db)
            _done.add(db.name)
    return db


def seed_if_new(db: Database[dict[str, Any]]) -> bool:
    """Seed the demo data set (`demo`, and `acme` beside it) on first start; True when it
    seeded."""
    if db["tenants"].find_one({"_id": "demo"}) is not None:
        return False
    seed_all(db)
    return True
