"""The reply-draft and approvals-history routes as `GET /openapi.json` describes them."""

from __future__ import annotations

from opsgraph.api.inbox_models import ChangeHistory, Draft, DraftEdit, Drafts
from opsgraph.api.route_doc import ApiRoute, Param


def _history_params() -> tuple[Param, ...]:
    from opsgraph.approvals.decided import MAX_LIMIT, MAX_QUERY
    from opsgraph.approvals.pending import FINAL
    from opsgraph.operations.catalogue import CATALOGUE

    moment = {"type": "string", "description": "2026-12-01 or 2026-12-01T18:00:00Z"}
    return (
        Param("status", "query", {"type": "string"}, "One or more of "
              f"{', '.join(FINAL)}, comma-separated (default: all of them)."),
        Param("operation", "query", {"type": "string", "enum": sorted(CATALOGUE)},
              "Only changes of this operation."),
        Param("requester", "query", {"type": "string"},
              "Only changes this person asked for: a user id or a whole name, any case."),
        Param("since", "query", moment, "Ended at or after (a date: from its start)."),
        Param("until", "query", moment, "Ended before (a date: up to its end)."),
        Param("q", "query", {"type": "string", "maxLength": MAX_QUERY},
              "Text in the summary, request, requester's name, feedback or operation."),
        Param("limit", "query", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                                 "default": 25}, "Rows per page."),
        Param("cursor", "query", {"type": "string"}, "`next` of the page before."))


def inbox_routes() -> tuple[ApiRoute, ...]:
    """The drafts routes (staff and up) and the approvals history (managers, admins)."""
    from opsgraph.api.drafts import DRAFT_ID
    from opsgraph.jobs.drafts import STATES

    draft = Param("draft_id", "path", {"type": "string", "pattern": f"^{DRAFT_ID}$"},
                  "The draft, as `GET /v1/drafts` or `opsgraph email ingest` named it.")
    return (
        ApiRoute("GET", "/v1/approvals/history",
                 "Changes that ended (applied, rejected, expired, ...), newest first, with "
                 "who decided and when; filtered and paged (manager, admin)", "bearer",
                 response=(ChangeHistory,), errors=(400, 403), params=_history_params()),
        ApiRoute("GET", "/v1/drafts", "Reply drafts of inbound email, newest first (staff "
                 "and up)", "bearer", response=(Drafts,), errors=(400, 403), params=(
                     Param("status", "query", {"type": "string", "enum": list(STATES)},
                           "Only drafts in this state."),)),
        ApiRoute("GET", "/v1/drafts/{draft_id}", "One reply draft: the original email, the "
                 "reply, its sources", "bearer", response=(Draft,), errors=(403,),
                 params=(draft,)),
        ApiRoute("PUT", "/v1/drafts/{draft_id}", "Edit a reply draft's subject and/or body; "
                 "409 once sent or discarded", "bearer", response=(Draft,),
                 request=(DraftEdit,), errors=(403, 409), params=(draft,)),
        ApiRoute("POST", "/v1/drafts/{draft_id}/send", "Send a reply draft: records the "
                 "ordinary `communications.send_email` pending change for a manager; 409 "
                 "once sent or discarded", "bearer", ok=202, response=(Draft,),
                 request=(DraftEdit,), body_required=False, errors=(403, 409),
                 params=(draft,)),
        ApiRoute("DELETE", "/v1/drafts/{draft_id}", "Discard a reply draft (nothing is "
                 "sent); 409 once sent or discarded", "bearer", response=(Draft,),
                 errors=(403, 409), params=(draft,)),
    )
