"""The routes of a first run: which model answers, local sign-in, the tenant's settings.

    GET  /v1/info             (open) the model and why; demo mode's examples; local sign-in
    POST /v1/local/sign-in    {user_id, role} → {token}; a local server only, else 404
    GET  /v1/tenant/settings  (admin) {capability_mode, off_topic_reply, modules,
                              harness_agent_may_force, separation_of_duties, currency}
    PUT  /v1/tenant/settings  (admin) {capability_mode: observe|enforce, off_topic_reply?,
                              modules?, harness_agent_may_force?, separation_of_duties?,
                              currency?} → the same

A server is *local* when it signs tokens with the secret generated in `OPSGRAPH_HOME` (no
`OPSGRAPH_TOKEN_SECRET`, no secret ARN) and does not run on Lambda; then a caller on this
machine (loopback) may sign in as one of the demo tenant's people, as on the machine's own
command line (`opsgraph token`).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.db import db
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.request_models import LocalSignInRequest, TenantSettingsRequest
from opsgraph.api.route_doc import ApiRoute
from opsgraph.approvals.duties import SETTING, check_operations, covered_operations
from opsgraph.auth import issue_token
from opsgraph.errors import NotFound, Unprocessable
from opsgraph.harness.modules import SETTING as MODULES
from opsgraph.harness.modules import check_names, shipped
from opsgraph.models.auto import model_choice
from opsgraph.models.demo import example_requests
from opsgraph.models.spec import shown
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.operations.currency import SYMBOLS, currency_code
from opsgraph.principal import Channel, Principal, Role, parse_role
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope

DEMO_USERS: Final = (("stf_demo_04", "staff", "staff"), ("stf_demo_02", "staff", "manager"),
                     ("stf_demo_01", "staff", "admin"), ("mem_demo_001", "members", "member"))
"""The demo tenant's people the local sign-in offers: (record id, collection, usual role).
A visitor needs no token."""
DEFAULT_CAPABILITY_MODE: Final = "observe"


LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})


def is_local(request: Request) -> bool:
    """Tokens signed with the generated local secret, not on Lambda, and asked from this
    machine: a server bound to 0.0.0.0 without `OPSGRAPH_TOKEN_SECRET` must not hand
    admin tokens to anyone on the network."""
    client = request.client.host if request.client else None
    return (get_settings().token_secret is None
            and not os.environ.get("AWS_LAMBDA_FUNCTION_NAME") and client in LOOPBACK)


def demo_users() -> list[dict[str, str]]:
    """The people of the default tenant the local sign-in offers (those it has)."""
    store, tenant = db(), get_settings().default_tenant
    users = []
    for user_id, collection, role in DEMO_USERS:
        found = store[collection].find_one({"_id": user_id, "tenant_id": tenant}, {"name": 1})
        if found is not None:
            users.append({"user_id": user_id, "name": str(found["name"]), "role": role})
    return users


def info_body(local: bool) -> dict[str, Any]:
    """What `GET /v1/info` answers (`local`: whether this caller may sign in locally)."""
    choice = model_choice()
    return {"mode": choice.mode,
            "model": "scripted examples" if choice.mode == "demo" else shown(choice.model),
            "message": choice.message,
            "examples": example_requests() if choice.mode == "demo" else [],
            "local": local, "demo_users": demo_users() if local else []}


async def info(request: Request) -> Response:
    return JSONResponse(await run_in_threadpool(info_body, is_local(request)))


def _sign_in(user_id: str, role: str) -> str:
    tenant = get_settings().default_tenant
    TenantScope(db(), tenant).require_tenant()
    known = {u["user_id"] for u in demo_users()}
    if user_id not in known:
        message = f"user_id: not one of the demo users ({', '.join(sorted(known)) or 'none'})"
        raise Unprocessable(message, errors=[{"field": "user_id", "message": message}])
    principal = Principal(tenant_id=tenant, user_id=user_id,
                          roles=frozenset({parse_role(role)}), channel=Channel.DASHBOARD)
    return issue_token(principal)


async def local_sign_in(request: Request) -> Response:
    if not is_local(request):
        raise NotFound("local sign-in is only offered by a server run locally with its "
                       "generated token secret, to this machine; ask an admin for a token")
    body = parse_body(await request.body(), LocalSignInRequest)
    token = await run_in_threadpool(_sign_in, body.user_id, body.role)
    return JSONResponse({"token": token})


def read_tenant_settings(tenant_id: str) -> dict[str, Any]:
    """The tenant's settings as `GET /v1/tenant/settings` answers them."""
    doc = db()["tenants"].find_one({"_id": tenant_id}, {
        "capability_mode": 1, "off_topic_reply": 1, MODULES: 1,
        "harness_agent_may_force": 1, SETTING: 1, "currency": 1}) or {}
    return {"capability_mode": str(doc.get("capability_mode") or DEFAULT_CAPABILITY_MODE),
            "off_topic_reply": str(doc.get("off_topic_reply") or ""),
            "modules": [str(name) for name in doc.get(MODULES) or []],
            "harness_agent_may_force": doc.get("harness_agent_may_force") is True,
            SETTING: covered_operations(doc), "currency": currency_code(doc),
            "choices": _choices()}


def _choices() -> dict[str, list[str]]:
    """What the settings page offers: the shipped modules, the write operations, and the
    currencies written with a symbol."""
    return {"modules": list(shipped()),
            "operations": [op.id for op in CATALOGUE.values() if op.kind == "write"],
            "currencies": list(SYMBOLS)}


def set_tenant_settings(principal: Principal, capability_mode: str,
                        off_topic_reply: str | None, modules: list[str] | None,
                        may_force: bool | None,
                        duties: list[str] | None = None, currency: str | None = None,
                        ) -> dict[str, Any]:
    changes: dict[str, Any] = {"capability_mode": capability_mode}
    if off_topic_reply is not None:  # absent: unchanged; "": the generic reply again
        changes["off_topic_reply"] = off_topic_reply.strip()
    if modules is not None:  # absent: unchanged
        changes[MODULES] = check_names(modules)
    if may_force is not None:  # absent: unchanged
        changes["harness_agent_may_force"] = may_force
    if duties is not None:  # absent: unchanged; []: off
        changes[SETTING] = check_operations(duties)
    if currency is not None:  # absent: unchanged
        changes["currency"] = currency.upper()
    db()["tenants"].update_one({"_id": principal.tenant_id}, {"$set": {
        **changes, "settings_updated_at": datetime.now(UTC),
        "settings_updated_by": principal.user_id}})
    return read_tenant_settings(principal.tenant_id)


async def tenant_settings(request: Request) -> Response:
    """GET and PUT answer `{capability_mode, off_topic_reply, modules,
    harness_agent_may_force, separation_of_duties, currency}`; PUT sets them (admin)."""
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action="managing tenant settings")
    if request.method == "PUT":
        body = parse_body(await request.body(), TenantSettingsRequest)
        return JSONResponse(await run_in_threadpool(set_tenant_settings, principal,
                                                    body.capability_mode,
                                                    body.off_topic_reply, body.modules,
                                                    body.harness_agent_may_force,
                                                    body.separation_of_duties,
                                                    body.currency))
    return JSONResponse(await run_in_threadpool(read_tenant_settings, principal.tenant_id))


ROUTES = (
    ApiRoute("GET", "/v1/info", info, "Which model answers and why; demo mode's examples; "
             "whether local sign-in is open", "open", response=("Info",)),
    ApiRoute("POST", "/v1/local/sign-in", local_sign_in,
             "A token for a demo user in a role (a local server only, else 404)", "open",
             response=("SignedIn",), request=(LocalSignInRequest,), errors=(403, 404)),
    ApiRoute("GET", "/v1/tenant/settings", tenant_settings, "The tenant's settings (admin)",
             "bearer", response=("TenantSettings",), errors=(403,)),
    ApiRoute("PUT", "/v1/tenant/settings", tenant_settings,
             "Set the tenant's settings (admin); answers as GET does", "bearer",
             response=("TenantSettings",), request=(TenantSettingsRequest,), errors=(403,)),
)
