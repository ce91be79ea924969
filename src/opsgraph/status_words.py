"""Statuses in people's words: one mapping for the API (`status_label`), the CLI and the
dashboard, so every face says the same thing, and says what happened.

A change's status is its outcome (`applied`, `rejected`, ...). A task's words come from its
status and what happened to its changes: a task whose change was rejected is "Rejected",
never "Done". A run's words come from its status and its tasks: a run that completed with
nothing it was asked for done is "Not done", one with some done "Partly done".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

CHANGE_WORDS: Final[dict[str, str]] = {
    "pending": "Waiting for a manager",
    "executing": "Being applied",
    "applied": "Applied",
    "failed": "Failed to apply",
    "rejected": "Rejected",
    "superseded": "Sent back for revision",
    "expired": "Expired",
    "orphaned": "Can no longer be decided",
    "withdrawn": "Withdrawn",
}
"""A change's status (`approvals.pending.STATUSES`) → words."""

OUTCOME_STATUS: Final[dict[str, str]] = {"revise": "superseded"}
"""A decision's outcome as a run hears it → the change status it is."""

TASK_WORDS: Final[dict[str, str]] = {
    "completed": "Done",
    "partial": "Partly done",
    "no_proposal": "Nothing proposed",
    "needs_input": "Asked which",
    "denied": "Not allowed",
    "failed": "Failed",
    "skipped": "Skipped",
    "withdrawn": "Withdrawn",
}
"""A task's status (`engine.state.TaskStatus`) → words, when no change says more."""

RUN_WORDS: Final[dict[str, str]] = {
    "running": "Running",
    "completed": "Completed",
    "completed_with_errors": "Partly done",
    "awaiting_approval": "Waiting for approval",
    "cancelled": "Stopped",
    "failed": "Failed",
}
"""A run's status (`run_finished`) → words, when its tasks say nothing worse."""

RECORD_WORDS: Final[dict[str, str]] = {
    "open": "Open",
    "overdue": "Overdue",
    "paid": "Paid",
    "partially_refunded": "Partly refunded",
    "refunded": "Refunded",
    "confirmed": "Confirmed",
    "cancelled": "Cancelled",
    "scheduled": "Scheduled",
    "active": "Active",
    "paused": "Paused",
    "queued": "Queued to send",
    "new": "New",
    "read": "Read",
    "answered": "Answered",
}
"""A record's `status` (an invoice's, a booking's, a member's, ...) → words, as a change's
card shows it."""

DRAFT_STATES: Final = ("draft", "awaiting_approval", "sent", "not_sent", "discarded")
"""A reply draft's states (`jobs.drafts`): here, where the CLI's `drafts list --status`
reads them without loading the drafts job."""
DRAFT_WORDS: Final[dict[str, str]] = {
    "draft": "Draft",
    "discarded": "Discarded",
    "sent": "Sent",
}
"""A reply draft's state (`jobs.drafts`) → words; a draft sent for approval has its
change's words ("Waiting for a manager", "Rejected", ...)."""

NOT_DONE: Final = "Not done"
PARTLY: Final = "Partly done"


def change_label(status: str) -> str:
    """A change's status in words."""
    return CHANGE_WORDS.get(status, status.replace("_", " ").capitalize())


def record_label(status: str) -> str:
    """A record's status in words (`partially_refunded` → "Partly refunded")."""
    return RECORD_WORDS.get(status, status.replace("_", " ").capitalize())


def _last_outcome(calls: Iterable[Mapping[str, Any]]) -> str | None:
    outcomes = [c["change"].get("outcome") for c in calls if isinstance(c.get("change"), dict)]
    return str(outcomes[-1]) if outcomes and outcomes[-1] else None


def task_label(status: str, calls: Iterable[Mapping[str, Any]] = ()) -> str:
    """A task's words: its last change's outcome when it proposed one, else its status."""
    outcome = _last_outcome(calls)
    if status == "completed" and outcome not in (None, "unknown"):
        return change_label(OUTCOME_STATUS.get(outcome, outcome))
    return TASK_WORDS.get(status, status.replace("_", " ").capitalize())


def task_done(status: str, calls: Iterable[Mapping[str, Any]] = ()) -> bool:
    """The task did what it was asked: a read that completed, or a change that applied."""
    outcome = _last_outcome(calls)
    return status == "completed" and outcome in (None, "applied")


def run_label(status: str, tasks: Iterable[tuple[str, list[dict[str, Any]]]] = ()) -> str:
    """A run's words from its status and its tasks' `(status, calls)`: a completed run with
    tasks that did not do their job is "Partly done", or "Not done" when none did."""
    if status != "completed":
        return RUN_WORDS.get(status, status.replace("_", " ").capitalize())
    done = [task_done(s, calls) for s, calls in tasks]
    if not done or all(done):
        return RUN_WORDS["completed"]
    return PARTLY if any(done) else NOT_DONE
