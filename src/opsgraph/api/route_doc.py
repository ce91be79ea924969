"""How `GET /openapi.json` describes a route (`ApiRoute`, its `Param`s): the vocabulary
every module that serves routes uses for its own, and `api.openapi` assembles. A leaf, so
that those modules import it at the top and `api.openapi` imports them without a cycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

Access = Literal["open", "visitor", "bearer"]
"""open: no token is read; visitor: a token is optional (none → a visitor of the tenant
header); bearer: a token is required (a visitor is refused by role)."""
Body = Literal["json", "sse", "html", "asset", "parts"]
"""parts: the Agent Protocol's server-sent stream parts (`api.agent_protocol.stream`)."""


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


@dataclass(frozen=True, slots=True)
class ApiRoute:
    """One route of the app, as the document describes it."""

    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    summary: str
    access: Access
    ok: int = 200
    body: Body = "json"
    response: tuple[type[BaseModel], ...] = ()
    request: tuple[type[BaseModel], ...] = ()
    body_required: bool = True
    errors: tuple[int, ...] = ()
    params: tuple[Param, ...] = ()
    cached: bool = False
    """Served with an ETag: `If-None-Match` with it answers 304 and no body."""
    streams: bool = False
    """With `Accept: text/event-stream` it answers 200 with the run's events instead."""

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
