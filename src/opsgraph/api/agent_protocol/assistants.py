"""Assistants and `/info`: what langgraph-sdk, Agent Chat UI and Agent Inbox ask first.

A tenant has one assistant, `opsgraph`: its active harness (the built-in supervisor when it
has none), at the version that is active now. There is nothing to create or configure
through the protocol: a tenant's flow is edited as its harness (`/v1/harness`, the CLI).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph import __version__
from opsgraph.api.agent_protocol.bodies import AssistantSearch, read_body
from opsgraph.api.agent_protocol.views import GRAPH_ID, iso
from opsgraph.api.principals import caller
from opsgraph.errors import NotFound
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope


def known_assistant(assistant_id: str) -> bool:
    """True for the one assistant id (or graph id) opsgraph serves."""
    return assistant_id == GRAPH_ID


def require_assistant(assistant_id: str) -> None:
    """NotFound naming the assistant to use, for any other id."""
    if not known_assistant(assistant_id):
        raise NotFound(f"assistant {assistant_id!r} not found: opsgraph serves one "
                       f"assistant, {GRAPH_ID!r} (the tenant's active flow)",
                       assistant_id=assistant_id)


def assistant_of(principal: Principal) -> dict[str, Any]:
    """The tenant's assistant: its active harness version, as an `Assistant`."""
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    scope = TenantScope.of(principal)
    tenant = scope.require_tenant()
    current = versions.get(scope)
    built_in = current["version"] == 0
    name = str(tenant.get("name") or scope.tenant_id)
    return {"assistant_id": GRAPH_ID, "graph_id": GRAPH_ID, "name": name,
            "description": ("the built-in supervisor: plans the request, runs the agents, "
                            "every change waits for a manager" if built_in else
                            f"{name}'s harness, version {current['version']}"),
            "config": {}, "context": {}, "version": max(1, int(current["version"])),
            "metadata": {"harness_version": current["version"], "built_in": built_in},
            "created_at": iso(current.get("created_at") or tenant.get("created_at")),
            "updated_at": iso(current.get("created_at") or tenant.get("created_at"))}


async def assistants_search(request: Request) -> Response:
    principal = await caller(request)
    body = read_body(await request.body(), AssistantSearch)
    found = [await run_in_threadpool(assistant_of, principal)]
    if body.graph_id is not None and not known_assistant(body.graph_id):
        found = []
    return JSONResponse(found[body.offset:body.offset + body.limit])


async def assistant_get(request: Request) -> Response:
    principal = await caller(request)
    require_assistant(str(request.path_params["assistant_id"]))
    return JSONResponse(await run_in_threadpool(assistant_of, principal))


async def server_info(request: Request) -> Response:
    """What the LangChain clients check before they connect: a version and the features."""
    return JSONResponse({"version": __version__, "server": "opsgraph",
                         "flags": {"assistants": True, "crons": False, "langsmith": False,
                                   "langsmith_tracing_replicas": False}})
