"""`GET /v1/approvals/history`: changes that ended, newest first, filtered and paged
(managers, admins; `approvals.decided` reads them)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from opsgraph.api.principals import caller, require_roles
from opsgraph.principal import Role
from opsgraph.store.scope import TenantScope


async def change_history(request: Request) -> Response:
    from opsgraph.approvals.decided import decided_changes, parse_query

    principal = await caller(request)
    require_roles(principal, Role.MANAGER, Role.ADMIN, action="reading the approvals history")
    query = parse_query(dict(request.query_params))
    return JSONResponse(await run_in_threadpool(decided_changes, TenantScope.of(principal),
                                                query))


ROUTES = [Route("/v1/approvals/history", change_history, methods=["GET"])]
