"""`GET /v1/harness[?version=N]` (admin): what the dashboard's Harness view draws — every
version of the tenant's harness, and one version (the active one by default) as its JSON
document and its flowchart, drawn as SVG on the server from that same JSON
(`harness.diagram.svg`), so the page needs no diagram library and the picture cannot drift
from the logic.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.numbers import parse_number
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import TenantScope

VERSION_MAX = 999_999_999
"""More versions than any tenant saves: a bigger number cannot name one."""


def version_param(raw: str | None) -> int | None:
    if raw is None:
        return None
    return parse_number(raw, "version", "a version number (0, 1, 2, ...)",
                        maximum=VERSION_MAX)


def harness_view(principal: Principal, version: int | None) -> dict[str, Any]:
    """`{versions, version, active, doc, svg}` of the principal's tenant."""
    from opsgraph.harness import diagram, versions  # heavy: opsgraph.harness (cold start)

    scope = TenantScope.of(principal)
    shown = versions.get(scope, version)  # NotFound for a version that does not exist
    doc = versions.load(scope, int(shown["version"]))
    listed = versions.list_versions(scope)
    return {"versions": listed, "version": shown["version"],
            "active": next(v["version"] for v in listed if v["active"]),
            "doc": shown["doc"], "svg": diagram.svg(doc)}


async def get_harness(request: Request) -> Response:
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action="reading the harness")
    version = version_param(request.query_params.get("version"))
    return JSONResponse(await run_in_threadpool(harness_view, principal, version))


ROUTES = (
    ApiRoute("GET", "/v1/harness", get_harness,
             "The tenant's harness versions, and one (the active one by default) as JSON and "
             "as an SVG flowchart (admin)", "bearer", response=("HarnessView",),
             errors=(400, 403), params=(
                 Param("version", "query", {"type": "string", "pattern": "^[0-9]{1,9}$"},
                       "The version to show (0: the built-in harness)."),)),
)
