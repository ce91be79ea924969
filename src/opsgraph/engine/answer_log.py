"""The answer log: a tenant's recent runs as an admin (or an agent improving the tenant's
harness) reviews them — what was asked, what ran, what it cost, what came out.

Read from the thread log (`thread_events`), which holds every event of every run: a run is
listed once it has finished (`run_finished`: outcome and model calls), with its request
(`run_started`; a run resumed after a decision carries no message, so it shows the message
of the run it resumed), the tools its tasks called (`task_finished`), its sources
(`answer`) and its error. The harness steps it ran and the harness version come from the
run's record (`runs`) when the engine stored one, else they are None.

Newest first, by finish time; paged by `before`, the `cursor` of the last item of the
previous page, so runs finishing while a client pages never shift what it sees.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opsgraph.engine.thread_log import EVENTS, RUNS
from opsgraph.errors import BadInput, NotFound
from opsgraph.store.scope import Document, TenantScope

MAX_LIMIT = 100
_DETAIL = ("run_started", "task_finished", "answer", "error")


def _cursor(at: datetime, run_id: str) -> str:
    return f"{at.astimezone(UTC).isoformat()}~{run_id}"


def _parse_cursor(before: str) -> tuple[datetime, str]:
    at, sep, run_id = before.partition("~")
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        when = None
    if not sep or not run_id or when is None or when.tzinfo is None:
        raise BadInput(f"before: {before!r} is not a cursor of this log (pass the `cursor` "
                       "of the last run of the previous page)")
    return when, run_id


OUTCOMES = ("completed", "completed_with_errors", "awaiting_approval", "cancelled", "failed")
"""The outcomes a run finishes with (`run_finished.status`): what `outcome` filters by."""


def _page_filter(before: str | None, outcome: str | None = None,
                 since: datetime | None = None) -> Document:
    flt: Document = {"event": "run_finished"}
    if outcome is not None:
        if outcome not in OUTCOMES:
            raise BadInput(f"outcome: {outcome!r} is not one of {', '.join(OUTCOMES)}")
        flt["data.status"] = outcome
    if since is not None:
        flt["at"] = {"$gte": since}
    if before is not None:
        at, run_id = _parse_cursor(before)
        flt["$or"] = [{"at": {"$lt": at}}, {"at": at, "run_id": {"$lt": run_id}}]
    return flt


def _resumed_requests(scope: TenantScope, missing: list[Document]) -> dict[str, str]:
    """run id → the message of the latest run before it on its thread that had one."""
    found: dict[str, str] = {}
    for start in missing:
        earlier = scope[EVENTS].find_one(
            {"thread_id": start["thread_id"], "event": "run_started",
             "seq": {"$lt": start["seq"]}, "data.message": {"$exists": True}},
            sort=[("seq", -1)], projection={"data.message": 1})
        if earlier is not None:
            found[str(start["run_id"])] = str(earlier["data"]["message"])
    return found


def answer_log(scope: TenantScope, *, limit: int = 20, before: str | None = None,
               outcome: str | None = None, since: datetime | None = None,
               ) -> dict[str, Any]:
    """`{"runs": [...], "next": cursor | None}`: the tenant's finished runs, newest first
    (only those that finished with `outcome`, or at `since` or later, when given);
    `next` is None on the last page."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"limit: must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
    finished = list(scope[EVENTS].find(_page_filter(before, outcome, since),
                                       sort=[("at", -1), ("run_id", -1)],
                                       limit=limit + 1,
                                       projection={"thread_id": 1, "run_id": 1, "at": 1,
                                                   "data": 1}))
    page = finished[:limit]
    run_ids = [str(d["run_id"]) for d in page]
    detail: dict[str, list[Document]] = {}
    for doc in scope[EVENTS].find({"run_id": {"$in": run_ids}, "event": {"$in": list(_DETAIL)}},
                                  sort=[("seq", 1)]):
        detail.setdefault(str(doc["run_id"]), []).append(doc)
    records = {str(r["run_id"]): r for r in scope[RUNS].find(
        {"run_id": {"$in": run_ids}},
        projection={"run_id": 1, "steps_ran": 1, "harness": 1})}
    starts = {rid: next((d for d in docs if d["event"] == "run_started"), None)
              for rid, docs in detail.items()}
    resumed = _resumed_requests(scope, [s for s in starts.values()
                                        if s is not None and "message" not in s["data"]])
    runs = [_entry(done, detail.get(str(done["run_id"]), []),
                   records.get(str(done["run_id"])), resumed) for done in page]
    last = page[-1] if page and len(finished) > limit else None
    return {"runs": runs,
            "next": _cursor(last["at"], str(last["run_id"])) if last is not None else None}


def _entry(done: Document, events: list[Document], record: Document | None,
           resumed: dict[str, str]) -> dict[str, Any]:
    run_id = str(done["run_id"])
    data = done.get("data") or {}
    start: Document = next((e["data"] for e in events if e["event"] == "run_started"), {})
    answer = next((e["data"] for e in reversed(events) if e["event"] == "answer"), None)
    error = next((e["data"] for e in events if e["event"] == "error"), None)
    tools = [str(c.get("tool")) for e in events if e["event"] == "task_finished"
             for c in e["data"].get("calls") or [] if isinstance(c, dict)]
    harness = (record or {}).get("harness") or {}
    return {
        "thread_id": str(done["thread_id"]), "run_id": run_id,
        "at": done["at"].astimezone(UTC).isoformat(), "cursor": _cursor(done["at"], run_id),
        "request": start.get("message", resumed.get(run_id, "")),
        "resumed": "resumed" in start,
        "steps": list(record["steps_ran"]) if record and "steps_ran" in record else None,
        "model_calls": int((data.get("usage") or {}).get("model_calls") or 0),
        "tools": list(dict.fromkeys(tools)),
        "sources": list((answer or {}).get("sources") or []),
        "outcome": str(data.get("status", "")),
        "error": {"code": error.get("code"), "message": error.get("message")}
        if error else None,
        "harness_version": harness.get("version") if record else None,
    }


def run_detail(scope: TenantScope, run_id: str) -> dict[str, Any]:
    """One finished run as the log lists it, and beside that its plan (the tasks as
    planned) and its tasks as they finished (agent, outcome, the tools called with their
    arguments and results): `{...entry, plan, tasks, usage}`. NotFound for a run that is
    not in the tenant's log (not this tenant's, or not finished)."""
    done = scope[EVENTS].find_one({"run_id": run_id, "event": "run_finished"})
    if done is None:
        raise NotFound(f"run {run_id!r}: no finished run of this tenant has that id")
    events = list(scope[EVENTS].find({"run_id": run_id}, sort=[("seq", 1)]))
    record = scope[RUNS].find_one({"run_id": run_id},
                                  projection={"run_id": 1, "steps_ran": 1, "harness": 1})
    start = next((e for e in events if e["event"] == "run_started"), None)
    resumed = _resumed_requests(scope, [start] if start is not None
                                and "message" not in start["data"] else [])
    plan: Document = next((e["data"] for e in reversed(events) if e["event"] == "plan"), {})
    tasks = [{"task_id": e["data"].get("task_id"), "agent": e["data"].get("agent"),
              "status": e["data"].get("status"), "status_label": e["data"].get("status_label"),
              "calls": list(e["data"].get("calls") or [])}
             for e in events if e["event"] == "task_finished"]
    return {**_entry(done, [e for e in events if e["event"] in _DETAIL], record, resumed),
            "plan": list(plan.get("tasks") or []), "tasks": tasks,
            "usage": dict((done.get("data") or {}).get("usage") or {})}
