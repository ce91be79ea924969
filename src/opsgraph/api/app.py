"""The ASGI app: the one route table (each entry in the module that handles it), JSON
errors, the MCP links beside it.

Importing this module stays light: `/health`, keep-warm and the event router never import
the graph or a model provider; routes that need them import on first use.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
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
    agents,
    agui,
    answer_log,
    approval_routes,
    catalogue_admin,
    dashboard,
    drafts,
    first_run,
    harness_admin,
    harness_view,
    knowledge_admin,
    mcp_spec,
    me,
    operations,
    runs,
    service,
    threads,
)
from opsgraph.api.error_responses import error_response
from opsgraph.api.limits import BodyCap
from opsgraph.api.read_only import guard_writes
from opsgraph.api.request_ids import RequestIds, current_request_id
from opsgraph.api.route_doc import ApiRoute
from opsgraph.errors import OpsgraphError

log = logging.getLogger(__name__)


@cache
def openapi_json() -> dict[str, Any]:
    """The document of `ROUTE_TABLE` (built once per process)."""
    from opsgraph.api.openapi import openapi_document

    return openapi_document(ROUTE_TABLE)


async def openapi(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(openapi_json))


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


ROUTE_TABLE: tuple[ApiRoute, ...] = (
    *dashboard.ROUTES,
    *service.ROUTES,
    ApiRoute("GET", "/openapi.json", openapi, "This document (OpenAPI 3.1)", "open"),
    *runs.ROUTES,
    *threads.ROUTES,
    *approval_routes.ROUTES,
    *agents.ROUTES,
    *first_run.ROUTES,
    *me.ROUTES,
    *harness_view.ROUTES, *harness_admin.ROUTES,
    *catalogue_admin.ROUTES,
    *answer_log.ROUTES,
    *knowledge_admin.ROUTES,
    *operations.ROUTES,
    *drafts.ROUTES,
    *agent_protocol.ROUTES,
    *agui.ROUTES,
    *mcp_spec.ROUTES,
)
"""Every route of the app, once: the app serves it (`ROUTES`) and `/openapi.json` describes
it."""
ROUTES = [route.served() for route in ROUTE_TABLE]


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
