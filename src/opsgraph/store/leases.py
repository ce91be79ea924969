"""Leases in the store: a document with an owner and an end (`until`), taken by
compare-and-set and renewed in the background while its holder lives.

A lease is taken by one `find_one_and_update` with upsert on a key that a unique index
covers: it matches a lapsed lease (or one this owner already holds) and makes it this
owner's; when another owner's lease is live, the upsert collides with it on the unique
index and the take fails. So however many processes try at once, one owner holds a key.
A holder renews every third of the lease's length; a holder that dies (SIGKILL, a Lambda
instance frozen for good) stops renewing, and its lease lapses `lease_s` later.

The thread lease (`engine.threads`: one run per thread) and the run slots
(`api.run_slots`: runs in flight per tenant and user) are both leases.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.errors import DuplicateKeyError, PyMongoError

from opsgraph.store.scope import ScopedCollection

log = logging.getLogger(__name__)


def try_acquire(coll: ScopedCollection, key: Mapping[str, Any], owner: str, lease_s: float,
                fields: Mapping[str, Any] | None = None) -> bool:
    """Take (or renew) the lease at `key` for `owner` for `lease_s` seconds; False when
    another owner holds it. `fields` are stored beside it (who holds it, since when)."""
    now = datetime.now(UTC)
    try:
        got = coll.find_one_and_update(
            {**key, "$or": [{"until": {"$lt": now}}, {"owner": owner}]},
            {"$set": {**(fields or {}), "owner": owner,
                      "until": now + timedelta(seconds=lease_s)}},
            upsert=True)
    except DuplicateKeyError:  # somebody else holds a live lease
        return False
    return got is not None


class Lease:
    """A held lease, renewed in the background until released or lost."""

    def __init__(self, coll: ScopedCollection, key: Mapping[str, Any], owner: str,
                 lease_s: float, valid_until: float, what: str) -> None:
        self.coll = coll
        self.key = dict(key)
        self.owner = owner
        self.lease_s = lease_s
        self.what = what
        """What the lease holds, for log lines: `thread th-1`, `run slot user:sam:0`."""
        self._valid_until = valid_until
        """`time.monotonic()` past which the last successful renewal no longer holds."""
        self._lost: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew_until_stopped, daemon=True,
                                         name=f"lease-{what}")

    @property
    def lost(self) -> str | None:
        """Why the lease was lost, or None while it holds."""
        with self._lock:
            if self._lost is None and time.monotonic() > self._valid_until:
                self._lost = (f"its lease lapsed at {self.lease_s:g} s without a successful "
                              "renewal")
            return self._lost

    def _lose(self, why: str) -> None:
        with self._lock:
            if self._lost is None:
                self._lost = why
                log.warning("%s lost its lease: %s", self.what, why)

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            started = time.monotonic()
            try:
                renewed = try_acquire(self.coll, self.key, self.owner, self.lease_s)
            except PyMongoError as exc:  # the store did not answer: try again while it holds
                log.warning("renewing the lease of %s failed: %s", self.what, exc)
                if self.lost is not None:
                    return
                continue
            if not renewed:
                self._lose("another owner took the lease")
                return
            with self._lock:
                self._valid_until = started + self.lease_s

    def start(self) -> None:
        """Start renewing in the background."""
        self._renewer.start()

    def release(self) -> None:
        """Stop renewing and delete the lease, if it is still this owner's."""
        self._stop.set()
        if self._renewer.is_alive():
            self._renewer.join()
        with contextlib.suppress(PyMongoError):  # a lost lease is not ours to delete
            self.coll.delete_one({**self.key, "owner": self.owner})
