"""Deciding a pending change, and the one central `apply_change`.

    pending ──approve/edit──▶ executing ──▶ applied | failed
       ├──reject──▶ rejected
       ├──revise──▶ superseded
       ├──(late)──▶ expired
       └──(no run waits for it any more)──▶ orphaned
    executing ──(lease ran out)──▶ executing   (taken over by the next approve or edit)

Every move is a compare-and-set (`find_one_and_update` filtered on the expected status),
so of N concurrent decisions exactly one wins and the others get 409. The executing claim
carries a lease: an approve or edit re-posted after a crash takes over an expired lease and
applies the claimed arguments again, which is safe because operation handlers are
idempotent by change id; a reject or revise cannot undo a decision to apply (409).

A change is decided only while a run waits for it: one whose run can no longer resume is
`orphaned` and every decision on it answers 410 (code `orphaned`), nothing applied — the
requester's thread would never learn of it, and their request asked again must not write
twice. Only the engine can tell (its checkpoints), so it passes `run_gone` to `decide`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from opsgraph.approvals.dependents import check_waits, withdraw_dependents
from opsgraph.approvals.duties import check_own_change
from opsgraph.approvals.edits import Edit, operation_of, validate_edit
from opsgraph.approvals.expiry import expire_change
from opsgraph.approvals.pending import COLLECTION, PendingChange, get_change, lease_end, utcnow
from opsgraph.approvals.resume import Outcome, ResumeValue, claim_resume, mark_resumed
from opsgraph.audit import record_transition
from opsgraph.errors import BadInput, Conflict, Forbidden, Gone, OpsgraphError
from opsgraph.faults import crash_point
from opsgraph.operations.base import Context
from opsgraph.operations.invoke import check, validate_args
from opsgraph.principal import Principal
from opsgraph.store.scope import Document, TenantScope

__all__ = ["Decided", "Decision", "Orphaned", "Outcome", "ResumeValue", "apply_change",
           "claim_resume", "decide", "mark_resumed"]

Decision = Literal["approve", "edit", "revise", "reject"]
DECISIONS: tuple[str, ...] = get_args(Decision)
_APPLYING = ("approve", "edit")  # the decisions that move a change to executing
_OUTCOMES: dict[str, Outcome] = {
    "applied": "applied", "failed": "failed", "rejected": "rejected",
    "superseded": "revise", "expired": "expired",
}


RunGone = Callable[[PendingChange], bool]
"""True when no run can resume on a pending change any more; it marks the change orphaned."""


class Orphaned(Gone):
    """The change's run can no longer resume (it died or failed before it paused)."""

    code = "orphaned"


def orphaned_error(change: PendingChange) -> Orphaned:
    """The 410 of a decision on an orphaned change: what happened, and what to do."""
    return Orphaned(
        f"change {change.change_id} can no longer be decided: the run that proposed it "
        "stopped before it paused for approval (the server stopped or the run failed), so "
        "no run waits for it. Nothing was applied; ask again to get a new card.",
        change_id=change.change_id, thread_id=change.thread_id)


@dataclass(frozen=True, slots=True)
class Decided:
    """What a decision came to: the change after it, the outcome, result and feedback."""

    change: PendingChange
    outcome: Outcome
    result: dict[str, Any] | None
    feedback: str | None

    @classmethod
    def of(cls, change: PendingChange) -> Decided:
        """The outcome of a decided change (applied, failed, rejected, superseded, expired)."""
        if change.status not in _OUTCOMES:
            raise Conflict(f"change {change.change_id} is {change.status}: not decided yet",
                           change_id=change.change_id, status=change.status)
        return cls(change=change, outcome=_OUTCOMES[change.status], result=change.result,
                   feedback=change.feedback)

    @property
    def must_resume(self) -> bool:
        """True while the run waiting on this change has not been resumed: the caller
        takes `claim_resume`, resumes the run with `resume_value()`, then `mark_resumed`."""
        return self.change.resumed_at is None

    def resume_value(self, decided_by: str | None = None, decided_by_name: str | None = None,
                     edited: bool = False) -> ResumeValue:
        """What the paused run receives for this change when it resumes (`decided_by`:
        who decided, when the decider resumes it)."""
        error = self.change.error
        return ResumeValue(change_id=self.change.change_id, outcome=self.outcome,
                           result=self.result, feedback=self.feedback,
                           error=error.get("message") if error else None,
                           decided_by=decided_by, decided_by_name=decided_by_name,
                           edited=edited)


def decide(scope: TenantScope, change_id: str, decision: str, decider: Principal,
           feedback: str | None = None, values: Mapping[str, Any] | None = None,
           now: datetime | None = None, run_gone: RunGone | None = None) -> Decided:
    """Approve, edit, revise or reject a pending change, applying it when approved.

    403 unless the decider is a manager or admin of the tenant; 404 for a change not in
    the tenant; 409 when it is no longer pending; 410 when it expired; 422 for invalid
    edited values; 410 `orphaned` when `run_gone(change)` finds no run waiting for it. The
    caller then resumes the run: `claim_resume`, resume with `resume_value()`,
    `mark_resumed`. The same decision re-posted on a decided change whose
    run was never resumed (no live resume claim, and one lease after it settled, so
    concurrent losers still get 409) returns the existing outcome, so the caller can finish
    the job; a different decision is 409.
    """
    at = utcnow(now)
    if decision not in DECISIONS:
        raise BadInput(f"decision: unknown decision {decision!r} "
                       f"(allowed: {', '.join(DECISIONS)})")
    _check_decider(scope, decider)
    change = get_change(scope, change_id)
    if change.status != "pending":
        return _redecide(scope, change, decision, decider, at)
    if change.expires_at <= at:
        expire_change(scope, change, decider.user_id, at, detail={"by": "decision"})
        raise _gone(change)
    if run_gone is not None and run_gone(change):
        raise orphaned_error(change)
    check_own_change(scope, change, decider)  # 403 where the tenant separates duties
    check_waits(scope, change)  # 409 while a change it waits for has not applied
    if decision in ("reject", "revise"):
        return _close(scope, change, decision, decider, feedback, at)
    if decision == "approve":
        _check_authority(scope, change, decider, at)
    edit = validate_edit(scope, change, values or {}, decider, at) if decision == "edit" else None
    claimed = _claim_apply(scope, change, decision, decider, feedback, edit, at)
    return Decided.of(apply_change(scope, claimed, decider, now=at))


def apply_change(scope: TenantScope, change: PendingChange, decider: Principal,
                 now: datetime | None = None) -> PendingChange:
    """Apply a change this caller holds in `executing`: the operation's handler, then CAS.

    The handler is idempotent by change id. A business error (any OpsgraphError) settles
    the change as `failed` with the message; anything else propagates and leaves the
    change executing until its lease runs out and a later decision takes over.
    """
    at = utcnow(now)
    if change.status != "executing" or change.lease_token is None:
        raise Conflict(f"change {change.change_id} is {change.status}, not executing",
                       change_id=change.change_id, status=change.status)
    crash_point("after_cas")
    ctx = Context(scope=scope, principal=decider, now=at)
    try:
        op = operation_of(change)
        if op.apply is None:
            raise BadInput(f"operation: {op.id} is not a write operation")
        args = validate_args(op, change.args)
        result = op.apply(ctx, args, change.change_id)
        crash_point("after_apply")
    except OpsgraphError as exc:
        error = {"code": exc.code, "message": exc.message}
        return _settle(scope, change, "failed", {"error": error}, decider, at)
    return _settle(scope, change, "applied", {"result": dict(result)}, decider, at)


def _check_authority(scope: TenantScope, change: PendingChange, decider: Principal,
                     at: datetime) -> None:
    """Approving is acting: the decider's own gate and value limits (a refund over their
    limit) refuse before anything is claimed, and the change stays pending. A change that
    no longer applies (its record went away) is left to the apply, which settles it
    `failed` and says why."""
    try:
        check(operation_of(change), Context(scope, decider, at), change.args)
    except Forbidden:
        raise
    except OpsgraphError:
        return


def _check_decider(scope: TenantScope, decider: Principal) -> None:
    if decider.tenant_id != scope.tenant_id:
        raise Forbidden("you may only decide changes of your own tenant")
    if not decider.can_decide:
        raise Forbidden("only a manager or an admin may decide pending changes")
    if decider.read_only:
        raise Forbidden(f"channel {decider.channel.value} is read-only: it cannot decide")


def _gone(change: PendingChange) -> Gone:
    return Gone(f"change {change.change_id} expired at {change.expires_at.isoformat()}",
                change_id=change.change_id, thread_id=change.thread_id)


def _cas(scope: TenantScope, change_id: str, expected: Document, update: Document,
         ) -> PendingChange | None:
    doc = scope[COLLECTION].find_one_and_update({"_id": change_id, **expected}, update)
    return PendingChange.model_validate(doc) if doc is not None else None


def _lost(scope: TenantScope, change_id: str, now: datetime) -> OpsgraphError:
    """The error for a caller whose compare-and-set found the change moved on."""
    current = get_change(scope, change_id)
    if current.status == "orphaned":
        return orphaned_error(current)
    if current.status == "expired" or (current.status == "pending"
                                       and current.expires_at <= now):
        return _gone(current)
    return Conflict(f"change {change_id} is {current.status}, not pending",
                    change_id=change_id, status=current.status)


def _decision_fields(decision: str, decider: Principal, feedback: str | None,
                     now: datetime) -> Document:
    return {"decision": decision, "decided_by": decider.user_id, "decided_at": now,
            "feedback": feedback}


def _close(scope: TenantScope, change: PendingChange, decision: str, decider: Principal,
           feedback: str | None, now: datetime) -> Decided:
    """Reject or revise: pending → rejected | superseded."""
    to = "rejected" if decision == "reject" else "superseded"
    fields = {**_decision_fields(decision, decider, feedback, now), "status": to,
              "finished_at": now}
    closed = _cas(scope, change.change_id,
                  {"status": "pending", "expires_at": {"$gt": now}}, {"$set": fields})
    if closed is None:
        raise _lost(scope, change.change_id, now)
    record_transition(scope, change.change_id, "pending", to, decider.user_id,
                      change.thread_id, detail={"decision": decision, "feedback": feedback},
                      operation=change.operation, now=now)
    withdraw_dependents(scope, closed, decider.user_id, to, now)
    return Decided.of(closed)


def _claim_apply(scope: TenantScope, change: PendingChange, decision: str,
                 decider: Principal, feedback: str | None, edit: Edit | None,
                 now: datetime) -> PendingChange:
    """Approve or edit: CAS pending → executing under a fresh lease."""
    fields = {**_decision_fields(decision, decider, feedback, now), "status": "executing",
              "lease_until": lease_end(now), "lease_token": secrets.token_hex(8)}
    detail: Document = {"decision": decision}
    if edit is not None:
        # The card follows the edit: the approvals list and audit show the edited values.
        card = {"old": edit.preview.old, "new": edit.preview.new,
                "summary": edit.preview.summary}
        fields.update(args=edit.args, values=edit.values, diff=edit.diff, **card)
        detail.update(diff=edit.diff, **card)
    claimed = _cas(scope, change.change_id,
                   {"status": "pending", "expires_at": {"$gt": now}}, {"$set": fields})
    if claimed is None:
        raise _lost(scope, change.change_id, now)
    record_transition(scope, change.change_id, "pending", "executing", decider.user_id,
                      change.thread_id, detail=detail, operation=change.operation, now=now)
    return claimed


def _take_over(scope: TenantScope, change: PendingChange, decider: Principal,
               now: datetime) -> PendingChange:
    """executing with an expired lease → executing under this caller's lease."""
    taken = _cas(
        scope, change.change_id,
        {"status": "executing",
         "$or": [{"lease_until": None}, {"lease_until": {"$lte": now}}]},
        {"$set": {"lease_until": lease_end(now), "lease_token": secrets.token_hex(8)},
         "$inc": {"takeovers": 1}},
    )
    if taken is None:
        raise _lost(scope, change.change_id, now)
    record_transition(scope, change.change_id, "executing", "executing", decider.user_id,
                      change.thread_id, operation=change.operation, now=now,
                      detail={"takeover": True, "expired_lease": change.lease_until})
    return taken


def _redecide(scope: TenantScope, change: PendingChange, decision: str, decider: Principal,
              now: datetime) -> Decided:
    """A decision on a change that is no longer pending."""
    if change.status == "expired":
        raise _gone(change)
    if change.status == "orphaned":
        raise orphaned_error(change)
    if change.status == "executing":
        lease_live = change.lease_until is not None and change.lease_until > now
        if lease_live or decision not in _APPLYING:
            raise Conflict(f"change {change.change_id} is executing",
                           change_id=change.change_id, status=change.status)
        # The decision to apply was taken and its apply crashed: finish that decision.
        taken = _take_over(scope, change, decider, now)
        return Decided.of(apply_change(scope, taken, decider, now=now))
    if decision == change.decision and _resumable_by_repost(change, now):
        return Decided.of(change)
    raise Conflict(f"change {change.change_id} is {change.status}, not pending",
                   change_id=change.change_id, status=change.status)


def _resumable_by_repost(change: PendingChange, now: datetime) -> bool:
    """A decided change whose run nobody resumed: no resume claim is live, and the decider
    who settled it had one lease to claim the resume (concurrent losers get 409)."""
    if change.resumed_at is not None:
        return False
    if change.resume_lease_until is not None and change.resume_lease_until > now:
        return False
    settled = change.finished_at or change.decided_at
    return settled is None or lease_end(settled) <= now


def _settle(scope: TenantScope, change: PendingChange, to: str, fields: Document,
            decider: Principal, now: datetime) -> PendingChange:
    """executing → applied | failed, only for the holder of the apply lease."""
    settled = _cas(
        scope, change.change_id, {"status": "executing", "lease_token": change.lease_token},
        # finished_at is when it settled, not when the decision began: a slow apply must not
        # shorten the settling decider's window to resume the run (`now` may be injected)
        {"$set": {**fields, "status": to, "finished_at": max(now, utcnow())}},
    )
    if settled is None:
        raise Conflict(f"change {change.change_id}: the apply was taken over by another "
                       "decision", change_id=change.change_id)
    detail = {"error": fields["error"]} if "error" in fields else None
    record_transition(scope, change.change_id, "executing", to, decider.user_id,
                      change.thread_id, detail=detail, operation=change.operation, now=now)
    if to == "failed":
        withdraw_dependents(scope, settled, decider.user_id, to, now)
    return settled
