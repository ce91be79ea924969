"""The knowledge base's admin routes (admin role; opsgraph.knowledge.admin does the work).

    GET    /v1/knowledge/documents          {knowledge_version, documents: [summary]}
    PUT    /v1/knowledge/documents/{slug}   {title?, body, kind?} → the document's summary,
                                            `created` and the new knowledge version
    DELETE /v1/knowledge/documents/{slug}   {slug, removed, knowledge_version}

Bad input (an empty or binary body, a body over 1 MiB, a bad slug or kind) is refused
before anything is written; every change bumps the tenant's knowledge version.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.db import db
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.request_models import KnowledgeDocumentRequest
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.knowledge import admin
from opsgraph.principal import Principal, Role

ACTION = "managing the knowledge base"


async def _admin(request: Request) -> Principal:
    principal = await caller(request)
    require_roles(principal, Role.ADMIN, action=ACTION)
    return principal


async def list_documents(request: Request) -> Response:
    principal = await _admin(request)
    return JSONResponse(await run_in_threadpool(admin.list_documents, db(),
                                                principal.tenant_id))


async def put_document(request: Request) -> Response:
    principal = await _admin(request)
    body = parse_body(await request.body(), KnowledgeDocumentRequest)
    result = await run_in_threadpool(
        lambda: admin.put_document(db(), principal.tenant_id, request.path_params["slug"],
                                   body.body, kind=body.kind, title=body.title))
    return JSONResponse(result)


async def delete_document(request: Request) -> Response:
    principal = await _admin(request)
    return JSONResponse(await run_in_threadpool(admin.remove_document, db(),
                                                principal.tenant_id,
                                                request.path_params["slug"]))


SLUG = Param("slug", "path", {"type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$",
                              "maxLength": 120},
             "The document's slug: lowercase words joined by `-`.")
ROUTES = (
    ApiRoute("GET", "/v1/knowledge/documents", list_documents,
             "The tenant's knowledge documents and knowledge version (admin)", "bearer",
             response=("KnowledgeDocuments",), errors=(403,)),
    ApiRoute("PUT", "/v1/knowledge/documents/{slug}", put_document,
             "Add or replace a knowledge document (admin); bumps the knowledge version",
             "bearer", response=("KnowledgeDocumentWritten",),
             request=(KnowledgeDocumentRequest,), errors=(400, 403), params=(SLUG,)),
    ApiRoute("DELETE", "/v1/knowledge/documents/{slug}", delete_document,
             "Remove a knowledge document (admin); bumps the knowledge version", "bearer",
             response=("KnowledgeDocumentRemoved",), errors=(400, 403), params=(SLUG,)),
)
