"""Human approval, the store half: pending changes, decisions, apply, expiry, audit.

An agent's write records a pending change (`record_pending`) and the run pauses; a
manager decides it (`decide`), which moves the change by compare-and-set and, when
approved, applies it once through `apply_change`; whoever wins the resume claim resumes
the run and calls `mark_resumed`. A change no run waits for any more is orphaned
(`orphan_change`) and never applies. Every transition lands in the audit trail.
"""

from opsgraph.approvals.decisions import (
    Decided,
    Decision,
    Orphaned,
    Outcome,
    RunGone,
    apply_change,
    decide,
)
from opsgraph.approvals.expiry import expire_due, orphan_change, unexpired_pending
from opsgraph.approvals.indexes import ensure_indexes
from opsgraph.approvals.pending import (
    DECIDED,
    FINAL,
    STATUSES,
    PendingChange,
    ProposingRun,
    Status,
    fingerprint,
    get_change,
    list_changes,
    record_pending,
)
from opsgraph.approvals.resume import ResumeValue, claim_resume, mark_resumed
from opsgraph.audit import history, record_transition

__all__ = [
    "DECIDED",
    "FINAL",
    "STATUSES",
    "Decided",
    "Decision",
    "Orphaned",
    "Outcome",
    "PendingChange",
    "ProposingRun",
    "ResumeValue",
    "RunGone",
    "Status",
    "apply_change",
    "claim_resume",
    "decide",
    "ensure_indexes",
    "expire_due",
    "fingerprint",
    "get_change",
    "history",
    "list_changes",
    "mark_resumed",
    "orphan_change",
    "record_pending",
    "record_transition",
    "unexpired_pending",
]
