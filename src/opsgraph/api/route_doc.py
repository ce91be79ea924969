"""The one route table's entry (`ApiRoute`, its `Param`s): method, path, handler, who may
call it, its request and response models, its parameters and its words. The app serves
each entry as a Starlette route (`ApiRoute.served`) and `GET /openapi.json` describes the
same entries (`api.openapi`), so a route is written once, in the module that handles it.

A leaf beside the handlers: every module that owns routes imports it at the top. Importing
the table stays light: a model whose module the app does not load otherwise (the response
models, `ag_ui`) is named by its class name, and parameters that read such a module are
given as a function; both are resolved when the document is built.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from opsgraph.api.principals import TENANT_HEADER, TENANT_ID

Method = Literal["GET", "POST", "PUT", "DELETE"]
Handler = Callable[[Request], Awaitable[Response]]
Access = Literal["open", "visitor", "bearer"]
"""open: no token is read; visitor: a token is optional (none → a visitor of the tenant
header); bearer: a token is required (a visitor is refused by role)."""
Body = Literal["json", "sse", "html", "asset", "parts"]
"""parts: the Agent Protocol's server-sent stream parts (`api.agent_protocol.stream`)."""
Model = type[BaseModel] | str
"""A request or response model: the class, or the name of a class in one of the model
modules `api.openapi.MODEL_MODULES` lists (modules the app's import does not load)."""


@dataclass(frozen=True, slots=True)
class Param:
    """A path, query or header parameter and its JSON schema."""

    name: str
    where: Literal["path", "query", "header"]
    schema: dict[str, Any]
    description: str
    required: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "in": self.where, "schema": self.schema,
                "description": self.description, "required": self.required or
                self.where == "path"}


TENANT = Param(TENANT_HEADER, "header", {"type": "string", "pattern": f"^{TENANT_ID.pattern}$"},
               "A visitor's tenant (no token); default `OPSGRAPH_DEFAULT_TENANT`.")


@dataclass(frozen=True, slots=True)
class ApiRoute:
    """One route of the app: what serves it and how the document describes it."""

    method: Method
    path: str
    """Starlette's path (`/static/{path:path}`); the document's drops the converter."""
    handler: Handler
    summary: str
    access: Access
    ok: int = 200
    body: Body = "json"
    response: tuple[Model, ...] = ()
    request: tuple[Model, ...] = ()
    body_required: bool = True
    errors: tuple[int, ...] = ()
    params: tuple[Param, ...] | Callable[[], tuple[Param, ...]] = ()
    """The parameters, or (when they read a module the app does not load) a function of
    them, called when the document is built."""
    cached: bool = False
    """Served with an ETag: `If-None-Match` with it answers 304 and no body."""
    streams: bool = False
    """With `Accept: text/event-stream` it answers 200 with the run's events instead."""

    @property
    def doc_path(self) -> str:
        """The path in OpenAPI's templating: Starlette's `{path:path}` is `{path}`."""
        return re.sub(r"\{(\w+):\w+\}", r"{\1}", self.path)

    def param_list(self) -> tuple[Param, ...]:
        return self.params() if callable(self.params) else self.params

    def served(self) -> Route:
        """The Starlette route that serves it."""
        return Route(self.path, self.handler, methods=[self.method])

    def error_statuses(self) -> list[int]:
        """Every error status the route can answer."""
        found = set(self.errors)
        if self.access != "open":
            found |= {401, 404}  # a bad token; a tenant that does not exist
        if self.access == "visitor":
            found.add(400)  # a malformed tenant header
        if self.request:
            found |= {400, 413, 422}
        return sorted(found)
