"""The ASGI app: routes of INTERFACES.md, JSON errors, SSE runs.

Importing this module stays light: `/health`, keep-warm and the event router never import
the graph or a model provider; routes that need them import on first use.
"""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from opsgraph.api.principals import principal_of, require_roles
from opsgraph.errors import BadInput, OpsgraphError
from opsgraph.principal import Role

log = logging.getLogger(__name__)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, or BadInput saying what is wrong with it."""
    raw = await request.body()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadInput(f"body: invalid JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(body, dict):
        raise BadInput("body: must be a JSON object")
    return body


def optional_str(body: dict[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise BadInput(f"{field}: must be a string")
    return value


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def index(request: Request) -> Response:
    from opsgraph.api.dashboard import dashboard_page

    return dashboard_page()


async def runs(request: Request) -> Response:
    from opsgraph.api.sse import event_stream, prime
    from opsgraph.engine.runner import stream_run

    principal = principal_of(request)
    body = await json_body(request)
    message = optional_str(body, "message")
    if not message or not message.strip():
        raise BadInput("message: required, a non-empty string")
    thread_id = optional_str(body, "thread_id")
    first, rest = await prime(stream_run(principal, message, thread_id=thread_id))
    return event_stream(first, rest)


async def list_approvals(request: Request) -> Response:
    from opsgraph.approvals.pending import STATUSES, list_changes
    from opsgraph.store.scope import TenantScope

    principal = principal_of(request)
    require_roles(principal, Role.MANAGER, Role.ADMIN, action="listing approvals")
    status = request.query_params.get("status", "pending")
    if status not in STATUSES:
        raise BadInput(f"status: unknown status {status!r} (allowed: {', '.join(STATUSES)})")
    changes = await run_in_threadpool(list_changes, TenantScope.of(principal), status)  # type: ignore[arg-type]
    return JSONResponse({"changes": [c.to_json() for c in changes]})


async def decide_approval(request: Request) -> Response:
    from opsgraph.api.sse import event_stream, prime
    from opsgraph.engine.approval_flow import decide_and_resume

    principal = principal_of(request)
    body = await json_body(request)
    decision = optional_str(body, "decision")
    if not decision:
        raise BadInput("decision: required, one of approve, edit, revise, reject")
    values = body.get("values")
    if values is not None and not isinstance(values, dict):
        raise BadInput("values: must be a JSON object")
    events = decide_and_resume(principal, request.path_params["change_id"], decision,
                               feedback=optional_str(body, "feedback"), values=values)
    first, rest = await prime(events)
    return event_stream(first, rest)


async def agents(request: Request) -> Response:
    from opsgraph.api.catalog import agents_for

    principal = principal_of(request)
    return JSONResponse({"agents": await run_in_threadpool(agents_for, principal)})


async def tenant_models(request: Request) -> Response:
    from opsgraph.models.overrides import get_overrides, set_overrides
    from opsgraph.registry.loader import get_registry
    from opsgraph.store.scope import TenantScope

    principal = principal_of(request)
    require_roles(principal, Role.ADMIN, action="managing model overrides")
    scope = TenantScope.of(principal)
    if request.method == "PUT":
        body = await json_body(request)
        known = set(get_registry().agents)
        await run_in_threadpool(set_overrides, scope, body, known, principal.user_id)
    models = await run_in_threadpool(get_overrides, scope)
    return JSONResponse({"models": models})


async def operation(request: Request) -> Response:
    from opsgraph.operations.direct import call_operation

    principal = principal_of(request)
    body = await json_body(request)
    args = body.get("args", {})
    if not isinstance(args, dict):
        raise BadInput("args: must be a JSON object")
    result = await run_in_threadpool(call_operation, principal, request.path_params["op_id"],
                                     args)
    return JSONResponse(result)


async def events(request: Request) -> Response:
    """Over HTTP only keep-warm is open; jobs and queue records need an admin's token (the
    Lambda handler hands AWS's own events straight to the router)."""
    from opsgraph.api.lambda_events import handle_event, is_keep_warm

    body = await json_body(request)
    if not is_keep_warm(body):
        require_roles(principal_of(request), Role.ADMIN, action="posting events")
    return JSONResponse(await run_in_threadpool(handle_event, body))


async def opsgraph_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OpsgraphError)
    return JSONResponse(exc.to_json(), status_code=exc.status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse({"error": {"code": code, "message": str(exc.detail)}},
                        status_code=exc.status_code)


async def unexpected_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse({"error": {"code": "internal", "message": "internal error"}},
                        status_code=500)


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/health", health, methods=["GET"]),
    Route("/v1/runs", runs, methods=["POST"]),
    Route("/v1/approvals", list_approvals, methods=["GET"]),
    Route("/v1/approvals/{change_id}", decide_approval, methods=["POST"]),
    Route("/v1/agents", agents, methods=["GET"]),
    Route("/v1/tenant/models", tenant_models, methods=["GET", "PUT"]),
    Route("/v1/operations/{op_id}", operation, methods=["POST"]),
    Route("/events", events, methods=["POST"]),
]


def create_app(*, check_registry: bool = True) -> Starlette:
    """The app. With `check_registry`, it refuses to start on an invalid registry."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if check_registry:
            from opsgraph.registry.loader import get_registry

            await run_in_threadpool(get_registry)  # raises on an invalid registry
        # What is loaded by now lives as long as the process: keep the collector off it.
        gc.collect()
        gc.freeze()
        yield

    return Starlette(routes=ROUTES, lifespan=lifespan, exception_handlers={
        OpsgraphError: opsgraph_error, HTTPException: http_error, Exception: unexpected_error})


app = create_app()
