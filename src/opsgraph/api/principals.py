"""Who is calling an HTTP route: a bearer token, or an anonymous visitor."""

from __future__ import annotations

import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from opsgraph.auth import verify_token
from opsgraph.errors import BadInput, Forbidden, Unauthorized
from opsgraph.principal import Channel, Principal, Role
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope

TENANT_HEADER = "x-opsgraph-tenant"
API_KEY_HEADER = "x-api-key"
TENANT_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
VISITOR_HEADER = "x-opsgraph-visitor"
VISITOR_SESSION = re.compile(r"[A-Za-z0-9_-]{22,128}")


def principal_of(request: Request) -> Principal:
    """The caller: `Authorization: Bearer <token>`, or the same token as `X-Api-Key` (what
    langgraph-sdk and the LangChain UIs send); neither → a visitor.

    A visitor's tenant comes from the `X-Opsgraph-Tenant` header, else
    `OPSGRAPH_DEFAULT_TENANT` (default `demo`). A visitor that sends `X-Opsgraph-Visitor`
    (a random secret of its own, kept for its session: the dashboard makes one per tab)
    is a user of that session alone, so its threads are its own; without it a visitor is
    the shared `anonymous` user, who starts threads but continues none.
    """
    header = request.headers.get("authorization")
    if not header and (api_key := request.headers.get(API_KEY_HEADER, "").strip()):
        return verify_token(api_key)
    if not header:
        tenant = (request.headers.get(TENANT_HEADER) or get_settings().default_tenant).strip()
        if not TENANT_ID.fullmatch(tenant):
            raise BadInput(f"{TENANT_HEADER}: 1 to 64 letters, digits, '_', '.' or '-'")
        session = request.headers.get(VISITOR_HEADER)
        if session is not None and not VISITOR_SESSION.fullmatch(session):
            raise BadInput("X-Opsgraph-Visitor: 22 to 128 letters, digits, '_' or '-' (a "
                           "random secret of the visitor's session)")
        return Principal.visitor(tenant, Channel.API, session)
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization header must be 'Bearer <token>'")
    return verify_token(token)


def tenant_exists(principal: Principal) -> None:
    """NotFound unless the caller's tenant exists (a signed token may outlive its tenant)."""
    TenantScope.of(principal).require_tenant()


async def caller(request: Request) -> Principal:
    """The caller, whose tenant exists: every route but keep-warm and `/health` starts here,
    so an unknown tenant is 404 everywhere, before anything reads or writes."""
    principal = principal_of(request)
    await run_in_threadpool(tenant_exists, principal)
    return principal


def require_roles(principal: Principal, *roles: Role, action: str) -> None:
    """Forbidden unless the caller holds one of `roles`."""
    if not (principal.roles & set(roles)):
        need = " or ".join(r.value for r in roles)
        raise Forbidden(f"{action} needs the {need} role")


async def admin_caller(request: Request, action: str) -> Principal:
    """The caller, when an admin (Forbidden naming `action` otherwise)."""
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action=action)
    return principal
