"""The pending change: a write an agent proposed, waiting for a manager's decision.

One document per proposal in `pending_changes`, keyed by change id. Recording is
idempotent by (thread, task, attempt, fingerprint) because the runtime re-runs the code
before `interrupt()` on every resume: the same proposal recorded twice is the same change.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pymongo.errors import DuplicateKeyError

from opsgraph.audit import record_transition
from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.operations.base import Preview
from opsgraph.operations.invoke import new_change_id
from opsgraph.operations.records import to_json
from opsgraph.principal import Principal
from opsgraph.settings import get_settings
from opsgraph.store.scope import Document, TenantScope

COLLECTION = "pending_changes"
DEFAULT_TTL_S = 3600
_UPSERT_TRIES = 10

Status = Literal["pending", "executing", "applied", "failed", "rejected", "superseded", "expired"]
STATUSES: tuple[Status, ...] = (
    "pending", "executing", "applied", "failed", "rejected", "superseded", "expired",
)
FINAL: tuple[Status, ...] = ("applied", "failed", "rejected", "superseded", "expired")


class PendingChange(BaseModel):
    """One pending change as stored; decision fields fill in as the change moves."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    change_id: str = Field(alias="_id")
    tenant_id: str
    thread_id: str
    task_id: str
    attempt: int = 0
    agent: str
    operation: str
    args: dict[str, Any]
    old: dict[str, Any]
    new: dict[str, Any]
    summary: str
    status: Status
    created_at: datetime
    expires_at: datetime
    fingerprint: str
    proposed_by: str
    # decision fields
    decision: str | None = None
    decided_by: str | None = None
    decided_at: datetime | None = None
    feedback: str | None = None
    values: dict[str, Any] | None = None
    diff: dict[str, dict[str, Any]] | None = None
    # apply fields
    lease_until: datetime | None = None
    lease_token: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    takeovers: int = 0  # applies taken over after a crash (the lease ran out)
    finished_at: datetime | None = None
    expired_at: datetime | None = None
    # resume fields
    resume_lease_until: datetime | None = None
    resumed_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        """The change as API and CLI callers see it (datetimes ISO 8601, no lease tokens)."""
        body: dict[str, Any] = to_json(self.model_dump(exclude={"lease_token"}))
        return body

    def card(self) -> dict[str, Any]:
        """The card of the `approval_required` event (docs/reference.md)."""
        return {
            "change_id": self.change_id,
            "operation": self.operation,
            "summary": self.summary,
            "old": self.old,
            "new": self.new,
            "args": self.args,
            "task_id": self.task_id,
            "expires_at": to_json(self.expires_at),
        }


def utcnow(now: datetime | None = None) -> datetime:
    """`now` if given (tests pin the clock), else the current UTC time."""
    return now if now is not None else datetime.now(UTC)


def lease_seconds() -> float:
    """`OPSGRAPH_APPLY_LEASE_S`: how long an apply or resume claim holds (default 30 s)."""
    return get_settings().apply_lease_s


def lease_end(now: datetime) -> datetime:
    """The end of an apply or resume claim taken at `now`."""
    return now + timedelta(seconds=lease_seconds())


def canonical_json(value: Any) -> str:
    """Key-sorted compact JSON: equal arguments give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def fingerprint(operation: str, args: Mapping[str, Any]) -> str:
    """sha256 of the operation id and the canonical JSON of its arguments."""
    text = operation + "\n" + canonical_json(dict(args))
    return hashlib.sha256(text.encode()).hexdigest()


def json_args(args: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """Arguments as a JSON-able dict (a model: the fields that were set, as a tool does)."""
    if isinstance(args, BaseModel):
        return args.model_dump(mode="json", by_alias=True, exclude_unset=True)
    out: dict[str, Any] = json.loads(canonical_json(dict(args)))
    return out


def approval_ttl(scope: TenantScope) -> timedelta:
    """The tenant's `approval_ttl_s` (on its tenants document), default one hour."""
    tenant = scope.tenant() or {}
    ttl = tenant.get("approval_ttl_s", DEFAULT_TTL_S)
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or ttl <= 0:
        ttl = DEFAULT_TTL_S
    return timedelta(seconds=float(ttl))


def record_pending(scope: TenantScope, *, thread_id: str, task_id: str, agent: str,
                   operation: str, args: Mapping[str, Any] | BaseModel, preview: Preview,
                   proposed_by: Principal | str, attempt: int = 0,
                   now: datetime | None = None) -> PendingChange:
    """Record a proposal as a pending change; the same proposal again returns the same change.

    Idempotent by (thread_id, task_id, attempt, fingerprint). `attempt` counts the task's
    earlier proposals (0 first, 1 after a revise, ...) so that a revised proposal with the
    very same arguments is a new change rather than the superseded one.
    """
    at = utcnow(now)
    plain = json_args(args)
    fp = fingerprint(operation, plain)
    key = {"thread_id": thread_id, "task_id": task_id, "attempt": attempt, "fingerprint": fp}
    user = proposed_by.user_id if isinstance(proposed_by, Principal) else proposed_by
    doc: Document = {
        "_id": new_change_id(), **key, "agent": agent, "operation": operation, "args": plain,
        "old": preview.old, "new": preview.new, "summary": preview.summary,
        "status": "pending", "created_at": at, "expires_at": at + approval_ttl(scope),
        "proposed_by": user,
    }
    change = PendingChange.model_validate(_upsert_once(scope, key, doc))
    if change.change_id == doc["_id"]:
        record_transition(scope, change.change_id, None, "pending", user, thread_id,
                          detail={"agent": agent, "task_id": task_id},
                          operation=operation, now=at)
    return change


def _upsert_once(scope: TenantScope, key: Document, doc: Document) -> Document:
    """Insert `doc` under `key` unless a document holds the key; return the stored one.

    Two first recordings can race: the unique index lets one insert and the other gets a
    duplicate-key error, possibly before the winner's write is visible; retrying the
    upsert then finds the winner's document (what MongoDB advises for upserts).
    """
    coll = scope[COLLECTION]
    for attempt in range(_UPSERT_TRIES):
        try:
            stored = coll.find_one_and_update(key, {"$setOnInsert": doc}, upsert=True)
        except DuplicateKeyError:
            time.sleep(0.005 * (attempt + 1))
            continue
        if stored is not None:
            return stored
    raise Conflict(f"pending change of task {key['task_id']!r}: could not record it "
                   f"after {_UPSERT_TRIES} tries", task_id=key["task_id"])


def get_change(scope: TenantScope, change_id: str) -> PendingChange:
    """The change with this id in the scope's tenant; NotFound otherwise (never 403)."""
    doc = scope[COLLECTION].find_one({"_id": change_id})
    if doc is None:
        raise NotFound(f"change {change_id!r} not found", change_id=change_id)
    return PendingChange.model_validate(doc)


def list_changes(scope: TenantScope, status: Status | None = "pending", *,
                 thread_id: str | None = None, limit: int = 0) -> list[PendingChange]:
    """The tenant's changes with `status` (None: every status), oldest first."""
    flt: Document = {}
    if status is not None:
        if status not in STATUSES:
            raise BadInput(f"status: unknown status {status!r} (allowed: {', '.join(STATUSES)})")
        flt["status"] = status
    if thread_id is not None:
        flt["thread_id"] = thread_id
    docs = scope[COLLECTION].find(flt, sort=[("created_at", 1), ("_id", 1)], limit=limit)
    return [PendingChange.model_validate(d) for d in docs]
