"""Changes that wait for other changes (`waits_for`).

A change whose task depends on a task that proposed a change waits for that change: it is
raised with the others (its card says what it waits for), but deciding it before the
change it waits for applied is refused (409 `waiting_for_change`). When a change does not
apply — rejected, revised (superseded), expired, orphaned, failed or withdrawn — every
pending change waiting for it is `withdrawn`, and so on down the chain: a confirmation
never goes out for a booking that does not exist.
"""

from __future__ import annotations

from datetime import datetime

from opsgraph.approvals.pending import COLLECTION, PendingChange, get_change, utcnow
from opsgraph.audit import record_transition
from opsgraph.errors import Conflict
from opsgraph.store.scope import TenantScope

NOT_APPLIED_WORDS = {"rejected": "was rejected", "superseded": "was sent back for revision",
                     "expired": "expired before anyone decided",
                     "orphaned": "can no longer be decided",
                     "failed": "failed to apply", "withdrawn": "was withdrawn"}


class WaitingForChange(Conflict):
    """A change decided before the change it waits for applied."""

    code = "waiting_for_change"


def check_waits(scope: TenantScope, change: PendingChange) -> None:
    """Refuse a decision on `change` while a change it waits for has not applied."""
    for waited_id in change.waits_for:
        waited = get_change(scope, waited_id)
        if waited.status != "applied":
            raise WaitingForChange(
                f"change {change.change_id} ({change.summary}) waits for change "
                f"{waited_id} ({waited.summary}), which is {waited.status}: decide that one "
                "first", change_id=change.change_id, waits_for=waited_id,
                waits_for_status=waited.status)


def withdraw_change(scope: TenantScope, change: PendingChange, actor: str, reason: str,
                    now: datetime | None = None) -> bool:
    """CAS pending → withdrawn (it never applies); True when this call won. The changes
    waiting for it are withdrawn too."""
    at = utcnow(now)
    moved = scope[COLLECTION].find_one_and_update(
        {"_id": change.change_id, "status": "pending"},
        {"$set": {"status": "withdrawn", "withdrawn_at": at, "withdrawn_reason": reason,
                  "finished_at": at}})
    if moved is None:
        return False
    record_transition(scope, change.change_id, "pending", "withdrawn", actor, change.thread_id,
                      detail={"reason": reason}, operation=change.operation, now=at)
    withdraw_dependents(scope, change, actor, "withdrawn", at)
    return True


def withdraw_dependents(scope: TenantScope, change: PendingChange, actor: str, status: str,
                        now: datetime | None = None) -> list[str]:
    """Withdraw every pending change waiting for `change`, which ended `status` without
    applying; the ids withdrawn (this call's)."""
    why = NOT_APPLIED_WORDS.get(status, f"is {status}")
    reason = f"it waited for “{change.summary}” ({change.change_id}), which {why}"
    withdrawn = []
    for doc in scope[COLLECTION].find({"waits_for": change.change_id, "status": "pending"}):
        dependent = PendingChange.model_validate(doc)
        if withdraw_change(scope, dependent, actor, reason, now):
            withdrawn.append(dependent.change_id)
    return withdrawn


def withdraw_thread(scope: TenantScope, thread_id: str, actor: str, reason: str,
                    now: datetime | None = None) -> list[str]:
    """Withdraw every pending change of a thread (its run was cancelled); the ids."""
    withdrawn = []
    for doc in scope[COLLECTION].find({"thread_id": thread_id, "status": "pending"}):
        change = PendingChange.model_validate(doc)
        if withdraw_change(scope, change, actor, reason, now):
            withdrawn.append(change.change_id)
    return withdrawn
