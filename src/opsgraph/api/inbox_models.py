"""Request and response bodies of the reply-draft and approvals-history routes
(`api.drafts`, `api.approval_routes`), for the routes and `GET /openapi.json`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from opsgraph.api.request_models import Body
from opsgraph.api.response_models import Card, Open, Out, Person, Source
from opsgraph.approvals.views import change_view

MAX_SUBJECT_CHARS = 300
MAX_BODY_CHARS = 20_000


class DraftEdit(Body):
    """`PUT /v1/drafts/{draft_id}` and `POST /v1/drafts/{draft_id}/send`: the reply's new
    subject and/or body (the email operation checks them as it checks any email)."""

    subject: str | None = Field(None, min_length=1, max_length=MAX_SUBJECT_CHARS)
    body: str | None = Field(None, min_length=1, max_length=MAX_BODY_CHARS)


class DraftOriginal(Open):
    """The inbound email the draft answers (`body` in one draft's view only)."""

    from_: str | None = Field(None, alias="from")
    from_name: str | None
    subject: str
    received_at: str | None
    body: str | None = None


if TYPE_CHECKING:  # mypy reads a view as its base; pydantic builds it from the stored change
    DraftChange = Out
else:
    DraftChange = change_view(
        "DraftChange", ("change_id", "status", "status_label", "decided_by_name", "decided_at",
                        "feedback", "summary"),
        base=Out, doc="The pending `communications.send_email` change a sent draft waits on.",
        # the label as the draft shows it (no description here), the decider by name
        served={"status_label": str, "decided_by_name": str | None})


class Draft(Open):
    """A reply draft. `status`: `draft`, `awaiting_approval`, `sent`, `not_sent` (its
    change did not apply: edit and send again) or `discarded`."""

    draft_id: str
    thread_id: str | None
    status: str
    status_label: str
    to: str | None
    subject: str
    body: str
    created_at: str | None
    actions: dict[str, bool] = Field(description="What may be done now: edit, send, "
                                                 "discard.")
    change: DraftChange | None
    original: DraftOriginal
    sources: list[Source] | None = None
    denied: list[dict[str, Any]] | None = None


class Drafts(Out):
    drafts: list[Draft]
    open: int = Field(description="Drafts staff act on (`draft`, `not_sent`): the count "
                                  "the navigation shows.")


class FieldRow(Out):
    """One field of a change in words: money with the tenant's currency, statuses as
    people say them."""

    field: str
    label: str
    old: str
    new: str
    changed: bool


if TYPE_CHECKING:
    DecidedChange = Card
else:
    DecidedChange = change_view(
        "DecidedChange", ("decision", "decided_by", "decided_at", "finished_at", "feedback",
                          "withdrawn_reason", "fields"),
        base=Card, doc="A change that ended, with who decided and when.",
        served={"decided_by": Annotated[Person | None, Field(
                    description="Who decided, by name; null when nobody did (expired, "
                                "orphaned, withdrawn).")],
                "finished_at": str,  # the history lists the changes that ended
                "fields": list[FieldRow]})


class ChangeHistory(Out):
    changes: list[DecidedChange]
    next: str | None = Field(description="The cursor of the next page (`cursor=`), or null.")
