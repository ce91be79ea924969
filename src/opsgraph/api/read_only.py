"""The read-only channel on the HTTP routes: one wrapper around every route that writes.

A principal whose channel is read-only (`email`) may read everything its role allows and
change nothing. Rather than an `if` in each handler (which a new route would forget),
`guard_writes` wraps every route of the table that serves a write method (POST, PUT,
PATCH, DELETE) in `refuse_read_only`, which answers 403 `read_only` before the handler
runs. Two routes are left to gates deeper down, because a read-only caller has reads to
do there: `POST /v1/runs` (the run's read-only gate keeps every agent to reads; a
read-only run is what the email channel is for) and `POST /v1/operations/{op_id}`
(`gates.operation_decision` refuses a write operation, and lets a read through).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from opsgraph.api.principals import API_KEY_HEADER, principal_of
from opsgraph.errors import OpsgraphError, ReadOnly

Endpoint = Callable[[Request], Awaitable[Response]]
WRITE_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
GATED_BELOW: Final = frozenset({
    "/v1/runs", "/v1/operations/{op_id}",
    # the Agent Protocol and AG-UI faces: their POST searches only read, and their runs
    # (and the decisions a resume carries) meet the same gates as /v1/runs and
    # /v1/approvals (the run's read-only gate; a read-only decider is refused)
    "/assistants/search", "/threads", "/threads/search", "/threads/{thread_id}/history",
    "/threads/{thread_id}/runs", "/threads/{thread_id}/runs/stream",
    "/threads/{thread_id}/runs/wait", "/ag-ui"})
"""Write-method routes whose read-only check is the engine's or the operation's gate."""


def read_only_error(channel: str, what: str) -> ReadOnly:
    """The 403 a read-only caller gets for `what` (a route or a tool)."""
    return ReadOnly(f"the {channel} channel is read-only: {what} changes the tenant's "
                    "data, so it is refused", channel=channel)


def refuse_read_only(endpoint: Endpoint) -> Endpoint:
    """`endpoint`, answering 403 `read_only` to a read-only caller's write method. A
    request whose token does not verify goes on to the handler, which refuses it as
    every route does (401)."""

    @functools.wraps(endpoint)
    async def guarded(request: Request) -> Response:
        if request.method in WRITE_METHODS and (request.headers.get("authorization")
                                                or request.headers.get(API_KEY_HEADER)):
            try:
                principal = principal_of(request)
            except OpsgraphError:
                return await endpoint(request)
            if principal.read_only:
                raise read_only_error(principal.channel.value,
                                      f"{request.method} {request.url.path}")
        return await endpoint(request)

    return guarded


def guard_writes(routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The route table with every write route but `GATED_BELOW` wrapped."""
    out: list[BaseRoute] = []
    for route in routes:
        if (isinstance(route, Route) and route.methods and route.methods & WRITE_METHODS
                and route.path not in GATED_BELOW):
            route = Route(route.path, refuse_read_only(route.endpoint),
                          methods=sorted(route.methods - {"HEAD"}), name=route.name)
        out.append(route)
    return out
