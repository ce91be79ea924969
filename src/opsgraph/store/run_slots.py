"""Runs in flight per tenant and per user, counted in the store so the limit holds across
every process on it (`OPSGRAPH_TENANT_RUNS`, `OPSGRAPH_USER_RUNS`).

A user may hold `user_runs` slots, a tenant `tenant_runs`; each slot is a lease
(`store.leases`) on a document of `run_slots` keyed `user:<user>:<k>` or `tenant:<k>`,
k < the limit. A run takes one of its user's slots, then one of its tenant's; when every
slot of either is held by a live lease, the run is refused (429 with `Retry-After`). The
unique index on (tenant, slot) makes each take a compare-and-set, so runs spread over any
number of processes can never hold more slots than there are. A run's slots are renewed
while it goes on and deleted when it ends; a process that dies stops renewing, and its
slots lapse `OPSGRAPH_RUN_SLOT_LEASE_S` later.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from pymongo.database import Database

from opsgraph.errors import TooManyRequests
from opsgraph.principal import Principal
from opsgraph.settings import get_settings
from opsgraph.store.leases import Lease, try_acquire
from opsgraph.store.scope import ScopedCollection, TenantScope

RUN_SLOTS_COLLECTION = "run_slots"
"""`{tenant_id, slot, owner, until, user_id, taken_at}`: one held (or lapsed) run slot."""
BUSY_RETRY_AFTER_S = 5
"""What a 429 for runs in flight suggests: a short wait, runs are seconds long."""
LAPSED_KEPT_S = 3600
"""A lapsed slot's document is deleted this long after its end (a TTL index): a user who
stops sending runs leaves nothing behind."""


def _take_one(coll: ScopedCollection, prefix: str, limit: int, owner: str,
              fields: dict[str, Any]) -> Lease | None:
    """One of the `limit` slots named `prefix<k>`, as a renewed lease; None if all are held.
    The first slot tried is random, so concurrent takers rarely collide on the same one."""
    lease_s = get_settings().run_slot_lease_s
    first = random.randrange(limit)
    for k in (first + i for i in range(limit)):
        key = {"slot": f"{prefix}{k % limit}"}
        started = time.monotonic()
        if try_acquire(coll, key, owner, lease_s, fields):
            lease = Lease(coll, key, owner, lease_s, valid_until=started + lease_s,
                          what=f"run slot {key['slot']} of tenant {coll.tenant_id}")
            lease.start()
            return lease
    return None


class RunSlot:
    """One run's place among the runs in flight: a slot of its user and one of its tenant."""

    def __init__(self, leases: list[Lease]) -> None:
        self.leases = leases

    def release(self) -> None:
        """Give both slots back (stops their renewal, deletes them)."""
        for lease in self.leases:
            lease.release()


def take_slot(principal: Principal) -> RunSlot:
    """A slot for one more run of the caller, or TooManyRequests."""
    settings = get_settings()
    coll = TenantScope.of(principal)[RUN_SLOTS_COLLECTION]
    owner = uuid.uuid4().hex
    fields = {"user_id": principal.user_id, "taken_at": datetime.now(UTC)}
    user = _take_one(coll, f"user:{principal.user_id}:", settings.user_runs, owner, fields)
    if user is None:
        raise TooManyRequests(f"you have {settings.user_runs} runs in flight; wait for one to "
                              "finish", retry_after_s=BUSY_RETRY_AFTER_S, limit="runs")
    tenant = _take_one(coll, "tenant:", settings.tenant_runs, owner, fields)
    if tenant is None:
        user.release()
        raise TooManyRequests(f"tenant {principal.tenant_id!r} has {settings.tenant_runs} "
                              "runs in flight; try again shortly",
                              retry_after_s=BUSY_RETRY_AFTER_S, limit="runs")
    return RunSlot([user, tenant])


class RunSlots:
    """The run slots this process holds, by caller: `take` one before a run starts,
    `give_back` one when its event stream ends, whatever ends it. A caller's slots are
    alike, so giving back any of them frees one place."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: defaultdict[tuple[str, str], list[RunSlot]] = defaultdict(list)

    def take(self, principal: Principal) -> RunSlot:
        """Take a slot in the store for one more run of the caller, or TooManyRequests."""
        slot = take_slot(principal)
        with self._lock:
            self._held[(principal.tenant_id, principal.user_id)].append(slot)
        return slot

    def give_back(self, principal: Principal) -> None:
        """One run of the caller ended: release the oldest slot it holds here."""
        key = (principal.tenant_id, principal.user_id)
        with self._lock:
            held = self._held.get(key)
            slot = held.pop(0) if held else None
            if held is not None and not held:
                del self._held[key]
        if slot is not None:
            slot.release()


def ensure_indexes(db: Database[dict[str, Any]]) -> None:
    """The unique (tenant, slot) index makes every take a compare-and-set; lapsed slots are
    swept an hour after their end."""
    coll = db[RUN_SLOTS_COLLECTION]
    coll.create_index([("tenant_id", 1), ("slot", 1)], unique=True, name="tenant_slot")
    coll.create_index("until", expireAfterSeconds=LAPSED_KEPT_S, name="lapsed")
