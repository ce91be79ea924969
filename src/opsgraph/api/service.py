"""The service's own routes: `GET /health` (liveness) and `POST /events` (keep-warm, a
scheduled job, queue records: the event router of `api.lambda_events`, over HTTP)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_json_object
from opsgraph.api.lambda_events import handle_event, is_internal_event, is_keep_warm
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.request_models import EventRequest
from opsgraph.api.route_doc import ApiRoute
from opsgraph.principal import Role


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def events(request: Request) -> Response:
    """Over HTTP only keep-warm is open; jobs and queue records need an admin's token, and a
    queue record may name the admin's own tenant only. AWS's own events are trusted: the
    mangum handler hands them straight to the router, and behind the Lambda Web Adapter the
    streaming entry marks the ones the adapter passed through (`is_internal_event`)."""
    body = parse_json_object(await request.body())
    if is_keep_warm(body):
        return JSONResponse(handle_event(body))
    if is_internal_event(request.scope):
        return JSONResponse(await run_in_threadpool(handle_event, body))
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action="posting events")
    return JSONResponse(await run_in_threadpool(handle_event, body, principal.tenant_id))


ROUTES = (
    ApiRoute("GET", "/health", health, "Liveness: `{\"ok\": true}`", "open",
             response=("Health",)),
    ApiRoute("POST", "/events", events,
             "Keep-warm (open); a scheduled job or queue records (admin, own tenant)",
             "visitor", response=("EventResult",), request=(EventRequest,), errors=(403,)),
)
