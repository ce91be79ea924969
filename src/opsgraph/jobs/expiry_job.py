"""The scheduled approvals job: pending changes past their expiry become `expired`, each
run waiting on one is resumed so it learns the change will never apply, and pending changes
no run waits for any more become `orphaned`.

Its report counts each of these, and the resumed runs that failed (each also logged with
its tenant, thread and change).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TypedDict

from opsgraph.approvals import ResumeValue, expire_due, unexpired_pending
from opsgraph.approvals.expiry import SWEEP_ACTOR, expired_unresumed
from opsgraph.approvals.pending import PendingChange
from opsgraph.engine.approval_flow import close_if_orphaned, notify_runs
from opsgraph.errors import Conflict
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.client import get_db
from opsgraph.store.scope import TenantScope
from opsgraph.telemetry import metrics

log = logging.getLogger(__name__)


class ExpiryReport(TypedDict):
    """What one run of the job did."""

    expired: int
    """pending changes this run expired"""
    orphaned: int
    """pending changes found with no run waiting for them (never to apply)"""
    resumed: int
    """changes whose waiting runs this run resumed (told that they expired)"""
    resume_failed: int
    """resumed runs that failed"""


def _system(tenant_id: str) -> Principal:
    return Principal(tenant_id, "system", frozenset({Role.ADMIN}), Channel.API)


def _cards_waiting(waiting: list[PendingChange]) -> None:
    """The metric points of the cards still waiting for a decision: how many, and how long
    the oldest has waited (the alarm on stuck cards reads it)."""
    oldest = min((c.created_at for c in waiting), default=None)
    age = (datetime.now(UTC) - oldest).total_seconds() if oldest is not None else 0.0
    metrics.emit({"CardsWaiting": (len(waiting), "Count"),
                  "OldestCardAgeSeconds": (round(age, 1), "Seconds")})


def expire_and_notify() -> ExpiryReport:
    """Expire what is due, resume every run still waiting on an expired change, orphan what
    no run waits for."""
    db = get_db()
    report = ExpiryReport(expired=expire_due(db), orphaned=0, resumed=0, resume_failed=0)
    for doc in expired_unresumed(db):
        system = _system(doc["tenant_id"])
        value = ResumeValue(change_id=doc["_id"], outcome="expired",
                            decided_by="the expiry job")
        try:
            failures = notify_runs(system, TenantScope.of(system), doc["_id"], value,
                                   wait_s=0)
        except Conflict:  # another caller resumes it, no run waits for it, or one is busy
            continue
        except Exception:  # one change's fault must not stop the job
            log.exception("expiry job: resuming the runs of change %s (tenant %s) failed",
                          doc["_id"], doc["tenant_id"])
            report["resume_failed"] += 1
            continue
        report["resumed"] += 1
        report["resume_failed"] += len(failures)
    waiting = unexpired_pending(db)
    _cards_waiting(waiting)
    for change in waiting:
        system = _system(change.tenant_id)
        try:
            # a run in flight on its thread may still pause on it: not now (wait_s=0)
            if close_if_orphaned(system, TenantScope.of(system), change, SWEEP_ACTOR,
                                 wait_s=0):
                report["orphaned"] += 1
        except Conflict:
            continue
        except Exception:
            log.exception("expiry job: checking change %s (tenant %s) for a waiting run "
                          "failed", change.change_id, change.tenant_id)
    return report
