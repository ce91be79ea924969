"""One run at a time per thread: a lease in MongoDB taken by compare-and-set
(`store.leases`).

Two requests on the same thread (a new message while a decision resumes it, two decisions
on one thread) would race on its checkpoint; the second waits for the lease. The holder
renews the lease while its run goes on, so a long run keeps it, and a crashed holder's
lease lapses within `OPSGRAPH_THREAD_LEASE_S` (default 30 s).

A holder that cannot renew — another owner took the lease, or the store did not answer
until the lease's own end passed — has lost it: `ThreadLease.check()` (no I/O, at every
sub-task and model call) and `ThreadLease.confirm()` (reads the lease in the store, as each
node of the graph starts and before anything is written to the thread) raise `LeaseLost`,
and the run stops.
`LeasedSaver` wraps the checkpointer of one run so that no checkpoint is written after
the loss.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    copy_checkpoint,
)
from pymongo.database import Database
from pymongo.errors import PyMongoError

from opsgraph.errors import Conflict, RunAborted
from opsgraph.settings import get_settings
from opsgraph.store.leases import Lease, try_acquire
from opsgraph.store.scope import TenantScope

log = logging.getLogger(__name__)


class LeaseLost(RunAborted):
    """The run no longer holds its thread's lease: it stops before writing anything more."""

    code = "lease_lost"


ACQUIRED_FRESH_S = 0.05
"""How long after taking its lease a run's first step needs no read of it (the taking was
one: measured, the first step comes 10-20 ms after it; its read cost the plan event 2-5 ms)."""

LEASES = "thread_leases"
"""The collection of thread leases (one document per thread with a run going on)."""


def lease_seconds() -> float:
    """How long a lease lasts without renewal (`OPSGRAPH_THREAD_LEASE_S`)."""
    return get_settings().thread_lease_s


def _try_acquire(scope: TenantScope, thread_id: str, owner: str, lease_s: float) -> bool:
    return try_acquire(scope[LEASES], {"thread_id": thread_id}, owner, lease_s)


class ThreadLease(Lease):
    """A held lease on one thread, renewed in the background until released or lost."""

    def __init__(self, scope: TenantScope, thread_id: str, owner: str, lease_s: float,
                 valid_until: float) -> None:
        super().__init__(scope[LEASES], {"thread_id": thread_id}, owner, lease_s,
                         valid_until, what=f"run on thread {thread_id}")
        self.scope = scope
        self.thread_id = thread_id
        self._read_lock = threading.Lock()
        self._last_read: tuple[float, dict[str, Any] | None] | None = None
        """When the latest read of the lease began (`time.monotonic()`), and what it found."""
        self._taken_at: float | None = valid_until - lease_s
        """When the lease was taken, until the first read asks: within `ACQUIRED_FRESH_S`
        the taking is that read (held, and no one can have asked this run to stop yet: a
        stop names a run whose start its caller has seen)."""

    def check(self, where: str = "") -> None:
        """Raise `LeaseLost` if a renewal already found the lease gone (no I/O)."""
        why = self.lost
        if why is not None:
            at = f" at {where}" if where else ""
            raise LeaseLost(f"the run on thread {self.thread_id} stopped{at}: {why}; another "
                            "run may hold the thread now, so nothing more was written",
                            thread_id=self.thread_id)

    def confirm(self, where: str = "") -> bool:
        """`check`, then read the lease in the store: it must still name this owner. True
        when someone asked this run to stop (`engine.cancel` marks the holder's lease, so
        the same read tells)."""
        self.check(where)
        held = self._read(where)
        if held is None:
            self._lose("another owner holds the lease, or it lapsed")
        self.check(where)
        return bool((held or {}).get("cancel", {}).get("owner") == self.owner)

    def _read(self, where: str) -> dict[str, Any] | None:
        """The lease as the store holds it now (None: not this owner's, or lapsed). Callers
        at the same moment (a plan's sub-tasks all start together) share one read: a
        caller takes the answer of a read that began after it asked — as fresh as its own
        would be — and otherwise reads. The graph's first step, within `ACQUIRED_FRESH_S`
        of the lease's taking, takes the taking as its read."""
        asked = time.monotonic()
        with self._read_lock:
            taken, self._taken_at = self._taken_at, None
            if taken is not None and asked - taken <= ACQUIRED_FRESH_S:
                return {}
            if self._last_read is None or self._last_read[0] < asked:
                began = time.monotonic()
                try:
                    found = self.coll.find_one({**self.key, "owner": self.owner,
                                                "until": {"$gte": datetime.now(UTC)}},
                                               projection={"cancel": 1})
                except PyMongoError as exc:
                    raise LeaseLost(f"the run on thread {self.thread_id} stopped at "
                                    f"{where or 'a step'}: its lease could not be read "
                                    f"({type(exc).__name__})",
                                    thread_id=self.thread_id) from exc
                self._last_read = (began, found)
            return self._last_read[1]


@contextlib.contextmanager
def thread_lease(scope: TenantScope, thread_id: str,
                 wait_s: float = 60.0) -> Iterator[ThreadLease]:
    """Hold the thread for one run; waits up to `wait_s` for another run to finish."""
    owner = uuid.uuid4().hex
    lease_s = lease_seconds()
    deadline = time.monotonic() + wait_s
    while True:
        started = time.monotonic()
        if _try_acquire(scope, thread_id, owner, lease_s):
            break
        if started > deadline:
            raise Conflict(f"thread {thread_id} is busy with another run; try again shortly")
        time.sleep(0.05)
    lease = ThreadLease(scope, thread_id, owner, lease_s, valid_until=started + lease_s)
    lease.start()
    try:
        yield lease
    finally:
        lease.release()


class LeasedSaver(BaseCheckpointSaver[Any]):
    """A run's view of the checkpointer: every write first confirms the run's thread lease,
    so a run that lost it writes nothing to the thread. While the run holds the lease no
    one else writes the thread's checkpoint, so the latest checkpoint read (the run checks
    the thread before it starts the graph) serves the next read of it from memory, unless
    this run wrote in between: the graph's own first read costs no round trip. The first
    reader gets a copy and the next the checkpoint as read, once: the graph changes the
    checkpoint it is given in place."""

    def __init__(self, inner: BaseCheckpointSaver[Any], lease: ThreadLease) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.lease = lease
        self._latest: dict[tuple[str, str], CheckpointTuple | None] = {}

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config.get("configurable", {})
        if conf.get("checkpoint_id"):
            return self.inner.get_tuple(config)
        key = _checkpoint_key(conf.get("thread_id"), conf.get("checkpoint_ns", ""))
        if key in self._latest:
            return self._latest.pop(key)
        found = self._latest[key] = self.inner.get_tuple(config)
        return found._replace(checkpoint=copy_checkpoint(found.checkpoint)) if found else None

    def has_none(self, thread_id: str) -> None:
        """The graph's thread `thread_id` has no checkpoint (its id was just made): the
        graph's first read of it is answered from memory, with no round trip."""
        self._latest[_checkpoint_key(thread_id)] = None

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None,
             limit: int | None = None) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        self.lease.confirm("the checkpoint")
        self._latest.clear()
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        self.lease.confirm("the checkpoint")
        self._latest.clear()
        self.inner.put_writes(config, writes, task_id, task_path)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> LeasedSaver:
        """LangGraph's strict-msgpack allowlist goes to the saver that serializes."""
        inner = self.inner.with_allowlist(extra_allowlist)
        return self if inner is self.inner else LeasedSaver(inner, self.lease)


def ensure_indexes(db: Database[dict[str, Any]]) -> None:
    """A unique (tenant, thread) index makes the upsert above a true compare-and-set."""
    db[LEASES].create_index([("tenant_id", 1), ("thread_id", 1)], unique=True)


def _checkpoint_key(thread_id: object, namespace: object = "") -> tuple[str, str]:
    """What `LeasedSaver` keeps a thread's latest checkpoint under: its id and namespace (the
    graph's own top-level checkpoints have the empty one)."""
    return (str(thread_id), str(namespace))
