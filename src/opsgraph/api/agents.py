"""The agents and their models: `GET /v1/agents` (the agents the caller may use) and
`GET`/`PUT /v1/tenant/models` (the tenant's model per agent, admin)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_json_object, validated
from opsgraph.api.catalog import agents_for
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.request_models import BareTenantModels, TenantModelsRequest
from opsgraph.api.route_doc import TENANT, ApiRoute
from opsgraph.models.overrides import model_settings, set_overrides
from opsgraph.principal import Role
from opsgraph.registry.loader import get_registry
from opsgraph.store.scope import TenantScope


async def agents(request: Request) -> Response:
    principal = await caller(request)
    return JSONResponse({"agents": await run_in_threadpool(agents_for, principal)})


async def tenant_models(request: Request) -> Response:
    """GET and PUT answer `{"models": {agent: spec}, "allowed": [...]}`; PUT takes
    `{"models": {agent: spec}}`, or the bare `{agent: spec}`, and replaces every override."""
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action="managing model overrides")
    scope = TenantScope.of(principal)
    if request.method == "PUT":
        body = parse_json_object(await request.body())
        chosen = validated(body if "models" in body else {"models": body}, TenantModelsRequest)
        known = set(get_registry().agents)
        await run_in_threadpool(set_overrides, scope, chosen.models, known, principal.user_id)
    return JSONResponse(await run_in_threadpool(model_settings, scope))


ROUTES = (
    ApiRoute("GET", "/v1/agents", agents, "The agents the caller may use", "visitor",
             response=("Agents",), params=(TENANT,)),
    ApiRoute("GET", "/v1/tenant/models", tenant_models,
             "The tenant's model per agent, and the models it may choose (admin)", "bearer",
             response=("TenantModels",), errors=(403,)),
    ApiRoute("PUT", "/v1/tenant/models", tenant_models,
             "Replace the tenant's model per agent (admin); answers as GET does", "bearer",
             response=("TenantModels",), request=(TenantModelsRequest, BareTenantModels),
             body_required=False, errors=(403,)),
)
