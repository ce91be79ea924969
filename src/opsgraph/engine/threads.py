"""One run at a time per thread: a lease in MongoDB taken by compare-and-set.

Two requests on the same thread (a new message while a decision resumes it, two decisions
on one thread) would race on its checkpoint; the second waits for the lease, and a crashed
holder's lease simply expires.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from opsgraph.errors import Conflict
from opsgraph.store.scope import TenantScope

LEASE_S = 120.0


def _try_acquire(scope: TenantScope, thread_id: str, owner: str) -> bool:
    now = datetime.now(UTC)
    try:
        got = scope["thread_leases"].find_one_and_update(
            {"thread_id": thread_id, "$or": [{"until": {"$lt": now}}, {"owner": owner}]},
            {"$set": {"owner": owner, "until": now + timedelta(seconds=LEASE_S)}},
            upsert=True)
    except DuplicateKeyError:  # somebody else holds a live lease
        return False
    return got is not None


@contextlib.contextmanager
def thread_lease(scope: TenantScope, thread_id: str, wait_s: float = 60.0) -> Iterator[str]:
    """Hold the thread for one run; waits up to `wait_s` for another run to finish."""
    owner = uuid.uuid4().hex
    deadline = time.monotonic() + wait_s
    while not _try_acquire(scope, thread_id, owner):
        if time.monotonic() > deadline:
            raise Conflict(f"thread {thread_id} is busy with another run; try again shortly")
        time.sleep(0.05)
    try:
        yield owner
    finally:
        scope["thread_leases"].delete_one({"thread_id": thread_id, "owner": owner})


def ensure_indexes(db: Database[dict[str, Any]]) -> None:
    """A unique (tenant, thread) index makes the upsert above a true compare-and-set."""
    db["thread_leases"].create_index([("tenant_id", 1), ("thread_id", 1)], unique=True)
