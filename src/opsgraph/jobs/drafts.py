"""Reply drafts of inbound email, as staff review them: list, read, edit, send, discard.

`jobs.inbound_email` leaves a draft for every email it answers; nothing is sent from
there. Here a member of staff reads the original message, the draft and what the answer
read (its sources), edits the draft, and sends it — which records the ordinary
`communications.send_email` pending change, decided by a manager like any other write —
or discards it. A draft's state:

    draft ──send──▶ awaiting_approval ──approved──▶ sent
      │                    └──rejected, revised, expired, failed, withdrawn──▶ not_sent
      └──discard──▶ discarded                        (not_sent: edit and send again,
                                                      or discard)

The stored `status` is `draft`, `submitted` (with the `change_id` it waits on) or
`discarded`; `awaiting_approval`, `sent` and `not_sent` are read from the change, so the
draft never disagrees with it. Every move is a compare-and-set on what was read: a second
send or discard, or one racing another, is 409 and changes nothing. A send's change is
keyed by the draft and its send count, so a send retried after a crash is the same change.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from opsgraph.approvals import PendingChange, get_change, record_pending
from opsgraph.approvals.dependents import withdraw_change
from opsgraph.approvals.pending import COLLECTION, note_request
from opsgraph.engine.proposed_by_person import log_proposal
from opsgraph.errors import BadInput, Conflict, NotFound
from opsgraph.jobs.inbound_email import DRAFTS, INBOX
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.invoke import invoke, validate_args
from opsgraph.operations.records import to_json
from opsgraph.principal import Principal
from opsgraph.status_words import DRAFT_STATES, DRAFT_WORDS, change_label
from opsgraph.store.people import display_name, display_names
from opsgraph.store.scope import Document, TenantScope

SEND: Final = "communications.send_email"
OPEN_STATES: Final = ("draft", "not_sent")
"""The states staff act on (edit, send, discard): the count the navigation shows."""
LIST_LIMIT: Final = 200
_WAITING = ("pending", "executing")


def _state(doc: Document, change: PendingChange | None) -> str:
    if doc.get("status") != "submitted":
        return str(doc.get("status") or "draft")
    if change is None or change.status in _WAITING:
        return "awaiting_approval"
    return "sent" if change.status == "applied" else "not_sent"


def _change_view(change: PendingChange | None, names: Mapping[str, str]) -> Document | None:
    if change is None:
        return None
    who = names.get(change.decided_by) if change.decided_by else None
    view: Document = to_json({"change_id": change.change_id, "status": change.status,
                    "status_label": change_label(change.status), "decided_by_name": who,
                    "decided_at": change.decided_at or change.finished_at,
                    "feedback": change.feedback, "summary": change.summary})
    return view


def _label(state: str, change: PendingChange | None) -> str:
    if state == "awaiting_approval":
        return change_label("pending")
    if state == "not_sent" and change is not None:
        return f"Not sent: {change_label(change.status).lower()}"
    return DRAFT_WORDS[state]


def draft_view(doc: Document, change: PendingChange | None, inbox: Mapping[str, Any] | None,
               names: Mapping[str, str], *, full: bool) -> Document:
    """A draft as the API and the CLI show it (`names`: the deciders', `display_names`);
    `full` adds the original's body, the sources and the denied sub-tasks."""
    state = _state(doc, change)
    original = inbox or {}
    view: Document = {
        "draft_id": doc["_id"], "thread_id": doc.get("thread_id"), "status": state,
        "status_label": _label(state, change), "to": doc.get("to"),
        "subject": doc.get("subject", ""), "body": doc.get("body", ""),
        "created_at": doc.get("created_at"), "updated_at": doc.get("updated_at"),
        "edited_by_name": doc.get("edited_by_name"),
        "actions": {"edit": state in OPEN_STATES, "send": state in OPEN_STATES,
                    "discard": state in OPEN_STATES},
        "change": _change_view(change, names),
        "original": {"from": original.get("from"), "from_name": original.get("from_name"),
                     "subject": original.get("subject", ""),
                     "received_at": original.get("received_at"),
                     **({"body": original.get("body", "")} if full else {})},
    }
    if full:
        view["sources"] = list(doc.get("sources") or [])
        view["denied"] = list(doc.get("denied") or [])
    shown: Document = to_json(view)
    return shown


def _changes_of(scope: TenantScope, docs: list[Document]) -> dict[str, PendingChange]:
    ids = [d["change_id"] for d in docs if d.get("change_id")]
    if not ids:
        return {}
    found = scope[COLLECTION].find({"_id": {"$in": ids}})
    return {c["_id"]: PendingChange.model_validate(c) for c in found}


def _inboxes_of(scope: TenantScope, docs: list[Document]) -> dict[str, Document]:
    ids = [d["inbox_id"] for d in docs if d.get("inbox_id")]
    return {m["_id"]: m for m in scope[INBOX].find({"_id": {"$in": ids}})} if ids else {}


def list_drafts(scope: TenantScope, status: str | None = None) -> Document:
    """`{drafts: [view], open: n}`, newest first; `status` one of `DRAFT_STATES` (None: all).
    `open` counts the drafts staff act on, whatever `status` shows."""
    if status is not None and status not in DRAFT_STATES:
        raise BadInput(f"status: unknown draft status {status!r} (allowed: "
                       f"{', '.join(DRAFT_STATES)})", field="status")
    docs = list(scope[DRAFTS].find({}, sort=[("created_at", -1), ("_id", 1)],
                                   limit=LIST_LIMIT))
    changes, inboxes = _changes_of(scope, docs), _inboxes_of(scope, docs)
    names = display_names(scope, {c.decided_by for c in changes.values() if c.decided_by})
    views = [draft_view(d, changes.get(d.get("change_id") or ""),
                        inboxes.get(d.get("inbox_id") or ""), names, full=False) for d in docs]
    return {"drafts": [v for v in views if status is None or v["status"] == status],
            "open": sum(v["status"] in OPEN_STATES for v in views)}


def _read(scope: TenantScope, draft_id: str) -> tuple[Document, PendingChange | None]:
    doc = scope[DRAFTS].find_one({"_id": draft_id})
    if doc is None:
        raise NotFound(f"draft {draft_id!r} not found", draft_id=draft_id)
    change = get_change(scope, doc["change_id"]) if doc.get("change_id") else None
    return doc, change


def get_draft(scope: TenantScope, draft_id: str) -> Document:
    """One draft with its original message and sources; NotFound otherwise."""
    doc, change = _read(scope, draft_id)
    inbox = scope[INBOX].find_one({"_id": doc.get("inbox_id")}) if doc.get("inbox_id") else None
    names = display_names(scope, [change.decided_by] if change and change.decided_by else [])
    return draft_view(doc, change, inbox, names, full=True)


def _refusal(draft_id: str, state: str, change: PendingChange | None, doing: str) -> Conflict:
    why = {"awaiting_approval": f"it was sent for approval already (change "
                                f"{change.change_id if change else '?'} waits for a manager)",
           "sent": "it was sent already", "discarded": "it was discarded"}.get(state, state)
    return Conflict(f"draft {draft_id} cannot be {doing}: {why}", draft_id=draft_id,
                    status=state)


def _open(scope: TenantScope, draft_id: str,
          doing: str) -> tuple[Document, PendingChange | None]:
    """The draft and its change, or 409 unless staff may still act on it."""
    doc, change = _read(scope, draft_id)
    state = _state(doc, change)
    if state not in OPEN_STATES:
        raise _refusal(draft_id, state, change, doing)
    return doc, change


def _as_read(doc: Document) -> Document:
    """The compare-and-set filter: the draft exactly as it was read (a field it lacks
    matches `None`)."""
    return {"_id": doc["_id"], "status": doc.get("status"), "change_id": doc.get("change_id"),
            "revision": doc.get("revision"), "sends": doc.get("sends")}


def _next_revision(doc: Document) -> int:
    return int(doc.get("revision") or 0) + 1


def _lost_race(scope: TenantScope, draft_id: str, doing: str) -> Conflict:
    doc, change = _read(scope, draft_id)
    state = _state(doc, change)
    if state in OPEN_STATES:
        return Conflict(f"draft {draft_id} changed while it was being {doing}: read it "
                        "again", draft_id=draft_id, status=state)
    return _refusal(draft_id, state, change, doing)


def _send_args(doc: Document, subject: str | None, body: str | None) -> Document:
    """The email's arguments, checked as the operation checks them (BadInput naming the
    field)."""
    args = {"to": doc.get("to"), "subject": doc.get("subject", "") if subject is None
            else subject, "body": doc.get("body", "") if body is None else body}
    validate_args(get_operation(SEND), args)
    return args


def edit_draft(principal: Principal, draft_id: str, *, subject: str | None = None,
               body: str | None = None) -> Document:
    """Change a draft's subject and/or body (a draft not sent is a draft again)."""
    if subject is None and body is None:
        raise BadInput("body: give the new subject and/or body", field="body")
    scope = TenantScope.of(principal)
    doc, _ = _open(scope, draft_id, "edited")
    args = _send_args(doc, subject, body)
    now = datetime.now(UTC)
    moved = scope[DRAFTS].find_one_and_update(_as_read(doc), {"$set": {
        "subject": args["subject"], "body": args["body"], "status": "draft",
        "change_id": None, "updated_at": now, "edited_by": principal.user_id,
        "edited_by_name": display_name(scope, principal.user_id),
        "revision": _next_revision(doc)}})
    if moved is None:
        raise _lost_race(scope, draft_id, "edited")
    return get_draft(scope, draft_id)


def send_draft(principal: Principal, draft_id: str, *, subject: str | None = None,
               body: str | None = None) -> Document:
    """Record the reply as a pending `communications.send_email` change for a manager to
    decide (with `subject`/`body` when given); the draft then waits for it."""
    scope = TenantScope.of(principal)
    doc, _ = _open(scope, draft_id, "sent")
    args = _send_args(doc, subject, body)
    at = datetime.now(UTC)
    ctx = Context(scope, principal, at)
    previewed = invoke(get_operation(SEND), ctx, args, "preview")
    sends = int(doc.get("sends") or 0)
    change = record_pending(scope, thread_id=draft_id, task_id="send", agent="drafts",
                            operation=SEND, args=previewed.json_args,
                            preview=previewed.preview, proposed_by=principal,
                            attempt=sends, now=at, origin="draft")
    moved = scope[DRAFTS].find_one_and_update(_as_read(doc), {
        "$set": {"status": "submitted", "change_id": change.change_id, "sends": sends + 1,
                 "subject": args["subject"], "body": args["body"], "updated_at": at,
                 "submitted_by": principal.user_id, "submitted_at": at,
                 "revision": _next_revision(doc)}})
    reason = f"draft {draft_id} was sent or changed by another request"
    if moved is None:
        linked = (scope[DRAFTS].find_one({"_id": draft_id}) or {}).get("change_id")
        if linked != change.change_id:
            withdraw_change(scope, change, principal.user_id, reason, at)
        raise _lost_race(scope, draft_id, "sent")
    for stale in scope[COLLECTION].find({"thread_id": draft_id, "status": "pending",
                                         "_id": {"$ne": change.change_id}}):
        # a send that crashed before it linked its change: that change must never apply
        withdraw_change(scope, PendingChange.model_validate(stale), principal.user_id,
                        reason, at)
    original = scope[INBOX].find_one({"_id": doc.get("inbox_id")}) or {}
    request = (f"Send the reply to {original.get('from_name') or doc.get('to')}'s email "
               f"“{original.get('subject') or '(no subject)'}”")
    note_request(scope, [change.change_id], request)  # the card says what it answers
    log_proposal(scope, principal, get_change(scope, change.change_id), request)
    return get_draft(scope, draft_id)


def discard_draft(principal: Principal, draft_id: str) -> Document:
    """Set a draft aside for good (nothing is sent); 409 once sent or discarded."""
    scope = TenantScope.of(principal)
    doc, _ = _open(scope, draft_id, "discarded")
    now = datetime.now(UTC)
    moved = scope[DRAFTS].find_one_and_update(_as_read(doc), {"$set": {
        "status": "discarded", "updated_at": now, "discarded_by": principal.user_id,
        "revision": _next_revision(doc)}})
    if moved is None:
        raise _lost_race(scope, draft_id, "discarded")
    return get_draft(scope, draft_id)
