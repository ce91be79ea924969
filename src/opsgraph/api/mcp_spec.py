"""What the MCP 2025-06-18 specification asks of opsgraph's links beyond tools and calls:
tool annotations from each tool's kind, output schemas of the structured results, and
how an unauthenticated client learns where a token comes from.

Annotations: a read operation (and every admin tool that only reads) is `readOnlyHint`,
idempotent, closed-world; `ask` only proposes changes (they wait for a manager), so it is
neither read-only nor destructive; an admin tool that replaces tenant state is destructive.
A 401 carries `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728), and
`/.well-known/oauth-protected-resource[/mcp/user|/mcp/admin]` names the link, the issuer of
its tokens (opsgraph itself: `opsgraph token`, or the dashboard's sign-in — there is no
OAuth authorization flow) and how to send one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph import __version__
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.errors import NotFound

if TYPE_CHECKING:
    from mcp_types import ToolAnnotations

METADATA_PATH = "/.well-known/oauth-protected-resource"
TOKEN_HELP = ("opsgraph signs its own bearer tokens: `opsgraph token --tenant T --user U "
              "--role R` prints one (the dashboard's sign-in gives one too). Send it as "
              "`Authorization: Bearer <token>`; there is no OAuth authorization flow.")


@dataclass(frozen=True, slots=True)
class Writes:
    """How an admin tool changes tenant state (its annotations; a read-only caller is
    refused it)."""

    destructive: bool
    idempotent: bool


TOOL_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["ok"], "properties": {
        "ok": {"type": "boolean", "description": "false: `error` says why"},
        "data": {"description": "the operation's result, as the agents' tools return it"},
        "error": {"description": "what was wrong, in the words a chat agent gets"}}}

ASK_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["thread_id", "status", "answer", "sources",
                                   "pending_changes"],
    "properties": {
        "thread_id": {"type": ["string", "null"]},
        "status": {"type": ["string", "null"], "enum": [
            "completed", "completed_with_errors", "awaiting_approval", "cancelled", "failed",
            None]},
        "answer": {"type": ["string", "null"]},
        "sources": {"type": "array", "items": {"type": "object"}},
        "pending_changes": {"type": "array", "items": {
            "type": "object", "required": ["change_id", "operation", "summary"],
            "properties": {"change_id": {"type": "string"}, "operation": {"type": "string"},
                           "summary": {"type": "string"}}}},
        "error": {"type": "object", "properties": {"code": {"type": "string"},
                                                    "message": {"type": "string"}}}}}


def read_hints() -> ToolAnnotations:
    """A tool that only reads the tenant's records."""
    import mcp_types as types  # heavy: mcp_types (cold start)

    return types.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                 idempotent_hint=True, open_world_hint=False)


def ask_hints() -> ToolAnnotations:
    """`ask`: a run that may propose changes, never applies one."""
    import mcp_types as types  # heavy: mcp_types (cold start)

    return types.ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                 idempotent_hint=False, open_world_hint=False)


def admin_hints(writes: Writes | None) -> ToolAnnotations:
    """An admin tool's hints: a read, or a write with its destructive/idempotent kind."""
    import mcp_types as types  # heavy: mcp_types (cold start)

    if writes is None:
        return read_hints()
    return types.ToolAnnotations(read_only_hint=False, destructive_hint=writes.destructive,
                                 idempotent_hint=writes.idempotent, open_world_hint=False)


def server_version() -> str:
    """`serverInfo.version`: the package's version."""
    return __version__


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def www_authenticate(request: Request) -> str:
    """The `WWW-Authenticate` value of a 401 on an MCP link."""
    link = request.url.path.rstrip("/")
    return (f'Bearer resource_metadata="{_base(request)}{METADATA_PATH}{link}", '
            'error="invalid_token"')


async def protected_resource(request: Request) -> Response:
    """RFC 9728 metadata of an MCP link (`/mcp/user` when the path names none)."""
    link = str(request.path_params.get("link") or "mcp/user").strip("/")
    if link not in ("mcp/user", "mcp/admin"):
        raise NotFound(f"no protected resource /{link}: the MCP links are /mcp/user and "
                       "/mcp/admin")
    base = _base(request)
    return JSONResponse({
        "resource": f"{base}/{link}", "authorization_servers": [base],
        "bearer_methods_supported": ["header"],
        "resource_name": f"opsgraph MCP ({link.rsplit('/', 1)[-1]} link)",
        "resource_documentation": f"{base}/openapi.json",
        "token_instructions": TOKEN_HELP})


ROUTES = (
    ApiRoute("GET", METADATA_PATH, protected_resource, "MCP: the user link's "
             "protected-resource metadata (RFC 9728): how to get and send a token", "open",
             response=("ResourceMetadata",)),
    ApiRoute("GET", METADATA_PATH + "/{link:path}", protected_resource, "MCP: a link's "
             "protected-resource metadata (`mcp/user`, `mcp/admin`)", "open", errors=(404,),
             response=("ResourceMetadata",), params=(
                 Param("link", "path", {"type": "string", "enum": ["mcp/user", "mcp/admin"]},
                       "The MCP link."),)),
)
