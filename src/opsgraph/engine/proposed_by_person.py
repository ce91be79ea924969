"""A change a person proposed (a reply draft's send, `jobs.drafts`), not an agent's run.

No run waits for such a change, so nothing is resumed when it is decided; its thread's log
tells the story instead, as a run's would, so the requester and the deciders follow it the
same way: the proposal (`run_started`, `approval_required`, `run_finished
{awaiting_approval}`), then the outcome (`run_started`, `answer`, `run_finished`), written
by the one caller that wins the resume claim. Such a change is never orphaned: no run
was ever to resume.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from opsgraph.approvals import PendingChange, mark_resumed
from opsgraph.engine.events import Event
from opsgraph.engine.thread_log import EventIds, ThreadLog
from opsgraph.principal import Principal
from opsgraph.status_words import change_label, run_label
from opsgraph.store.people import display_name
from opsgraph.store.scope import TenantScope


def log_proposal(scope: TenantScope, requester: Principal, change: PendingChange,
                 request: str) -> list[Event]:
    """The proposal in the change's thread: the card raised, waiting for approval."""
    log = ThreadLog(scope, change.thread_id)
    ids = EventIds(log)
    log.open(ids.run_id, requester, request)
    return [ids.make("run_started", {"thread_id": change.thread_id, "run_id": ids.run_id,
                                     "message": request}),
            ids.make("approval_required", {"thread_id": change.thread_id,
                                           "changes": [change.card()]}),
            ids.make("run_finished", {"thread_id": change.thread_id,
                                      "status": "awaiting_approval",
                                      "status_label": run_label("awaiting_approval")})]


def outcome_text(scope: TenantScope, change: PendingChange) -> str:
    """What the decision came to, in a sentence with the decider's name."""
    who = display_name(scope, change.decided_by) if change.decided_by else None
    words = change_label(change.status)
    text = f"{words}{f' by {who}' if who else ''}: {change.summary}."
    if change.status == "failed" and change.error:
        text += f" {change.error.get('message', '')}"
    if change.feedback:
        text += f" Feedback: {change.feedback}"
    return text


def log_outcome(principal: Principal, scope: TenantScope,
                change: PendingChange) -> Iterator[Event]:
    """The decided change's outcome in its thread; the caller holds the resume claim
    (`claim_resume`), so it is written once."""
    log = ThreadLog(scope, change.thread_id)
    ids = EventIds(log)
    log.open(ids.run_id, principal, f"Decision on {change.summary}")
    outcome: dict[str, Any] = {"outcome": "applied" if change.status == "applied"
                               else change.status}
    yield ids.make("run_started", {"thread_id": change.thread_id, "run_id": ids.run_id,
                                   "resumed": [change.change_id]})
    yield ids.make("answer", {"text": outcome_text(scope, change), "sources": []})
    label = run_label("completed", [("completed", [{"change": outcome}])])
    yield ids.make("run_finished", {"thread_id": change.thread_id, "status": "completed",
                                    "status_label": label})
    mark_resumed(scope, change.change_id)
