"""`GET /openapi.json`: the OpenAPI 3.1 document of every route, built from a table.

The app is Starlette, so nothing derives the document from the handlers: `ROUTES` lists
each route once (method, path, summary, who may call it, its request model, its response
models per status, its parameters), and the schemas come from the pydantic models of
`request_models` and `response_models`. A test holds the table to the app's routes.
Runs and resumed runs are server-sent events: each event's `data` is JSON whose schema is
that event's model (`contentMediaType`/`contentSchema`), as docs/reference.md lists them.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from opsgraph.api import answer_log, catalogue_admin, harness_admin
from opsgraph.api.agent_protocol.openapi_routes import protocol_routes
from opsgraph.api.dashboard import CONTENT_TYPES, assets
from opsgraph.api.inbox_openapi import inbox_routes
from opsgraph.api.limits import MAX_BODY_BYTES
from opsgraph.api.principals import TENANT_HEADER, TENANT_ID
from opsgraph.api.request_models import (
    BareTenantModels,
    DecisionRequest,
    EventRequest,
    KnowledgeDocumentRequest,
    LocalSignInRequest,
    OperationRequest,
    RunRequest,
    TenantModelsRequest,
    TenantSettingsRequest,
)
from opsgraph.api.response_models import (
    RUN_EVENTS,
    Agents,
    Changes,
    DecisionAccepted,
    ErrorResponse,
    EventResult,
    HarnessView,
    Health,
    Info,
    KnowledgeDocumentRemoved,
    KnowledgeDocuments,
    KnowledgeDocumentWritten,
    Me,
    OperationDescription,
    ReadResult,
    RunCancelling,
    SignedIn,
    TenantModels,
    TenantSettings,
    ThreadDetail,
    Threads,
    WriteResult,
)
from opsgraph.api.route_doc import Access, ApiRoute, Param
from opsgraph.engine.thread_ids import THREAD_ID_PATTERN

SLUG_PATTERN: Final = "^[a-z0-9]+(?:-[a-z0-9]+)*$"
ERROR_TEXT: Final[dict[int, str]] = {
    400: "Bad input: a body that is not a JSON object (not UTF-8, too deep, a number out of "
         "range, a lone surrogate), a malformed header or parameter, a message over 8,000 "
         "characters",
    401: "No valid bearer token",
    403: "The caller's role, plan or tenant does not allow it, or its channel is read-only "
         "(code `read_only`: every route that writes refuses an `email` token)",
    404: "Unknown tenant, thread, change, operation or file",
    409: "The state moved: the change is not pending, or the thread is busy or waiting",
    410: "The change expired or is orphaned (its run can no longer resume)",
    413: f"Request body over {MAX_BODY_BYTES:,} bytes",
    422: "A JSON object whose fields are wrong: `errors` lists each field and its problem",
    429: "Too many runs in flight, or the tenant's model calls for today are spent; "
         "`Retry-After` says when to try again",
}


def _tenant_header() -> Param:
    return Param(TENANT_HEADER, "header", {"type": "string", "pattern":
                                           f"^{TENANT_ID.pattern}$"},
                 "A visitor's tenant (no token); default `OPSGRAPH_DEFAULT_TENANT`.")


def _visitor_header() -> Param:
    from opsgraph.api.principals import VISITOR_HEADER, VISITOR_SESSION

    return Param(VISITOR_HEADER, "header", {"type": "string", "pattern":
                                            f"^{VISITOR_SESSION.pattern}$"},
                 "A visitor's own session secret (no token): the visitor continues only "
                 "the threads this session started; without it, none.")


def _routes() -> tuple[ApiRoute, ...]:
    from opsgraph.approvals.pending import STATUSES
    from opsgraph.operations.catalogue import CATALOGUE

    tenant = _tenant_header()
    thread = Param("thread_id", "path", {"type": "string", "pattern": THREAD_ID_PATTERN},
                   "The thread, as `run_started` or `GET /v1/threads` named it.")
    slug = Param("slug", "path", {"type": "string", "pattern": SLUG_PATTERN, "maxLength": 120},
                 "The document's slug: lowercase words joined by `-`.")
    return (
        ApiRoute("GET", "/", "The dashboard (`/#token=<bearer>` signs in)", "open",
                 body="html", cached=True),
        ApiRoute("GET", "/static/{path}", "A file of the dashboard (its CSS, scripts, icons)",
                 "open", body="asset", cached=True, errors=(404,), params=(
                     Param("path", "path", {"type": "string", "enum": sorted(assets())},
                           "The file's path under the dashboard's `static/` folder."),)),
        ApiRoute("GET", "/health", "Liveness: `{\"ok\": true}`", "open", response=(Health,)),
        ApiRoute("GET", "/openapi.json", "This document (OpenAPI 3.1)", "open"),
        ApiRoute("POST", "/v1/runs", "Run a message: the run's events as they happen",
                 "visitor", body="sse", request=(RunRequest,), errors=(403, 409, 429),
                 params=(tenant, _visitor_header())),
        ApiRoute("POST", "/v1/runs/{run_id}/cancel",
                 "Stop a run in flight at its next step (`run_finished {status: cancelled}`, "
                 "its undecided cards withdrawn); 409 when it already finished", "bearer",
                 ok=202, response=(RunCancelling,), errors=(403, 409), params=(
                     Param("run_id", "path", {"type": "string"},
                           "The run, as `run_started` named it."),)),
        ApiRoute("GET", "/v1/approvals", "Changes of the caller's tenant (manager, admin)",
                 "bearer", response=(Changes,), errors=(400, 403), params=(
                     Param("status", "query", {"type": "string", "enum": list(STATUSES),
                                               "default": "pending"},
                           "Which changes: those with this status."),)),
        ApiRoute("POST", "/v1/approvals/{change_id}",
                 "Decide a pending change: 202 while the run resumes on its own, or (asked "
                 "with `Accept: text/event-stream`) the resumed run's events", "bearer",
                 ok=202, response=(DecisionAccepted,), streams=True,
                 request=(DecisionRequest,), errors=(403, 409, 410, 429), params=(
                     Param("change_id", "path", {"type": "string"},
                           "The change, as `approval_required` or `GET /v1/approvals` "
                           "named it."),)),
        ApiRoute("GET", "/v1/threads", "The caller's threads (and, for managers and admins, "
                 "those carrying changes), newest first", "visitor", response=(Threads,),
                 params=(tenant,)),
        ApiRoute("GET", "/v1/threads/{thread_id}", "One thread: conversation, last plan, "
                 "task results, sources, pending changes", "visitor",
                 response=(ThreadDetail,), errors=(400,), params=(thread, tenant)),
        ApiRoute("GET", "/v1/threads/{thread_id}/events", "A thread's stored events after "
                 "`Last-Event-ID`, then live until its current run finishes", "visitor",
                 body="sse", errors=(400,), params=(
                     thread, tenant,
                     Param("Last-Event-ID", "header", {"type": "string",
                                                       "pattern": "^[0-9]{1,19}$"},
                           "The id of the last event you have: the stream starts after it."),
                     Param("after", "query", {"type": "string", "pattern": "^[0-9]{1,19}$"},
                           "As `Last-Event-ID`, for clients that cannot set headers."))),
        ApiRoute("GET", "/v1/operations/{op_id}",
                 "An operation and the JSON schema of its input (to build edit forms)",
                 "visitor", response=(OperationDescription,), errors=(403,), params=(
                     Param("op_id", "path", {"type": "string", "enum": sorted(CATALOGUE)},
                           "The operation (docs/reference.md lists them)."), tenant)),
        ApiRoute("GET", "/v1/agents", "The agents the caller may use", "visitor",
                 response=(Agents,), params=(tenant,)),
        ApiRoute("GET", "/v1/tenant/models",
                 "The tenant's model per agent, and the models it may choose (admin)",
                 "bearer", response=(TenantModels,), errors=(403,)),
        ApiRoute("PUT", "/v1/tenant/models",
                 "Replace the tenant's model per agent (admin); answers as GET does",
                 "bearer", response=(TenantModels,),
                 request=(TenantModelsRequest, BareTenantModels), body_required=False,
                 errors=(403,)),
        ApiRoute("GET", "/v1/tenant/settings", "The tenant's settings (admin)", "bearer",
                 response=(TenantSettings,), errors=(403,)),
        ApiRoute("PUT", "/v1/tenant/settings",
                 "Set the tenant's settings (admin); answers as GET does", "bearer",
                 response=(TenantSettings,), request=(TenantSettingsRequest,), errors=(403,)),
        ApiRoute("GET", "/v1/harness",
                 "The tenant's harness versions, and one (the active one by default) as "
                 "JSON and as an SVG flowchart (admin)", "bearer", response=(HarnessView,),
                 errors=(400, 403), params=(
                     Param("version", "query", {"type": "string", "pattern": "^[0-9]{1,9}$"},
                           "The version to show (0: the built-in harness)."),)),
        ApiRoute("GET", "/v1/knowledge/documents",
                 "The tenant's knowledge documents and knowledge version (admin)", "bearer",
                 response=(KnowledgeDocuments,), errors=(403,)),
        ApiRoute("PUT", "/v1/knowledge/documents/{slug}",
                 "Add or replace a knowledge document (admin); bumps the knowledge version",
                 "bearer", response=(KnowledgeDocumentWritten,),
                 request=(KnowledgeDocumentRequest,), errors=(400, 403), params=(slug,)),
        ApiRoute("DELETE", "/v1/knowledge/documents/{slug}",
                 "Remove a knowledge document (admin); bumps the knowledge version",
                 "bearer", response=(KnowledgeDocumentRemoved,), errors=(400, 403),
                 params=(slug,)),
        ApiRoute("GET", "/v1/info", "Which model answers and why; demo mode's examples; "
                 "whether local sign-in is open", "open", response=(Info,)),
        ApiRoute("POST", "/v1/local/sign-in",
                 "A token for a demo user in a role (a local server only, else 404)", "open",
                 response=(SignedIn,), request=(LocalSignInRequest,), errors=(403, 404)),
        ApiRoute("GET", "/v1/me", "Who the caller is: tenant, user id, name and roles",
                 "visitor", response=(Me,), params=(tenant,)),
        ApiRoute("POST", "/v1/operations/{op_id}",
                 "Run one operation with the caller's permissions (a write applies at once)",
                 "visitor", response=(ReadResult, WriteResult), request=(OperationRequest,),
                 body_required=False, errors=(403, 409), params=(
                     Param("op_id", "path", {"type": "string", "enum": sorted(CATALOGUE)},
                           "The operation (docs/reference.md lists them)."), tenant)),
        ApiRoute("POST", "/events",
                 "Keep-warm (open); a scheduled job or queue records (admin, own tenant)",
                 "visitor", response=(EventResult,), request=(EventRequest,),
                 errors=(403,)),
        *inbox_routes(),
        *harness_admin.openapi_routes(), *catalogue_admin.openapi_routes(),
        *answer_log.openapi_routes(),
        *protocol_routes(),
    )


def _one_of(refs: list[dict[str, Any]]) -> dict[str, Any]:
    return refs[0] if len(refs) == 1 else {"anyOf": refs}


def _sse_schema(refs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One event of the stream: its name, id and JSON data, per event name."""
    return {"oneOf": [{
        "type": "object", "required": ["event", "data"],
        "properties": {
            "event": {"const": name},
            "id": {"type": "string", "description": "Unique within the thread."},
            "data": {"type": "string", "contentMediaType": "application/json",
                     "contentSchema": ref}}}
        for name, ref in refs.items()]}


def _security(access: Access) -> list[dict[str, list[str]]]:
    bearer: dict[str, list[str]] = {"bearer": []}
    return {"open": [], "visitor": [{}, bearer], "bearer": [bearer]}[access]


PROTOCOL_PART: Final[dict[str, Any]] = {
    "type": "object", "required": ["event", "data"], "properties": {
        "event": {"type": "string", "description": "metadata, values, updates, messages, "
                                                   "custom or error"},
        "id": {"type": "string"},
        "data": {"type": "string", "contentMediaType": "application/json"}}}
IF_NONE_MATCH: Final = Param("If-None-Match", "header", {"type": "string"},
                            "The ETag of the copy you have: 304 while it is current.")
REQUEST_ID: Final = {"description": "The request's id (yours, if you sent a well-formed "
                                    "`X-Request-Id`); errors and the log carry it too.",
                     "schema": {"type": "string"}, "required": True}


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document (built once per process)."""
    routes = _routes()
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = [(ErrorResponse, "serialization")]
    for route in routes:
        wanted += [(m, "validation") for m in route.request]
        wanted += [(m, "serialization") for m in route.response]
    wanted += [(m, "serialization") for m in RUN_EVENTS.values()]
    refs, defs = models_json_schema(list(dict.fromkeys(wanted)),
                                    ref_template="#/components/schemas/{model}")
    events = {name: refs[(model, "serialization")] for name, model in RUN_EVENTS.items()}
    error = refs[(ErrorResponse, "serialization")]
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        content: dict[str, Any] = {
            "json": {"application/json": {"schema": _one_of(
                [refs[(m, "serialization")] for m in route.response]) if route.response
                else {"type": "object"}}},
            "sse": {"text/event-stream": {"schema": _sse_schema(events)}},
            "parts": {"text/event-stream": {"schema": PROTOCOL_PART}},
            "html": {"text/html": {"schema": {"type": "string"}}},
            "asset": {kind.split(";")[0]: {"schema": {"type": "string"}}
                      for kind in sorted(set(CONTENT_TYPES.values()))},
        }[route.body]
        responses: dict[str, Any] = {str(route.ok): {
            "description": "The run's events" if route.body == "sse" else "OK",
            "headers": {"X-Request-Id": REQUEST_ID}, "content": content}}
        if route.streams:
            responses["200"] = {"description": "The resumed run's events",
                                "headers": {"X-Request-Id": REQUEST_ID},
                                "content": {"text/event-stream": {
                                    "schema": _sse_schema(events)}}}
        if route.cached:
            responses["304"] = {"description": "Not modified: `If-None-Match` named its ETag",
                                "headers": {"X-Request-Id": REQUEST_ID}}
        for status in route.error_statuses():
            headers = {"X-Request-Id": REQUEST_ID}
            if status == 429:
                headers["Retry-After"] = {"description": "Seconds to wait.", "required": True,
                                          "schema": {"type": "string", "pattern": "^[0-9]+$"}}
            responses[str(status)] = {"description": ERROR_TEXT[status], "headers": headers,
                                      "content": {"application/json": {"schema": error}}}
        operation: dict[str, Any] = {
            "summary": route.summary,
            "operationId": f"{route.method.lower()} {route.path}",
            "security": _security(route.access),
            "responses": responses}
        params = [*route.params, *((IF_NONE_MATCH,) if route.cached else ())]
        if params:
            operation["parameters"] = [p.to_json() for p in params]
        if route.request:
            schema = _one_of([refs[(m, "validation")] for m in route.request])
            operation["requestBody"] = {"required": route.body_required,
                                        "content": {"application/json": {"schema": schema}}}
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "opsgraph", "version": _version(),
                 "description": "The HTTP API of opsgraph (docs/reference.md)."},
        "paths": paths,
        "components": {"schemas": defs.get("$defs", {}), "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                       "description": "`opsgraph token --tenant T --user U --role R`"}}},
    }


def _version() -> str:
    try:
        return version("opsgraph")
    except PackageNotFoundError:
        return "0"


def route_keys() -> set[tuple[str, str]]:
    """(method, path) of every route the document describes."""
    return {(route.method, route.path) for route in _routes()}
