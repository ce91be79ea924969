"""`GET /openapi.json`: the OpenAPI 3.1 document of the app's one route table.

The app is Starlette, so nothing derives the document from the handlers: each entry of the
table (`api.route_doc.ApiRoute`, in the module that handles the route) says its method,
path, summary, who may call it, its request model, its response models and its
parameters, and the schemas come from those pydantic models. The app serves the same
entries, so the document describes every route it serves and no other.
Runs and resumed runs are server-sent events: each event's `data` is JSON whose schema is
that event's model (`contentMediaType`/`contentSchema`), as docs/reference.md lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any, Final

from ag_ui.core import RunAgentInput
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from opsgraph.api import inbox_models, response_models
from opsgraph.api.agent_protocol import response_models as protocol_models
from opsgraph.api.dashboard import CONTENT_TYPES
from opsgraph.api.limits import MAX_BODY_BYTES
from opsgraph.api.response_models import RUN_EVENTS, ErrorResponse
from opsgraph.api.route_doc import Access, ApiRoute, Model, Param

MODEL_MODULES: Final[tuple[ModuleType, ...]] = (response_models, inbox_models,
                                                 protocol_models)
"""Where a model the table names (rather than imports) is defined: modules the app's own
import does not load; and AG-UI's `RunAgentInput`."""
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


def named_models() -> dict[str, type[BaseModel]]:
    """Every model a table entry may name, by class name (defined in `MODEL_MODULES`)."""
    found: dict[str, type[BaseModel]] = {RunAgentInput.__name__: RunAgentInput}
    for module in MODEL_MODULES:
        for name, value in vars(module).items():
            if (isinstance(value, type) and issubclass(value, BaseModel)
                    and value.__module__ == module.__name__):
                if found.setdefault(name, value) is not value:
                    raise TypeError(f"two models are called {name}: name one by its class")
    return found


def _models(given: tuple[Model, ...], named: dict[str, type[BaseModel]],
            ) -> tuple[type[BaseModel], ...]:
    return tuple(named[m] if isinstance(m, str) else m for m in given)


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


def openapi_document(routes: Sequence[ApiRoute]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the route table `routes`."""
    seen = [(route.method, route.path) for route in routes]
    if len(set(seen)) != len(seen):
        raise ValueError("the route table lists a route twice")
    named = named_models()
    resolved = [(route, _models(route.request, named), _models(route.response, named))
                for route in routes]
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = [(ErrorResponse, "serialization")]
    for _, request, response in resolved:
        wanted += [(m, "validation") for m in request]
        wanted += [(m, "serialization") for m in response]
    wanted += [(m, "serialization") for m in RUN_EVENTS.values()]
    refs, defs = models_json_schema(list(dict.fromkeys(wanted)),
                                    ref_template="#/components/schemas/{model}")
    events = {name: refs[(model, "serialization")] for name, model in RUN_EVENTS.items()}
    error = refs[(ErrorResponse, "serialization")]
    paths: dict[str, dict[str, Any]] = {}
    for route, request, response in resolved:
        content: dict[str, Any] = {
            "json": {"application/json": {"schema": _one_of(
                [refs[(m, "serialization")] for m in response]) if response
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
            "operationId": f"{route.method.lower()} {route.doc_path}",
            "security": _security(route.access),
            "responses": responses}
        params = [*route.param_list(), *((IF_NONE_MATCH,) if route.cached else ())]
        if params:
            operation["parameters"] = [p.to_json() for p in params]
        if request:
            schema = _one_of([refs[(m, "validation")] for m in request])
            operation["requestBody"] = {"required": route.body_required,
                                        "content": {"application/json": {"schema": schema}}}
        paths.setdefault(route.doc_path, {})[route.method.lower()] = operation
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
