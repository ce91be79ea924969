"""Stopping a run in flight (`POST /v1/runs/{run_id}/cancel`).

The request only marks the run's thread lease in the store (`cancel`, naming the lease's
holder), because the run may be going on in another process (Lambda runs one request per
instance). The run reads the mark in the same read that confirms its lease (every step of
the graph, each sub-task as it starts, and before it pauses: `RunContext.step`) and ends
`cancelled` there: its undecided cards are `withdrawn`, and nothing is half written, since
a run applies nothing itself (a change applies only by a decision's compare-and-set). The
stopped run clears the graph's pending tasks (`engine.runner._drive`): a run resumed after
a decision would otherwise leave its thread paused on the cards it was resumed from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opsgraph.engine.thread_log import RUNS, THREADS, run_active
from opsgraph.engine.threads import LEASES
from opsgraph.errors import Conflict, Forbidden, NotFound, RunAborted
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import TenantScope

CANCELLED_WORDS = "Stopped at your request before it finished."


class RunCancelled(RunAborted):
    """The run was asked to stop; it stops at its next step."""

    code = "cancelled"


def _mark_lease(scope: TenantScope, thread_id: str, run_id: str, by: str) -> bool:
    """Mark the live lease of the thread's run as asked to stop, for its holder only (a
    later run takes the lease as another owner and reads no mark of its own); False when
    no run holds the thread any more."""
    leases = scope[LEASES]
    held = leases.find_one({"thread_id": thread_id, "until": {"$gte": datetime.now(UTC)}},
                           projection={"owner": 1})
    if held is None:
        return False
    marked = leases.update_one({"thread_id": thread_id, "owner": held["owner"]}, {"$set": {
        "cancel": {"owner": held["owner"], "run_id": run_id, "by": by,
                   "at": datetime.now(UTC)}}})
    return marked.matched_count == 1


def request_cancel(principal: Principal, run_id: str) -> dict[str, Any]:
    """Ask a run in flight to stop: `{run_id, status: "cancelling"}`. 404 for a run the
    caller may not see (its requester, a manager or an admin may stop it); 409 when it
    already finished (or paused for approval, or its server went away)."""
    if principal.roles <= {Role.VISITOR}:
        raise Forbidden("sign in to stop a run: a visitor's runs end by themselves")
    scope = TenantScope.of(principal)
    thread = scope[THREADS].find_one({"run_id": run_id})
    finished = scope[RUNS].find_one({"run_id": run_id}, projection={"status": 1})
    if thread is None and finished is None:
        raise NotFound(f"run {run_id!r} not found", run_id=run_id)
    owner = (thread or {}).get("requester", {}).get("user_id")
    if thread is not None and owner != principal.user_id and not (
            principal.roles & {Role.MANAGER, Role.ADMIN}):
        raise NotFound(f"run {run_id!r} not found", run_id=run_id)
    if finished is not None or thread is None:
        status = (finished or {}).get("status", "finished")
        raise Conflict(f"run {run_id} already finished ({status}): there is nothing to stop"
                       + ("; decide or reject its changes instead"
                          if status == "awaiting_approval" else ""),
                       run_id=run_id, status=status)
    if not run_active(scope, str(thread["thread_id"])):
        raise Conflict(f"run {run_id} is not running any more (its server stopped): there "
                       "is nothing to stop", run_id=run_id, status=thread.get("status"))
    if not _mark_lease(scope, str(thread["thread_id"]), run_id, principal.user_id):
        raise Conflict(f"run {run_id} finished just now: there is nothing to stop",
                       run_id=run_id, status="finished")
    return {"run_id": run_id, "status": "cancelling", "thread_id": thread["thread_id"]}
