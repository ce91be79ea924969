"""The reply drafts of inbound email (staff, managers, admins; `jobs.drafts` does the work).

    GET    /v1/drafts[?status=S]           {drafts: [draft], open}
    GET    /v1/drafts/{draft_id}           one draft: the original, the reply, its sources
    PUT    /v1/drafts/{draft_id}           {subject?, body?} → the draft, edited
    POST   /v1/drafts/{draft_id}/send      {subject?, body?} → 202, the draft waiting on its
                                           pending `communications.send_email` change
    DELETE /v1/drafts/{draft_id}           the draft, discarded

A second send or discard (or an edit of a draft sent or discarded) is 409; nothing changes.
"""

from __future__ import annotations

import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.principals import caller, require_roles
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.errors import NotFound
from opsgraph.jobs.drafts import discard_draft as discard
from opsgraph.jobs.drafts import edit_draft as edit
from opsgraph.jobs.drafts import get_draft as one
from opsgraph.jobs.drafts import list_drafts as listed
from opsgraph.jobs.drafts import send_draft as send
from opsgraph.principal import Principal, Role
from opsgraph.status_words import DRAFT_STATES
from opsgraph.store.scope import TenantScope

ACTION = "reviewing email reply drafts"
DRAFT_ID = r"draft_[0-9a-f]{24}"


async def _staff(request: Request) -> Principal:
    principal = await caller(request)
    require_roles(principal, Role.STAFF, Role.MANAGER, Role.ADMIN, action=ACTION)
    return principal


def _draft_id(request: Request) -> str:
    draft_id = str(request.path_params["draft_id"])
    if not re.fullmatch(DRAFT_ID, draft_id):
        raise NotFound(f"draft {draft_id[:80]!r} not found", draft_id=draft_id[:80])
    return draft_id


async def list_drafts(request: Request) -> Response:
    principal = await _staff(request)
    status = request.query_params.get("status") or None
    return JSONResponse(await run_in_threadpool(listed, TenantScope.of(principal), status))


async def get_draft(request: Request) -> Response:
    principal = await _staff(request)
    return JSONResponse(await run_in_threadpool(one, TenantScope.of(principal),
                                                _draft_id(request)))


async def edit_draft(request: Request) -> Response:
    # heavy: opsgraph.api.response_models (cold start)
    from opsgraph.api.inbox_models import DraftEdit

    principal = await _staff(request)
    draft_id = _draft_id(request)
    body = parse_body(await request.body(), DraftEdit)
    return JSONResponse(await run_in_threadpool(
        lambda: edit(principal, draft_id, subject=body.subject, body=body.body)))


async def send_draft(request: Request) -> Response:
    # heavy: opsgraph.api.response_models (cold start)
    from opsgraph.api.inbox_models import DraftEdit

    principal = await _staff(request)
    draft_id = _draft_id(request)
    body = parse_body(await request.body(), DraftEdit)
    sent = await run_in_threadpool(
        lambda: send(principal, draft_id, subject=body.subject, body=body.body))
    return JSONResponse(sent, status_code=202)


async def discard_draft(request: Request) -> Response:
    principal = await _staff(request)
    return JSONResponse(await run_in_threadpool(discard, principal, _draft_id(request)))


def _status_params() -> tuple[Param, ...]:
    return (Param("status", "query", {"type": "string", "enum": list(DRAFT_STATES)},
                  "Only drafts in this state."),)


DRAFT = Param("draft_id", "path", {"type": "string", "pattern": f"^{DRAFT_ID}$"},
              "The draft, as `GET /v1/drafts` or `opsgraph email ingest` named it.")
ROUTES = (
    ApiRoute("GET", "/v1/drafts", list_drafts, "Reply drafts of inbound email, newest first "
             "(staff and up)", "bearer", response=("Drafts",), errors=(400, 403),
             params=_status_params),
    ApiRoute("GET", "/v1/drafts/{draft_id}", get_draft, "One reply draft: the original "
             "email, the reply, its sources", "bearer", response=("Draft",), errors=(403,),
             params=(DRAFT,)),
    ApiRoute("PUT", "/v1/drafts/{draft_id}", edit_draft, "Edit a reply draft's subject "
             "and/or body; 409 once sent or discarded", "bearer", response=("Draft",),
             request=("DraftEdit",), errors=(403, 409), params=(DRAFT,)),
    ApiRoute("POST", "/v1/drafts/{draft_id}/send", send_draft, "Send a reply draft: records "
             "the ordinary `communications.send_email` pending change for a manager; 409 "
             "once sent or discarded", "bearer", ok=202, response=("Draft",),
             request=("DraftEdit",), body_required=False, errors=(403, 409),
             params=(DRAFT,)),
    ApiRoute("DELETE", "/v1/drafts/{draft_id}", discard_draft, "Discard a reply draft "
             "(nothing is sent); 409 once sent or discarded", "bearer", response=("Draft",),
             errors=(403, 409), params=(DRAFT,)),
)
