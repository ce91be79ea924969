"""Who the caller is, as the dashboard's header shows them: `GET /v1/me` →
`{tenant_id, user_id, name, roles}`.

A token names a user id; the person's name is the staff or member record with that id
(`approvals.pending.display_name`, as deciders are named), else the id itself. A visitor is
`Visitor`.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.principals import caller
from opsgraph.api.route_doc import TENANT, ApiRoute
from opsgraph.principal import Principal
from opsgraph.store.people import display_name
from opsgraph.store.scope import TenantScope

VISITOR_NAME = "Visitor"


def me_body(principal: Principal) -> dict[str, Any]:
    """The caller's tenant, user id, name and roles."""
    name = (VISITOR_NAME if principal.is_visitor
            else display_name(TenantScope.of(principal), principal.user_id))
    return {"tenant_id": principal.tenant_id, "user_id": principal.user_id, "name": name,
            "roles": sorted(r.value for r in principal.roles)}


async def me(request: Request) -> Response:
    principal = await caller(request)
    return JSONResponse(await run_in_threadpool(me_body, principal))


ROUTES = (
    ApiRoute("GET", "/v1/me", me, "Who the caller is: tenant, user id, name and roles",
             "visitor", response=("Me",), params=(TENANT,)),
)
