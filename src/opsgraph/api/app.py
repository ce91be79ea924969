"""The ASGI app: the routes of docs/reference.md, JSON errors, SSE runs.

Importing this module stays light: `/health`, keep-warm and the event router never import
the graph or a model provider; routes that need them import on first use.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from opsgraph.api import (
    agent_protocol,
    agui,
    answer_log,
    approval_history,
    catalogue_admin,
    drafts,
    first_run,
    harness_admin,
    harness_view,
    knowledge_admin,
    mcp_spec,
    me,
    threads,
)
from opsgraph.api.bodies import parse_json_object
from opsgraph.api.error_responses import error_response
from opsgraph.api.limits import BodyCap
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.read_only import guard_writes
from opsgraph.api.request_ids import RequestIds, current_request_id
from opsgraph.errors import BadInput, OpsgraphError
from opsgraph.principal import Role

log = logging.getLogger(__name__)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, or BadInput saying what is wrong with it."""
    return parse_json_object(await request.body())


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def openapi(request: Request) -> Response:
    from opsgraph.api.openapi import openapi_document

    return JSONResponse(await run_in_threadpool(openapi_document))


async def index(request: Request) -> Response:
    from opsgraph.api.dashboard import dashboard_response

    return dashboard_response(request)


async def runs(request: Request) -> Response:
    from opsgraph.api.bodies import parse_body
    from opsgraph.api.limits import RUN_SLOTS, check_budget, metered
    from opsgraph.api.request_models import RunRequest
    from opsgraph.api.sse import event_stream, prime
    from opsgraph.engine.runner import stream_run
    from opsgraph.models.demo import script_for

    principal = await caller(request)
    body = parse_body(await request.body(), RunRequest)
    if body.thread_id is not None:
        await run_in_threadpool(threads.require_thread, principal, body.thread_id)
    await run_in_threadpool(check_budget, principal)
    # a slot in the store (one round trip or two): given back by `metered` when the
    # stream ends, or here if the run never starts
    await run_in_threadpool(RUN_SLOTS.take, principal)
    try:
        # demo mode: an example request runs on its own scripted model (None otherwise)
        model = await run_in_threadpool(script_for, principal, body.message)
        events = metered(stream_run(principal, body.message, thread_id=body.thread_id,
                                    model=model), principal, slot=True)
    except BaseException:
        RUN_SLOTS.give_back(principal)
        raise
    first, rest = await prime(events)
    return event_stream(first, rest)


async def cancel_run(request: Request) -> Response:
    """202 `{run_id, status: "cancelling"}`: the run stops at its next step; 409 when it
    already finished."""
    from opsgraph.engine.cancel import request_cancel

    principal = await caller(request)
    body = await run_in_threadpool(request_cancel, principal, request.path_params["run_id"])
    return JSONResponse(body, status_code=202)


async def list_approvals(request: Request) -> Response:
    from opsgraph.approvals.pending import STATUSES, list_changes
    from opsgraph.store.scope import TenantScope

    principal = await caller(request)
    require_roles(principal, Role.MANAGER, Role.ADMIN, action="listing approvals")
    status = request.query_params.get("status", "pending")
    if status not in STATUSES:
        raise BadInput(f"status: unknown status {status!r} (allowed: {', '.join(STATUSES)})")
    changes = await run_in_threadpool(list_changes, TenantScope.of(principal), status)
    return JSONResponse({"changes": [c.to_json() for c in changes]})


async def decide_approval(request: Request) -> Response:
    """202 `{change_id, status, thread_id}` while the resumed run goes on by itself, or
    with `Accept: text/event-stream` the resumed run's stream (200)."""
    from opsgraph.api.bodies import parse_body
    from opsgraph.api.limits import check_budget, metered
    from opsgraph.api.request_models import DecisionRequest
    from opsgraph.api.sse import event_stream, prime
    from opsgraph.approvals.pending import get_change
    from opsgraph.engine.approval_flow import decide_and_resume
    from opsgraph.status_words import change_label
    from opsgraph.store.scope import TenantScope

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


async def agents(request: Request) -> Response:
    from opsgraph.api.catalog import agents_for

    principal = await caller(request)
    return JSONResponse({"agents": await run_in_threadpool(agents_for, principal)})


async def tenant_models(request: Request) -> Response:
    """GET and PUT answer `{"models": {agent: spec}, "allowed": [...]}`; PUT takes
    `{"models": {agent: spec}}`, or the bare `{agent: spec}`, and replaces every override."""
    from opsgraph.api.bodies import validated
    from opsgraph.api.request_models import TenantModelsRequest
    from opsgraph.models.overrides import model_settings, set_overrides
    from opsgraph.registry.loader import get_registry
    from opsgraph.store.scope import TenantScope

    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action="managing model overrides")
    scope = TenantScope.of(principal)
    if request.method == "PUT":
        body = await json_body(request)
        chosen = validated(body if "models" in body else {"models": body}, TenantModelsRequest)
        known = set(get_registry().agents)
        await run_in_threadpool(set_overrides, scope, chosen.models, known, principal.user_id)
    return JSONResponse(await run_in_threadpool(model_settings, scope))


async def operation(request: Request) -> Response:
    from opsgraph.api.bodies import parse_body
    from opsgraph.api.request_models import OperationRequest
    from opsgraph.operations.direct import call_operation

    principal = await caller(request)
    body = parse_body(await request.body(), OperationRequest)
    result = await run_in_threadpool(call_operation, principal, request.path_params["op_id"],
                                     body.args)
    return JSONResponse(result)


async def events(request: Request) -> Response:
    """Over HTTP only keep-warm is open; jobs and queue records need an admin's token, and a
    queue record may name the admin's own tenant only. AWS's own events are trusted: the
    mangum handler hands them straight to the router, and behind the Lambda Web Adapter the
    streaming entry marks the ones the adapter passed through (`is_internal_event`)."""
    from opsgraph.api.lambda_events import handle_event, is_internal_event, is_keep_warm

    body = await json_body(request)
    if is_keep_warm(body):
        return JSONResponse(handle_event(body))
    if is_internal_event(request.scope):
        return JSONResponse(await run_in_threadpool(handle_event, body))
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action="posting events")
    return JSONResponse(await run_in_threadpool(handle_event, body, principal.tenant_id))


async def opsgraph_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OpsgraphError)
    if exc.status >= 500:  # ours, but a fault: the log has it under the request id
        log.error("request %s: %s %s: %s", current_request_id(), request.method,
                  request.url.path, exc.message)
    return error_response(exc)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return JSONResponse({"error": {"code": code, "message": str(exc.detail),
                                   "request_id": current_request_id()}},
                        status_code=exc.status_code)


async def unexpected_error(request: Request, exc: Exception) -> Response:
    """A fault: logged in full with the request id; the client gets the id, not the text."""
    request_id = current_request_id()
    log.error("request %s: unhandled error on %s %s", request_id, request.method,
              request.url.path, exc_info=exc)
    return JSONResponse({"error": {"code": "internal", "request_id": request_id,
                                   "message": f"internal error (request id {request_id})"}},
                        status_code=500)


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/static/{path:path}", index, methods=["GET"]),
    Route("/health", health, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/v1/runs", runs, methods=["POST"]),
    Route("/v1/runs/{run_id}/cancel", cancel_run, methods=["POST"]),
    Route("/v1/threads", threads.list_threads, methods=["GET"]),
    Route("/v1/threads/{thread_id}", threads.get_thread, methods=["GET"]),
    Route("/v1/threads/{thread_id}/events", threads.thread_events, methods=["GET"]),
    Route("/v1/approvals", list_approvals, methods=["GET"]),
    *approval_history.ROUTES,
    Route("/v1/approvals/{change_id}", decide_approval, methods=["POST"]),
    Route("/v1/agents", agents, methods=["GET"]),
    Route("/v1/tenant/models", tenant_models, methods=["GET", "PUT"]),
    Route("/v1/tenant/settings", first_run.tenant_settings, methods=["GET", "PUT"]),
    Route("/v1/info", first_run.info, methods=["GET"]),
    Route("/v1/local/sign-in", first_run.local_sign_in, methods=["POST"]),
    Route("/v1/me", me.me, methods=["GET"]),
    Route("/v1/harness", harness_view.get_harness, methods=["GET"]),
    *harness_admin.ROUTES, *catalogue_admin.ROUTES, *answer_log.ROUTES,
    Route("/v1/knowledge/documents", knowledge_admin.list_documents, methods=["GET"]),
    Route("/v1/knowledge/documents/{slug}", knowledge_admin.put_document, methods=["PUT"]),
    Route("/v1/knowledge/documents/{slug}", knowledge_admin.delete_document,
          methods=["DELETE"]),
    Route("/v1/operations/{op_id}", threads.describe_operation, methods=["GET"]),
    Route("/v1/operations/{op_id}", operation, methods=["POST"]),
    *drafts.ROUTES,
    Route("/events", events, methods=["POST"]),
    *agent_protocol.ROUTES,
    Route("/ag-ui", agui.run_agent, methods=["POST"]),
    Route(mcp_spec.METADATA_PATH, mcp_spec.protected_resource, methods=["GET"]),
    Route(mcp_spec.METADATA_PATH + "/{link:path}", mcp_spec.protected_resource,
          methods=["GET"]),
]


def cors_middleware() -> list[Middleware]:
    """Cross-origin access for the browser clients `OPSGRAPH_CORS_ORIGINS` names (none by
    default): the headers they send (the token as `Authorization` or `X-Api-Key`) and the
    ones they read (a run's `Content-Location`, `Retry-After`, `X-Request-Id`)."""
    from opsgraph.settings import cors_origins

    origins = cors_origins()
    if not origins:
        return []
    from starlette.middleware.cors import CORSMiddleware

    return [Middleware(CORSMiddleware, allow_origins=list(origins),
                       allow_methods=["GET", "POST", "PUT", "DELETE"],
                       allow_headers=["Authorization", "X-Api-Key", "Content-Type",
                                      "Last-Event-ID", "X-Request-Id", "X-Opsgraph-Tenant",
                                      "Accept", "Cache-Control"],
                       expose_headers=["Content-Location", "Retry-After", "X-Request-Id"])]


def create_app(*, check_registry: bool = True) -> Starlette:
    """The app. With `check_registry`, it refuses to start on an invalid registry or a
    malformed list of the models tenants may choose."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        from opsgraph.telemetry.logs import configure_logging

        configure_logging()  # text locally, JSON on Lambda (OPSGRAPH_LOG_FORMAT)
        if check_registry:
            from opsgraph.models.overrides import allowed_models
            from opsgraph.registry.loader import get_registry

            await run_in_threadpool(get_registry)  # raises on an invalid registry
            allowed_models()  # raises ConfigurationError naming the variable
        # What is loaded by now lives as long as the process: keep the collector off it.
        gc.collect()
        gc.freeze()
        yield

    from opsgraph.api.mcp_admin import McpAdmin
    from opsgraph.api.mcp_user import McpUser

    # MCP is not a JSON route: served beside ROUTES (and /openapi.json), not in them
    mcp = [Route("/mcp/user", McpUser()), Route("/mcp/admin", McpAdmin())]
    # every route that writes refuses a read-only caller (api.read_only), in one place
    return Starlette(routes=guard_writes([*ROUTES, *mcp]), lifespan=lifespan,
                     middleware=[*cors_middleware(), Middleware(RequestIds),
                                 Middleware(BodyCap)],
                     exception_handlers={
        OpsgraphError: opsgraph_error, HTTPException: http_error, Exception: unexpected_error})


app = create_app()
