"""A manager's decision, end to end: decide (compare-and-set, central apply), then resume
every run waiting on the change from its checkpoint — exactly one caller resumes them.

Whether a run still waits is read here, from the checkpoints: a pending change that no run
waits for, and that no run in flight on its threads can still pause on, is orphaned
(`close_if_orphaned`), and a decision on it answers 410 with nothing applied. A change that
a retried request took over has several runs (`PendingChange.run_threads`): the newest
streams to the deciding client, the others are driven to their end. A resumed run that
fails is logged with its tenant, thread and change, and whoever resumed it hears of it: the
deciding client (an `error` event, or the 410's `run_errors`) or the expiry job's count.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from opsgraph.approvals import (
    Decided,
    Orphaned,
    PendingChange,
    ResumeValue,
    claim_resume,
    decide,
    get_change,
    mark_resumed,
    orphan_change,
)
from opsgraph.approvals.pending import utcnow
from opsgraph.engine.events import Event
from opsgraph.engine.proposed_by_person import log_outcome
from opsgraph.engine.runner import NotWaiting, stream_resume, thread_state
from opsgraph.engine.threads import thread_lease
from opsgraph.errors import Conflict, Gone, OpsgraphError, TooManyRequests
from opsgraph.faults import crash_point
from opsgraph.principal import Principal
from opsgraph.store.people import display_name
from opsgraph.store.scope import TenantScope
from opsgraph.telemetry import metrics

log = logging.getLogger(__name__)
_FINE = ("completed", "awaiting_approval")  # a resumed run's statuses that are no failure
_FOLLOW_RETRIES = 5


@dataclass(frozen=True, slots=True)
class ResumeFailure:
    """A resumed run that failed: where, and the errors it reported."""

    tenant_id: str
    thread_id: str
    change_id: str
    errors: tuple[dict[str, Any], ...]

    def for_client(self) -> dict[str, Any]:
        """The failure as the deciding client sees it (an internal fault's text stays in
        the log, which has it under the change id)."""
        messages = [e.get("message", "") if e.get("code") != "internal"
                    else f"internal error (the server log has it under {self.change_id})"
                    for e in self.errors]
        return {"code": "resume_failed", "thread_id": self.thread_id,
                "change_id": self.change_id,
                "message": f"the run on thread {self.thread_id} resumed after change "
                           f"{self.change_id} failed: " + "; ".join(messages)}


def _waits_on(principal: Principal, thread_id: str, change_id: str) -> bool:
    interrupts, _ = thread_state(principal, thread_id)
    return any(isinstance(i.value, dict) and i.value.get("change_id") == change_id
               for i in interrupts)


def waiting_threads(principal: Principal, change: PendingChange) -> list[str]:
    """The threads paused on this change, newest run first."""
    return [t for t in change.run_threads() if _waits_on(principal, t, change.change_id)]


@contextlib.contextmanager
def _quiet(scope: TenantScope, threads: list[str], wait_s: float) -> Iterator[None]:
    """Hold the leases of `threads` (in one order, so two holders cannot deadlock): no run
    is in flight on them meanwhile. A run in flight is waited for, up to `wait_s`."""
    with contextlib.ExitStack() as held:
        for thread_id in sorted(threads):
            held.enter_context(thread_lease(scope, thread_id, wait_s=wait_s))
        yield


def close_if_orphaned(principal: Principal, scope: TenantScope, change: PendingChange,
                      actor: str, wait_s: float = 60.0) -> bool:
    """True when no run waits for the pending change nor can still pause on it; the change
    is then `orphaned` (by this call or another).

    Checked again under the leases of its threads: a run in flight there is waited for (up
    to `wait_s`, then Conflict), and no run can start pausing on it while it is marked. A
    retried request that takes the change meanwhile is followed to its run.
    """
    if change.origin != "run":
        return False  # a person proposed it: no run was ever to resume
    for _ in range(_FOLLOW_RETRIES):
        if waiting_threads(principal, change):
            return False
        with _quiet(scope, change.run_threads(), wait_s):
            current = get_change(scope, change.change_id)
            if current.status != "pending":
                return current.status == "orphaned"
            if current.run_threads() != change.run_threads():
                change = current  # a retried request took it: look at its run
                continue
            if waiting_threads(principal, current):
                return False
            orphan_change(scope, current, actor, utcnow(),
                          detail={"threads": current.run_threads()})
        return get_change(scope, change.change_id).status == "orphaned"
    return False  # retried again and again: runs are asking for it


def _watched(events: Iterator[Event], scope: TenantScope, change_id: str,
             thread_id: str, failures: list[ResumeFailure]) -> Iterator[Event]:
    """Pass a resumed run's events on; a run that fails is logged and added to
    `failures` (an exception it raises is logged and propagates)."""
    errors: list[dict[str, Any]] = []
    try:
        for event in events:
            if event.event == "error" and event.data.get("code") != "resume_failed":
                errors.append(dict(event.data))  # its own (other runs' come before_finish)
            if event.event == "run_finished" and (
                    errors or event.data.get("status") not in _FINE):
                failure = ResumeFailure(scope.tenant_id, thread_id, change_id, tuple(errors))
                log.warning("resumed run failed: tenant %s, thread %s, change %s, status %s: "
                            "%s", scope.tenant_id, thread_id, change_id,
                            event.data.get("status"), errors)
                failures.append(failure)

                metrics.count("ResumeFailed", thread_id=thread_id, change_id=change_id)
            yield event
    except NotWaiting:
        raise
    except Exception:
        log.exception("resumed run raised: tenant %s, thread %s, change %s",
                      scope.tenant_id, thread_id, change_id)
        raise


def _drain(principal: Principal, scope: TenantScope, change_id: str, thread_id: str,
           value: ResumeValue, model: str | None) -> list[ResumeFailure]:
    """Drive one waiting run to its end; its failure, if it failed."""
    failures: list[ResumeFailure] = []
    try:
        for _ in _watched(stream_resume(principal, thread_id, {change_id: value}, model=model),
                          scope, change_id, thread_id, failures):
            pass
    except NotWaiting:
        return []  # it moved on meanwhile: nothing waits there
    except OpsgraphError as exc:
        return [ResumeFailure(scope.tenant_id, thread_id, change_id,
                              ({"code": exc.code, "message": exc.message},))]
    except Exception as exc:  # logged in full by _watched; counted here
        return [ResumeFailure(scope.tenant_id, thread_id, change_id,
                              ({"code": "internal", "message": str(exc)},))]
    return failures


def _claim(principal: Principal, scope: TenantScope, change_id: str,
           wait_s: float = 60.0) -> list[str]:
    """Take the resume claim; the threads waiting on the change, newest first (a run in
    flight on one of its threads is waited for, up to `wait_s`)."""
    if not claim_resume(scope, change_id):
        raise already_decided(scope, get_change(scope, change_id))
    change = get_change(scope, change_id)
    threads = waiting_threads(principal, change)
    if not threads:  # a retried request's run, still in flight, is about to pause on it
        with _quiet(scope, change.run_threads(), wait_s):
            threads = waiting_threads(principal, change)
    if not threads:
        mark_resumed(scope, change_id)
        raise NotWaiting(f"no run waits for change {change_id} any more: it was resumed "
                         "already", change_id=change_id)
    return threads


def resume_change(principal: Principal, scope: TenantScope, change_id: str,
                  value: ResumeValue, model: str | None = None) -> Iterator[Event]:
    """Resume every run waiting on a decided change, if this caller wins the resume claim.

    The newest run's events stream; the other runs are driven to their end before its
    `run_finished`, each that fails an `error` event (code `resume_failed`) there.
    """
    first, *others = _claim(principal, scope, change_id)
    failures: list[ResumeFailure] = []

    def the_others() -> Iterator[tuple[str, dict[str, Any]]]:
        for thread_id in others:
            for failure in _drain(principal, scope, change_id, thread_id, value, model):
                yield "error", failure.for_client()
        mark_resumed(scope, change_id)

    resumed = stream_resume(principal, first, {change_id: value}, model=model,
                            before_finish=the_others)
    yield from _watched(resumed, scope, change_id, first, failures)


def already_decided(scope: TenantScope, change: PendingChange) -> Conflict:
    """The 409 for a change someone decided first: who, and what it came to."""
    who = display_name(scope, change.decided_by) if change.decided_by else "someone else"
    return Conflict(f"change {change.change_id} was already decided by {who} "
                    f"({change.decision or 'decided'}; now {change.status})",
                    change_id=change.change_id, status=change.status,
                    decided_by=change.decided_by)


def notify_runs(principal: Principal, scope: TenantScope, change_id: str,
                value: ResumeValue, wait_s: float = 60.0) -> list[ResumeFailure]:
    """Resume every run waiting on a decided change with no one to stream to (an expired
    change's runs learn it); the runs that failed. Conflict if another caller resumes them
    (or, after `wait_s`, a run is still in flight on one of its threads)."""
    threads = _claim(principal, scope, change_id, wait_s)
    failures = [f for t in threads for f in _drain(principal, scope, change_id, t, value, None)]
    mark_resumed(scope, change_id)
    return failures


def _deferred(decided: Decided, refused: TooManyRequests) -> TooManyRequests:
    """The 429 of a decision taken whose run may not resume today: what was done, and how
    the run resumes (the same decision posted again once the budget allows)."""
    change = decided.change
    return TooManyRequests(
        f"change {change.change_id} is {change.status}: the decision is taken and kept, "
        f"but the run waiting on it needs model calls to go on, and {refused.message}; "
        "post the same decision again after Retry-After to resume it",
        retry_after_s=refused.retry_after_s, change_id=change.change_id,
        status=change.status, resumed=False)


def decide_and_resume(principal: Principal, change_id: str, decision: str, *,
                      feedback: str | None = None, values: dict[str, Any] | None = None,
                      model: str | None = None,
                      check_budget: Callable[[], None] | None = None) -> Iterator[Event]:
    """Decide `change_id` and stream the resumed run.

    Errors come before the first event (404, 403, 409, 410, 422). An expired change never
    applies: its runs are told it expired, then the caller gets 410 (with `run_errors` when
    telling a run failed). An orphaned change is 410 `orphaned`, nothing applied.

    `check_budget` (TooManyRequests when the tenant's model calls for the day are spent)
    guards the model work a decision starts. A `revise` is a request for that work, so it
    is refused before anything changes. Approve, edit and reject are the manager's word
    and are never lost: the change is applied (or rejected) all the same, and only the
    resumed run is held back, with a 429 saying so; the same decision posted again later
    resumes it (`decide` answers a re-posted decision with its outcome).
    """
    scope = TenantScope.of(principal)
    if check_budget is not None and decision == "revise":
        check_budget()

    def run_gone(change: PendingChange) -> bool:
        return close_if_orphaned(principal, scope, change, principal.user_id)

    try:
        decided = decide(scope, change_id, decision, principal, feedback=feedback,
                         values=values, run_gone=run_gone)
    except Orphaned:
        raise
    except Conflict as conflict:
        change = get_change(scope, change_id)
        if change.decided_by is None:
            raise
        raise already_decided(scope, change) from conflict
    except Gone as gone:
        value = ResumeValue(change_id=change_id, outcome="expired",
                            decided_by=principal.user_id)
        try:
            failures = notify_runs(principal, scope, change_id, value)
        except Conflict:  # someone else tells the runs, or none waits
            raise gone from None
        if failures:
            raise Gone(gone.message, **gone.detail,
                       run_errors=[f.for_client() for f in failures]) from gone
        raise
    value = decided.resume_value(decided_by=principal.user_id,
                                 decided_by_name=display_name(scope, principal.user_id),
                                 edited=decision == "edit")
    crash_point("after_settle")
    if decided.change.origin != "run":  # no run waits: its thread's log hears the outcome
        if not claim_resume(scope, change_id):
            raise already_decided(scope, get_change(scope, change_id))
        yield from log_outcome(principal, scope, decided.change)
        return
    if check_budget is not None:
        try:
            check_budget()
        except TooManyRequests as refused:
            raise _deferred(decided, refused) from None
    yield from resume_change(principal, scope, change_id, value, model)
