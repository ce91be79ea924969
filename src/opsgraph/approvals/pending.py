"""The pending change: a write an agent proposed, waiting for a manager's decision.

One document per proposal in `pending_changes`, keyed by change id. Recording is
idempotent by (thread, task, attempt, fingerprint) because the runtime re-runs the code
before `interrupt()` on every resume: the same proposal recorded twice is the same change.

A retried request does not make a second card: a proposal equal to a change still pending
for the same requester (same operation and arguments, fingerprint) on another thread is
that change. It moves to the newest run (`thread_id`, `task_id`, `attempt`), the runs that
proposed it before are kept in `earlier_runs`, and a decision resumes every run still
waiting on it. A change whose run can no longer resume (the process died or the run
failed before it paused) is `orphaned` (`approvals.expiry`): it never applies, and the
same request asked again in its thread takes it back.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field
from pymongo.errors import DuplicateKeyError

from opsgraph.approvals.fields import change_fields
from opsgraph.audit import record_transition
from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.lazy_build import LazyModel
from opsgraph.operations.base import Preview
from opsgraph.operations.currency import DEFAULT_CURRENCY, currency_code
from opsgraph.operations.invoke import new_change_id
from opsgraph.operations.records import to_json
from opsgraph.principal import Principal
from opsgraph.settings import get_settings
from opsgraph.status_words import change_label
from opsgraph.store.people import display_name
from opsgraph.store.scope import Document, TenantScope

COLLECTION = "pending_changes"
DEFAULT_TTL_S = 3600
_UPSERT_TRIES = 10

Status = Literal["pending", "executing", "applied", "failed", "rejected", "superseded", "expired",
                 "orphaned", "withdrawn"]
STATUSES: tuple[Status, ...] = (
    "pending", "executing", "applied", "failed", "rejected", "superseded", "expired",
    "orphaned", "withdrawn",
)
DECIDED: tuple[Status, ...] = ("applied", "failed", "rejected", "superseded", "expired")
"""The final statuses a waiting run must be told about (it is resumed with the outcome)."""
FINAL: tuple[Status, ...] = (*DECIDED, "orphaned", "withdrawn")
"""Every status a change never leaves (an orphaned change has no run left to tell; a
withdrawn one's run was cancelled, or learns it from the change it waited for)."""


class ProposingRun(LazyModel):
    """One run that proposed a change: its thread, task and the task's attempt. (Built on
    first use, as `PendingChange` is: a request that proposes no change reads none.)"""

    model_config = ConfigDict(extra="ignore", frozen=True)

    thread_id: str
    task_id: str
    attempt: int = 0


class PendingChange(LazyModel):
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
    proposed_by_name: str | None = None
    request: str = Field("", description="The message that produced the change.")
    """The message of the run that proposed it (set as the run pauses on it)."""
    origin: Literal["run", "draft"] = "run"
    """`run`: an agent's run proposed it and waits for it. `draft`: a person sent a reply
    draft (`jobs.drafts`); no run waits for it, and its decision ends on its own thread."""
    currency: str = DEFAULT_CURRENCY
    """The tenant's currency when it was proposed: how its card writes amounts."""
    waits_for: tuple[str, ...] = ()
    """The changes this one depends on (its task depends on the tasks that proposed them):
    it is decidable once they applied, and withdrawn when one of them does not apply."""
    withdrawn_at: datetime | None = None
    withdrawn_reason: str | None = None
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
    # a retried request's earlier runs of the same proposal, oldest first
    earlier_runs: tuple[ProposingRun, ...] = ()
    orphaned_at: datetime | None = None

    def run_threads(self) -> list[str]:
        """The threads of the runs that proposed this change, newest first (no repeats)."""
        threads = [self.thread_id, *(r.thread_id for r in reversed(self.earlier_runs))]
        return list(dict.fromkeys(threads))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status_label(self) -> str:
        """The status in people's words."""
        return change_label(self.status)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def requested_by(self) -> dict[str, str]:
        """`{user_id, name}` of whoever asked for the change."""
        return {"user_id": self.proposed_by, "name": self.proposed_by_name or self.proposed_by}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fields(self) -> list[dict[str, Any]]:
        """Its fields in words, old → new (`approvals.fields`)."""
        return change_fields(self.old, self.new, self.currency)

    def to_json(self) -> dict[str, Any]:
        """The change as API and CLI callers see it (datetimes ISO 8601, no lease tokens):
        every field, the computed ones (the card's) last."""
        body: dict[str, Any] = to_json(self.model_dump(exclude={"lease_token"}))
        return body

    def card(self) -> dict[str, Any]:
        """The card of the `approval_required` event and the lists (docs/reference.md)."""
        body: dict[str, Any] = to_json({name: getattr(self, name) for name in CARD})
        return body


CARD: Final = ("change_id", "operation", "summary", "old", "new", "args", "task_id",
               "thread_id", "status", "status_label", "requested_by", "request", "waits_for",
               "origin", "fields", "created_at", "expires_at")
"""The fields of a change's card, in its order (`PendingChange.card`)."""


def note_request(scope: TenantScope, change_ids: list[str], request: str) -> None:
    """Record the message that produced these changes, where none is recorded yet."""
    if change_ids and request:
        scope[COLLECTION].update_many({"_id": {"$in": change_ids}, "request": {"$in": ["", None]}},
                                      {"$set": {"request": request}})


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


def approval_ttl(tenant: Mapping[str, Any]) -> timedelta:
    """The tenant's `approval_ttl_s` (on its tenants document), default one hour."""
    ttl = tenant.get("approval_ttl_s", DEFAULT_TTL_S)
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or ttl <= 0:
        ttl = DEFAULT_TTL_S
    return timedelta(seconds=float(ttl))


def record_pending(scope: TenantScope, *, thread_id: str, task_id: str, agent: str,
                   operation: str, args: Mapping[str, Any] | BaseModel, preview: Preview,
                   proposed_by: Principal | str, attempt: int = 0,
                   now: datetime | None = None,
                   waits_for: tuple[str, ...] = (),
                   origin: Literal["run", "draft"] = "run") -> PendingChange:
    """Record a proposal as a pending change; the same proposal again returns the same change.

    Idempotent by (thread_id, task_id, attempt, fingerprint). `attempt` counts the task's
    earlier proposals (0 first, 1 after a revise, ...) so that a revised proposal with the
    very same arguments is a new change rather than the superseded one. A proposal equal to
    a change still pending for the same requester on another thread (a retried request) is
    that change, moved to this run; an orphaned change proposed again by its run's key is
    pending again. `waits_for`: the changes it depends on (recorded with its first recording).
    `origin`: `draft` for a reply draft's send, which no run waits for.
    """
    at = utcnow(now)
    tenant = scope.tenant() or {}
    plain = json_args(args)
    fp = fingerprint(operation, plain)
    run = ProposingRun(thread_id=thread_id, task_id=task_id, attempt=attempt)
    key = {**run.model_dump(), "fingerprint": fp}
    user = proposed_by.user_id if isinstance(proposed_by, Principal) else proposed_by
    doc: Document = {
        "_id": new_change_id(), **key, "agent": agent, "operation": operation, "args": plain,
        "old": preview.old, "new": preview.new, "summary": preview.summary,
        "status": "pending", "created_at": at, "expires_at": at + approval_ttl(tenant),
        "proposed_by": user, "proposed_by_name": display_name(scope, user),
        "waits_for": list(waits_for), "origin": origin, "currency": currency_code(tenant),
    }
    for attempt_no in range(_UPSERT_TRIES):
        own = _proposed_by_run(scope, run, fp)
        if own is not None and own.status != "orphaned":
            return own  # recorded before: a replay on resume, or a concurrent recording
        found = own or _same_request(scope, user, fp, run, at)
        if found is not None:
            taken = _take_for_run(scope, found, run, doc, at)
            if taken is not None:
                return taken
        else:
            stored = _insert_once(scope, key, doc)
            if stored is not None:
                change = PendingChange.model_validate(stored)
                if change.change_id == doc["_id"]:
                    record_transition(scope, change.change_id, None, "pending", user,
                                      thread_id, detail={"agent": agent, "task_id": task_id},
                                      operation=operation, now=at)
                return change
        time.sleep(0.005 * (attempt_no + 1))  # a concurrent recording moved it: look again
    raise Conflict(f"pending change of task {task_id!r}: could not record it "
                   f"after {_UPSERT_TRIES} tries", task_id=task_id)


def _proposed_by_run(scope: TenantScope, run: ProposingRun, fp: str) -> PendingChange | None:
    """The change this very run proposed before (under its key, or moved on by a retry)."""
    coll = scope[COLLECTION]
    doc = coll.find_one({**run.model_dump(), "fingerprint": fp}) or coll.find_one(
        {"fingerprint": fp, "earlier_runs": {"$elemMatch": run.model_dump()}})
    return PendingChange.model_validate(doc) if doc is not None else None


def _same_request(scope: TenantScope, user: str, fp: str, run: ProposingRun,
                  now: datetime) -> PendingChange | None:
    """A change still pending for the same requester, operation and arguments, proposed on
    another thread: the request was asked again (two tasks of one run stay two changes)."""
    doc = scope[COLLECTION].find_one(
        {"fingerprint": fp, "proposed_by": user, "status": "pending",
         "expires_at": {"$gt": now}, "thread_id": {"$ne": run.thread_id},
         "earlier_runs.thread_id": {"$ne": run.thread_id}},
        sort=[("created_at", 1), ("_id", 1)])
    return PendingChange.model_validate(doc) if doc is not None else None


def _take_for_run(scope: TenantScope, change: PendingChange, run: ProposingRun,
                  doc: Document, now: datetime) -> PendingChange | None:
    """Move a pending (retried) or orphaned change to `run`: the card it waits on, with this
    run's preview and a fresh expiry. None when the change moved on meanwhile."""
    current = ProposingRun(thread_id=change.thread_id, task_id=change.task_id,
                           attempt=change.attempt)
    earlier = [r for r in change.earlier_runs if r != run]
    if current != run:
        earlier.append(current)
    fields = {**run.model_dump(), "agent": doc["agent"], "old": doc["old"], "new": doc["new"],
              "summary": doc["summary"], "expires_at": doc["expires_at"], "status": "pending",
              "earlier_runs": [r.model_dump() for r in earlier], "orphaned_at": None,
              "finished_at": None}
    try:
        moved = scope[COLLECTION].find_one_and_update(
            {"_id": change.change_id, "status": change.status, **current.model_dump()},
            {"$set": fields})
    except DuplicateKeyError:  # another change holds this run's key: look again
        return None
    if moved is None:
        return None
    record_transition(scope, change.change_id, change.status, "pending", doc["proposed_by"],
                      run.thread_id, operation=change.operation, now=now,
                      detail={"asked_again": True, "task_id": run.task_id,
                              "from_thread": current.thread_id})
    return PendingChange.model_validate(moved)


def _insert_once(scope: TenantScope, key: Document, doc: Document) -> Document | None:
    """Insert `doc` under `key` unless a document holds the key; the stored one, or None
    when a concurrent first recording won the race and is not visible yet.

    Two first recordings can race: the unique index lets one insert and the other gets a
    duplicate-key error, possibly before the winner's write is visible; the caller then
    looks again and finds the winner's document (what MongoDB advises for upserts).
    """
    try:
        return scope[COLLECTION].find_one_and_update(key, {"$setOnInsert": doc}, upsert=True)
    except DuplicateKeyError:
        return None


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
