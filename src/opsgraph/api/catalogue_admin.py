"""The catalogue's admin routes (admin role; opsgraph.operations.catalogue_admin does the
work):

    GET    /v1/catalogue[?type=T]   {types, objects: [object]}
    PUT    /v1/catalogue/{key}      {object: {type, name, ...}, if_version?} → {object,
                                    created, change_id, knowledge_version}
    DELETE /v1/catalogue/{key}      {key, removed, change_id, knowledge_version}

A wrong field is a 400 naming it (`detail.errors` lists each); `if_version` that is no
longer the stored one is a 409; every change is audited.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.db import db
from opsgraph.api.principals import admin_caller
from opsgraph.api.request_models import Body
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.errors import BadInput
from opsgraph.knowledge.catalogue import TYPES
from opsgraph.operations import catalogue_admin

ACTION = "managing the catalogue"
KEY_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


class CatalogueObjectRequest(Body):
    """`PUT /v1/catalogue/{key}`: the object's fields (admin)."""

    object: dict[str, Any] = Field(description="The object's `type` (resource, class, event, "
                                               "plan, product, price_list) and its fields.")
    if_version: int | None = Field(None, ge=0, description="The version you read (0: it must "
                                                           "be new); 409 if it moved since.")



def _key(request: Request) -> str:
    key = str(request.path_params["key"])
    if not re.match(KEY_PATTERN, key) or len(key) > 80:
        raise BadInput(f"key: {key[:80]!r} is not a catalogue key (lowercase letters and "
                       "digits joined by '-', at most 80 characters)", field="key")
    return key


async def list_objects(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    return JSONResponse(await run_in_threadpool(catalogue_admin.list_objects, db(),
                                                principal.tenant_id,
                                                request.query_params.get("type")))


async def put_object(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    key = _key(request)
    body = parse_body(await request.body(), CatalogueObjectRequest)
    return JSONResponse(await run_in_threadpool(
        lambda: catalogue_admin.put_object(db(), principal.tenant_id, key, body.object,
                                           actor=principal.user_id,
                                           if_version=body.if_version)))


async def delete_object(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    key = _key(request)
    return JSONResponse(await run_in_threadpool(
        lambda: catalogue_admin.remove_object(db(), principal.tenant_id, key,
                                              actor=principal.user_id)))


def _type_params() -> tuple[Param, ...]:
    return (Param("type", "query", {"type": "string", "enum": list(TYPES)},
                  "Only objects of this type."),)


KEY = Param("key", "path", {"type": "string", "pattern": KEY_PATTERN, "maxLength": 80},
            "The object's key: lowercase words joined by `-` (`court-1`).")
ROUTES = (
    ApiRoute("GET", "/v1/catalogue", list_objects, "The tenant's catalogue objects (admin)",
             "bearer", errors=(400, 403), params=_type_params),
    ApiRoute("PUT", "/v1/catalogue/{key}", put_object, "Add or replace a catalogue object "
             "(admin; audited, bumps the knowledge version)", "bearer",
             request=(CatalogueObjectRequest,), errors=(400, 403, 409), params=(KEY,)),
    ApiRoute("DELETE", "/v1/catalogue/{key}", delete_object, "Remove a catalogue object "
             "(admin; audited, bumps the knowledge version)", "bearer", errors=(400, 403),
             params=(KEY,)),
)
