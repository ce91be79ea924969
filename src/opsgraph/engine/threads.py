"""One run at a time per thread: a lease in MongoDB taken by compare-and-set.

Two requests on the same thread (a new message while a decision resumes it, two decisions
on one thread) would race on its checkpoint; the second waits for the lease. The holder
renews the lease while its run goes on, so a long run keeps it, and a crashed holder's
lease lapses within `OPSGRAPH_THREAD_LEASE_S` (default 30 s).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from opsgraph.errors import Conflict
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope


def lease_seconds() -> float:
    """How long a lease lasts without renewal (`OPSGRAPH_THREAD_LEASE_S`)."""
    return get_settings().thread_lease_s


def _try_acquire(scope: TenantScope, thread_id: str, owner: str, lease_s: float) -> bool:
    now = datetime.now(UTC)
    try:
        got = scope["thread_leases"].find_one_and_update(
            {"thread_id": thread_id, "$or": [{"until": {"$lt": now}}, {"owner": owner}]},
            {"$set": {"owner": owner, "until": now + timedelta(seconds=lease_s)}},
            upsert=True)
    except DuplicateKeyError:  # somebody else holds a live lease
        return False
    return got is not None


def _renew_until_stopped(scope: TenantScope, thread_id: str, owner: str, lease_s: float,
                         stop: threading.Event) -> None:
    while not stop.wait(lease_s / 3):
        _try_acquire(scope, thread_id, owner, lease_s)


@contextlib.contextmanager
def thread_lease(scope: TenantScope, thread_id: str, wait_s: float = 60.0) -> Iterator[str]:
    """Hold the thread for one run; waits up to `wait_s` for another run to finish."""
    owner = uuid.uuid4().hex
    lease_s = lease_seconds()
    deadline = time.monotonic() + wait_s
    while not _try_acquire(scope, thread_id, owner, lease_s):
        if time.monotonic() > deadline:
            raise Conflict(f"thread {thread_id} is busy with another run; try again shortly")
        time.sleep(0.05)
    stop = threading.Event()
    renewer = threading.Thread(target=_renew_until_stopped, daemon=True,
                               args=(scope, thread_id, owner, lease_s, stop))
    renewer.start()
    try:
        yield owner
    finally:
        stop.set()
        renewer.join()
        scope["thread_leases"].delete_one({"thread_id": thread_id, "owner": owner})


def ensure_indexes(db: Database[dict[str, Any]]) -> None:
    """A unique (tenant, thread) index makes the upsert above a true compare-and-set."""
    db["thread_leases"].create_index([("tenant_id", 1), ("thread_id", 1)], unique=True)
