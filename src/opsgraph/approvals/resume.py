"""Who resumes the paused run once a change is decided.

A decided change (applied, failed, rejected, superseded, expired) still has a run waiting
on it (an orphaned one has none: there is nothing to resume). Exactly one caller resumes
it: the claim is a compare-and-set with a lease (`resume_lease_until`), so a caller that
crashed before resuming is taken over once its lease runs out, and `resumed_at` closes the
matter for good.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict

from opsgraph.approvals.pending import COLLECTION, DECIDED, get_change, lease_end, utcnow
from opsgraph.errors import Conflict
from opsgraph.lazy_build import LazyModel
from opsgraph.store.scope import TenantScope

Outcome = Literal["applied", "failed", "rejected", "revise", "expired"]
"""How a change ended, as the run waiting on it is told (`superseded` is `revise`)."""


class ResumeValue(LazyModel):
    """The decision handed to the run paused on a change when it resumes, one for each
    way it comes: a decision (`Decided.resume_value`, with the decider), an expiry the
    decider met, the expiry job. It travels through the graph's checkpoint as plain data
    (`model_dump`), and the paused proposal reads it back (`ResumeValue.model_validate`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    change_id: str
    outcome: Outcome
    result: dict[str, Any] | None = None
    feedback: str | None = None
    error: str | None = None
    """What stopped a change that `failed` to apply."""
    decided_by: str | None = None
    decided_by_name: str | None = None
    edited: bool = False


def claim_resume(scope: TenantScope, change_id: str, now: datetime | None = None) -> bool:
    """True for the one caller that must resume the run (NotFound if no such change).

    A compare-and-set on a decided, never-resumed change whose resume lease is free or
    ran out; the winner holds the lease, resumes the run, then calls `mark_resumed`.
    """
    at = utcnow(now)
    won = scope[COLLECTION].find_one_and_update(
        {
            "_id": change_id,
            "status": {"$in": list(DECIDED)},
            "resumed_at": None,
            "$or": [{"resume_lease_until": None}, {"resume_lease_until": {"$lte": at}}],
        },
        {"$set": {"resume_lease_until": lease_end(at)}},
    )
    if won is not None:
        return True
    get_change(scope, change_id)  # NotFound for an unknown id, else the claim was lost
    return False


def mark_resumed(scope: TenantScope, change_id: str, now: datetime | None = None) -> None:
    """Record that the run waiting on this change was resumed; later decisions get 409."""
    at = utcnow(now)
    coll = scope[COLLECTION]
    done = coll.find_one_and_update(
        {"_id": change_id, "status": {"$in": list(DECIDED)}, "resumed_at": None},
        {"$set": {"resumed_at": at}},
    )
    if done is not None:
        return
    change = get_change(scope, change_id)
    if change.status not in DECIDED:
        raise Conflict(f"change {change_id} is {change.status}: nothing to resume yet",
                       change_id=change_id, status=change.status)
