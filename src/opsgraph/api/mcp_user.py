"""MCP for external agents at `/mcp/user` (streamable HTTP, the official `mcp` SDK).

Who calls: the same bearer tokens as the HTTP API (no token → a visitor of the default
tenant); the principal's channel becomes `mcp` (an `email` token stays read-only). A bad
token is 401 with opsgraph's JSON error body, before any MCP message is read.

Tools: every read operation the caller may use (`gates.operation_decision`), bound by
`tools.binding.bind_agent_tools` exactly as an agent's tools are: the same names
(`members.search` → `members_search`), the same input schemas (`BoundTool.schema()`) and
the same guarded function (`tools.guard`), whose outcome comes back as the text the agent's
model reads (`ToolOutcome.for_model`) and as structured content `{ok, data|error}`. A call
of a tool the caller was not offered goes through the same guard, so it is refused with
the words a chat agent gets. Plus `ask`: one supervisor run (`engine.runner.stream_run`),
answered with its text, sources and pending changes (writes wait for a manager).

Stateless: each HTTP request gets its own session manager, run for that request only, so
nothing needs the app's lifespan (mangum runs without one) and the SDK is imported on the
first MCP request, not when the app is.
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from opsgraph.api import mcp_spec
from opsgraph.api.error_responses import error_body, error_response
from opsgraph.api.mcp_spec import server_version, www_authenticate
from opsgraph.api.principals import principal_of, tenant_exists
from opsgraph.api.request_models import RunRequest
from opsgraph.api.runs import start_run
from opsgraph.errors import BadInput, MethodNotAllowed, OpsgraphError
from opsgraph.gates import operation_decision
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import CATALOGUE, get_operation
from opsgraph.operations.invoke import plan_of
from opsgraph.principal import Channel, Principal
from opsgraph.store.scope import TenantScope
from opsgraph.tools.binding import bind_agent_tools
from opsgraph.tools.contract import BoundTool

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        ListToolsResult,
        PaginatedRequestParams,
        Tool,
    )


PRINCIPAL_KEY = "opsgraph.principal"
"""Where the authenticated caller rides in the ASGI scope to the MCP handlers."""

ASK = "ask"
ASK_DESCRIPTION = (
    "Ask the operations assistant in plain words: one supervisor run over the agents you "
    "may use. Returns the answer, its sources, and any pending changes with their ids "
    "(writes are never applied here: they wait for a manager's decision).")


def ask_schema() -> dict[str, Any]:
    """The input schema of `ask`: `POST /v1/runs`'s body (the message, and a thread to
    continue), from the same model."""
    return RunRequest.model_json_schema()


def mcp_principal(principal: Principal) -> Principal:
    """The caller as seen over MCP: channel `mcp`, unless the token is read-only email."""
    if principal.channel is Channel.EMAIL:
        return principal
    return dataclasses.replace(principal, channel=Channel.MCP)


def user_tools(principal: Principal) -> dict[str, BoundTool]:
    """The caller's MCP tools but `ask`: the read operations the gates let them call, bound
    by the agents' own binding (knowledge tools only with a non-empty knowledge base)."""

    ctx = Context(TenantScope.of(principal), principal)
    plan = plan_of(ctx.scope)
    reads = [op.id for op in CATALOGUE.values()
             if op.kind == "read" and operation_decision(principal, op, plan)]
    return bind_agent_tools(ctx, reads, plan)


def call_user_tool(principal: Principal, name: str, args: dict[str, Any]) -> tuple[bool, str, Any]:
    """(ok, the agent's tool message, `{ok, data|error}`) of one call of tool `name`.

    A read the caller was not offered still goes through the agents' guard, which refuses
    it as it would in chat; a write operation is not an MCP tool (ask for it instead)."""

    tool = user_tools(principal).get(name)
    if tool is None:
        op = get_operation(name)  # NotFound naming the known operations
        if op.kind != "read":
            raise BadInput(f"{name} changes records: it is not an MCP tool; use '{ASK}' to "
                           "propose the change for a manager to approve")
        ctx = Context(TenantScope.of(principal), principal)
        tool = bind_agent_tools(ctx, [op.id], plan_of(ctx.scope)).get(op.tool_name)
        if tool is None:
            raise BadInput(f"{name}: the knowledge base is empty")
    outcome = tool.call(args)
    body = {"ok": outcome.ok, "data" if outcome.ok else "error": outcome.content}
    return outcome.ok, outcome.for_model(), json.loads(json.dumps(body, default=str))


def ask(principal: Principal, message: str, thread_id: str | None) -> dict[str, Any]:
    """One supervisor run, admitted as `POST /v1/runs` admits one (`api.runs.start_run`),
    read to its end: `{thread_id, status, answer, sources, pending_changes, error?}`."""
    events = start_run(principal, message, thread_id)
    out: dict[str, Any] = {"thread_id": thread_id, "status": None, "answer": None,
                           "sources": [], "pending_changes": []}
    for event in events:
        data = event.data
        if event.event == "run_started":
            out["thread_id"] = data["thread_id"]
        elif event.event == "answer":
            out["answer"], out["sources"] = data.get("text"), data.get("sources") or []
        elif event.event == "approval_required":
            out["pending_changes"] = data.get("changes") or []
        elif event.event == "error":
            out["error"] = {"code": data.get("code"), "message": data.get("message")}
        elif event.event == "run_finished":
            out["status"] = data.get("status")
    result: dict[str, Any] = json.loads(json.dumps(out, default=str))
    return result


async def list_user_tools(principal: Principal) -> list[Tool]:
    """What the user link lists for `principal`: their read tools and `ask`."""
    # heavy: mcp_types (cold start)
    import mcp_types as types

    tools = await run_in_threadpool(user_tools, principal)
    listed = [types.Tool(name=name, description=tool.description,
                         input_schema=tool.schema()["parameters"],
                         output_schema=mcp_spec.TOOL_RESULT_SCHEMA,
                         annotations=mcp_spec.read_hints())
              for name, tool in tools.items()]
    listed.append(types.Tool(name=ASK, description=ASK_DESCRIPTION, input_schema=ask_schema(),
                             output_schema=mcp_spec.ASK_RESULT_SCHEMA,
                             annotations=mcp_spec.ask_hints()))
    return listed


def error_result(exc: OpsgraphError) -> CallToolResult:
    """An opsgraph error as an MCP tool error: its message, and `{error: {code, message}}`."""
    # heavy: mcp_types (cold start)
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(text=exc.message)],
                                structured_content=exc.to_json(), is_error=True)


async def call_user_link_tool(principal: Principal, name: str, args: dict[str, Any],
                              ) -> CallToolResult:
    """One call of a user link tool (`ask` or a read), errors as MCP tool errors."""
    # heavy: mcp_types (cold start)
    import mcp_types as types

    try:
        if name == ASK:
            message, thread_id = args.get("message"), args.get("thread_id")
            if not isinstance(message, str) or not message.strip():
                raise BadInput("message: a non-empty string is required")
            if thread_id is not None and not isinstance(thread_id, str):
                raise BadInput("thread_id: must be a string")
            out = await run_in_threadpool(ask, principal, message, thread_id)
            failed = out["status"] == "failed"
            return types.CallToolResult(
                content=[types.TextContent(text=json.dumps(out, ensure_ascii=False))],
                structured_content=out, is_error=failed)
        ok, text, body = await run_in_threadpool(call_user_tool, principal, name, args)
        return types.CallToolResult(content=[types.TextContent(text=text)],
                                    structured_content=body, is_error=not ok)
    except OpsgraphError as exc:
        return error_result(exc)


def request_principal(ctx: ServerRequestContext[Any, Any]) -> Principal:
    """The authenticated caller of an MCP request (put in the ASGI scope by the link)."""
    request = ctx.request
    principal = getattr(request, "scope", {}).get(PRINCIPAL_KEY)
    if not isinstance(principal, Principal):  # only reached through `McpUser`
        raise RuntimeError("MCP request without an authenticated caller")
    return principal


@lru_cache(maxsize=1)
def mcp_server() -> Server[Any]:
    """The low-level MCP server: tools listed and called per caller."""
    # heavy: mcp_types (cold start)
    import mcp_types as types

    # heavy: mcp (cold start)
    from mcp.server import Server

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: PaginatedRequestParams | None) -> ListToolsResult:
        return types.ListToolsResult(tools=await list_user_tools(request_principal(ctx)))

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: CallToolRequestParams) -> CallToolResult:
        return await call_user_link_tool(request_principal(ctx), params.name,
                                         dict(params.arguments or {}))

    return Server("opsgraph-user", version=server_version(), instructions=(
        "opsgraph: the read operations and knowledge tools your role may use, and 'ask' "
        "for anything in plain words. Changes are proposed for a manager, never applied."),
        on_list_tools=list_tools, on_call_tool=call_tool)


class McpUser:
    """The ASGI app mounted at `/mcp/user`: authenticate, then hand the request to a
    stateless session manager of its own."""

    def admit(self, principal: Principal) -> None:
        """Refuse a caller this link is not for (anyone authenticated may use this one)."""

    def server(self) -> Server[Any]:
        return mcp_server()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan and websockets are not ours to serve
            return
        if scope["method"] != "POST":
            await no_stream_here(scope, receive, send)
            return
        try:
            principal = mcp_principal(principal_of(Request(scope)))
            self.admit(principal)
            await run_in_threadpool(tenant_exists, principal)
            body = await read_body(receive)
        except OpsgraphError as exc:
            response = error_response(exc)
            if exc.status == 401:  # MCP 2025-06-18: where to learn how to get a token

                response.headers["WWW-Authenticate"] = www_authenticate(Request(scope))
            await response(scope, receive, send)
            return
        # heavy: mcp (cold start)
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(self.server(), stateless=True,
                                               json_response=True)
        async with manager.run():
            await manager.handle_request({**scope, PRINCIPAL_KEY: principal},
                                         replay(body, receive), send)


async def no_stream_here(scope: Scope, receive: Receive, send: Send) -> None:
    """405 for GET (and DELETE): a stateless link has no server-to-client stream to open
    and no session to end, and the MCP streamable-HTTP transport (2025-06-18) says a
    server without a GET stream answers 405 — an open GET would only hang."""

    exc = MethodNotAllowed(f"{scope['method']} is not served here: this MCP link is "
                           "stateless and offers no server-to-client stream; POST each "
                           "JSON-RPC message")
    await JSONResponse(error_body(exc), status_code=exc.status,
                       headers={"Allow": "POST"})(scope, receive, send)


async def read_body(receive: Receive) -> bytes:
    """The whole request body. `BodyCap` raises its 413 from `receive`; read here, before
    the SDK's task group would wrap it, it reaches the client in our error shape."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands over `body` once, then waits on the real one (for the
    client's disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
