"""A manager's decision, end to end: decide (compare-and-set, central apply), then resume
the paused run from its checkpoint — exactly one caller resumes it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from opsgraph.engine.events import Event
from opsgraph.engine.runner import NotWaiting, stream_resume
from opsgraph.errors import Conflict, Gone
from opsgraph.faults import crash_point
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope


def resume_change(principal: Principal, scope: TenantScope, change_id: str, thread_id: str,
                  value: dict[str, Any], model: str | None = None) -> Iterator[Event]:
    """Resume the run waiting on a decided change, if this caller wins the resume claim."""
    from opsgraph.approvals.resume import claim_resume, mark_resumed

    if not claim_resume(scope, change_id):
        raise Conflict(f"change {change_id} is already decided and its run resumed "
                       "(or being resumed)", change_id=change_id)
    try:
        yield from stream_resume(principal, thread_id, {change_id: value}, model=model)
    except NotWaiting:
        mark_resumed(scope, change_id)  # the run already moved past this change
        raise
    mark_resumed(scope, change_id)


def decide_and_resume(principal: Principal, change_id: str, decision: str, *,
                      feedback: str | None = None, values: dict[str, Any] | None = None,
                      model: str | None = None) -> Iterator[Event]:
    """Decide `change_id` and stream the resumed run.

    Errors come before the first event (404, 403, 409, 410, 422). An expired change never
    applies: the run is told it expired, then the caller gets 410.
    """
    from opsgraph.approvals.decisions import decide
    from opsgraph.approvals.pending import get_change

    scope = TenantScope.of(principal)
    try:
        decided = decide(scope, change_id, decision, principal, feedback=feedback, values=values)
    except Gone:
        change = get_change(scope, change_id)
        value: dict[str, Any] = {"change_id": change_id, "outcome": "expired",
                                 "decided_by": principal.user_id}
        with contextlib.suppress(Conflict):  # someone else already told the run
            for _ in resume_change(principal, scope, change_id, change.thread_id, value, model):
                pass  # the run learns it expired; its events are not this caller's answer
        raise
    value = {**decided.resume_value(), "decided_by": principal.user_id,
             "edited": decision == "edit"}
    crash_point("after_settle")
    yield from resume_change(principal, scope, change_id, decided.change.thread_id, value, model)
