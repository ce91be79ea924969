"""The approvals routes (managers, admins): the changes of the tenant by status
(`GET /v1/approvals`), those that ended, filtered and paged (`GET /v1/approvals/history`,
`approvals.decided` reads them), and a decision on a pending change
(`POST /v1/approvals/{change_id}`: the run resumes on its own, or streams)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.limits import check_budget, metered
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.request_models import DecisionRequest
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.approvals.decided import MAX_LIMIT, MAX_QUERY, decided_changes, parse_query
from opsgraph.approvals.pending import FINAL, STATUSES, get_change, list_changes
from opsgraph.errors import BadInput
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.principal import Role
from opsgraph.status_words import change_label
from opsgraph.store.scope import TenantScope


async def list_approvals(request: Request) -> Response:
    principal = await caller(request)
    require_roles(principal, Role.MANAGER, Role.ADMIN, action="listing approvals")
    status = request.query_params.get("status", "pending")
    if status not in STATUSES:
        raise BadInput(f"status: unknown status {status!r} (allowed: {', '.join(STATUSES)})")
    changes = await run_in_threadpool(list_changes, TenantScope.of(principal), status)
    return JSONResponse({"changes": [c.to_json() for c in changes]})


async def change_history(request: Request) -> Response:
    principal = await caller(request)
    require_roles(principal, Role.MANAGER, Role.ADMIN, action="reading the approvals history")
    query = parse_query(dict(request.query_params))
    return JSONResponse(await run_in_threadpool(decided_changes, TenantScope.of(principal),
                                                query))


async def decide_approval(request: Request) -> Response:
    """202 `{change_id, status, thread_id}` while the resumed run goes on by itself, or
    with `Accept: text/event-stream` the resumed run's stream (200)."""
    from opsgraph.api.sse import event_stream, prime  # heavy: sse_starlette (cold start)

    # heavy: langgraph (cold start)
    from opsgraph.engine.approval_flow import decide_and_resume

    principal = await caller(request)
    body = parse_body(await request.body(), DecisionRequest)
    change_id = request.path_params["change_id"]
    events = decide_and_resume(principal, change_id, body.decision,
                               feedback=body.feedback, values=body.values,
                               check_budget=lambda: check_budget(principal))
    first, rest = await prime(metered(events, principal, slot=False))
    if "text/event-stream" in request.headers.get("accept", ""):
        return event_stream(first, rest)
    # 202: the resumed run goes on in its worker, its events landing in the thread's log
    change = await run_in_threadpool(get_change, TenantScope.of(principal), change_id)
    return JSONResponse({"change_id": change_id, "status": change.status,
                         "status_label": change_label(change.status),
                         "thread_id": change.thread_id}, status_code=202)


def _history_params() -> tuple[Param, ...]:
    moment = {"type": "string", "description": "2026-12-01 or 2026-12-01T18:00:00Z"}
    return (
        Param("status", "query", {"type": "string"}, "One or more of "
              f"{', '.join(FINAL)}, comma-separated (default: all of them)."),
        Param("operation", "query", {"type": "string", "enum": sorted(CATALOGUE)},
              "Only changes of this operation."),
        Param("requester", "query", {"type": "string"},
              "Only changes this person asked for: a user id or a whole name, any case."),
        Param("since", "query", moment, "Ended at or after (a date: from its start)."),
        Param("until", "query", moment, "Ended before (a date: up to its end)."),
        Param("q", "query", {"type": "string", "maxLength": MAX_QUERY},
              "Text in the summary, request, requester's name, feedback or operation."),
        Param("limit", "query", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                                 "default": 25}, "Rows per page."),
        Param("cursor", "query", {"type": "string"}, "`next` of the page before."))


ROUTES = (
    ApiRoute("GET", "/v1/approvals", list_approvals,
             "Changes of the caller's tenant (manager, admin)", "bearer",
             response=("Changes",), errors=(400, 403), params=(
                 Param("status", "query", {"type": "string", "enum": list(STATUSES),
                                           "default": "pending"},
                       "Which changes: those with this status."),)),
    ApiRoute("GET", "/v1/approvals/history", change_history,
             "Changes that ended (applied, rejected, expired, ...), newest first, with who "
             "decided and when; filtered and paged (manager, admin)", "bearer",
             response=("ChangeHistory",), errors=(400, 403), params=_history_params),
    ApiRoute("POST", "/v1/approvals/{change_id}", decide_approval,
             "Decide a pending change: 202 while the run resumes on its own, or (asked with "
             "`Accept: text/event-stream`) the resumed run's events", "bearer", ok=202,
             response=("DecisionAccepted",), streams=True, request=(DecisionRequest,),
             errors=(403, 409, 410, 429), params=(
                 Param("change_id", "path", {"type": "string"},
                       "The change, as `approval_required` or `GET /v1/approvals` "
                       "named it."),)),
)
