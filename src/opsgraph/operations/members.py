"""Members: search, look up, create and update member records.

Document `members`: {_id, tenant_id, name, email (lower case), phone, status, membership,
joined (YYYY-MM-DD), notes}. Status and membership are what a member pays for and whether
they may book, so changing them needs a manager.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from opsgraph.errors import BadInput, Conflict, Forbidden
from opsgraph.operations.access import MEMBERS_UP, STAFF_UP, is_manager, require_self
from opsgraph.operations.base import Context, Operation, OpInput, Preview, Result, Source
from opsgraph.operations.fields import Email, Line, Name, Notes, Phone, Reference
from opsgraph.operations.ranking import name_score
from opsgraph.operations.records import (
    Document,
    derived_id,
    insert_once,
    record_json,
    require,
    update_once,
    was_applied,
)
from opsgraph.store.search_keys import (
    MIN_DIGITS,
    changed_keys,
    digits,
    member_probes,
    national,
    normalise,
    with_keys,
)

MemberStatus = Literal["active", "paused", "cancelled"]
Membership = Literal["standard", "premium", "off_peak", "junior", "family"]
SENSITIVE_FIELDS = ("status", "membership")
_SEARCH_LIMIT = 10


class MemberSearch(OpInput):
    query: Line = Field(description="A name, email or phone number, whole or in part.")


class MemberGet(OpInput):
    member: Reference = Field(description="The member: id, full name or email.")


class MemberNew(OpInput):
    name: Name = Field(description="Full name of the new member.")
    email: Email = Field(description="Email address; must not belong to another member.")
    phone: Phone | None = Field(None, description="Phone number in international form "
                                                  "(+44 7700 900123), if known.")


class MemberChanges(OpInput):
    name: Name | None = Field(None, description="New full name.")
    email: Email | None = Field(None, description="New email address.")
    phone: Phone | None = Field(None, description="New phone number in international form "
                                                  "(+44 7700 900123).")
    notes: Notes | None = Field(None, description="New staff notes.")
    status: MemberStatus | None = Field(None, description="New status (manager only).")
    membership: Membership | None = Field(None, description="New membership (manager only).")

    @model_validator(mode="after")
    def _something_changes(self) -> MemberChanges:
        if not self.as_dict():
            raise ValueError("name at least one field to change")
        return self

    def as_dict(self) -> dict[str, str]:
        """The fields this change sets, as stored."""
        return self.model_dump(exclude_none=True)


class MemberUpdate(OpInput):
    member: Reference = Field(description="The member: id, full name or email.")
    changes: MemberChanges = Field(description="Fields to change, each with its new value.")


def _source(doc: Document) -> Source:
    return Source("member", str(doc["_id"]), str(doc["name"]))


def _email_taken(ctx: Context, email: str, except_id: str) -> Document | None:
    return ctx.scope["members"].find_one({"email": email, "_id": {"$ne": except_id}})


_SHOWN = {f: 1 for f in ("name", "email", "phone", "status", "membership")}


def _candidates(ctx: Context, query: str) -> list[Document]:
    """The members a search scores: those with a search key the query's probes name
    (store.search_keys.member_probes), in one indexed query."""
    probes = member_probes(query)
    if not probes:
        return []
    return list(ctx.scope["members"].find({"member_keys": {"$in": probes}}, projection=_SHOWN))


def search_members(ctx: Context, args: MemberSearch) -> Result:
    """Members whose name, email or phone resembles the query, best first."""
    query = args.query
    number = digits(query)
    scored: list[tuple[float, Document]] = []
    for doc in _candidates(ctx, query):
        score = name_score(query, str(doc.get("name", "")))
        email = str(doc.get("email", ""))
        if normalise(query) in email:
            score = max(score, 1.0 if normalise(query) == email else 0.85)
        if len(number) >= MIN_DIGITS and national(number) in digits(str(doc.get("phone") or "")):
            score = max(score, 0.85)
        if score >= 0.5:
            scored.append((score, doc))
    scored.sort(key=lambda item: (-item[0], str(item[1]["name"]), str(item[1]["_id"])))
    matches = [{"id": d["_id"], "name": d["name"], "email": d.get("email"),
                "phone": d.get("phone"), "status": d.get("status"),
                "membership": d.get("membership"), "score": round(s, 3)}
               for s, d in scored[:_SEARCH_LIMIT]]
    return Result({"query": query, "matches": matches, "total": len(scored)})


def get_member(ctx: Context, args: MemberGet) -> Result:
    """The member record (a source)."""
    doc = require(ctx, "members", args.member, "member")
    return Result(record_json(doc), (_source(doc),))


def authorize_get(ctx: Context, args: MemberGet) -> None:
    """A member may read only their own record."""
    require_self(ctx, args.member, "read a member record")


def _new_member(ctx: Context, args: MemberNew) -> Document:
    return {"name": args.name, "email": args.email, "phone": args.phone,
            "status": "active", "membership": "standard",
            "joined": ctx.now.date().isoformat(), "notes": ""}


def preview_create(ctx: Context, args: MemberNew) -> Preview:
    """Check the email is free; show the new record."""
    taken = _email_taken(ctx, args.email, "")
    if taken is not None:
        raise Conflict(f"email: {args.email} already belongs to {taken['name']} ({taken['_id']})")
    new = _new_member(ctx, args)
    return Preview(f"Create member {args.name} <{new['email']}>", {}, new)


def apply_create(ctx: Context, args: MemberNew, change_id: str) -> Document:
    """Insert the member under an id derived from the change."""
    member_id = derived_id(ctx, "mem", change_id)
    coll = ctx.scope["members"]
    if coll.find_one({"_id": member_id}) is None:
        preview_create(ctx, args)  # the store may have moved since the preview
    doc = insert_once(coll, with_keys("members", {"_id": member_id, **_new_member(ctx, args),
                                                  "change_id": change_id}))
    return {"member": record_json(doc)}


def preview_update(ctx: Context, args: MemberUpdate) -> Preview:
    """Old and new values of the fields that change (one given its current value is left
    out); refuses a change that changes nothing."""
    doc = require(ctx, "members", args.member, "member")
    changes = args.changes.as_dict()
    if "email" in changes:
        taken = _email_taken(ctx, changes["email"], args.member)
        if taken is not None:
            raise Conflict(f"changes.email: {changes['email']} already belongs to "
                           f"{taken['name']} ({taken['_id']})")
    changed = {k: v for k, v in changes.items() if doc.get(k) != v}
    if not changed:
        raise BadInput(f"changes: {doc['name']} already has these values")
    old = {k: doc.get(k) for k in changed}
    detail = ", ".join(f"{k} {old[k]!r} → {v!r}" for k, v in changed.items())
    # names, not ids: the card is read by a manager (the id is in the change's args); a
    # field given its current value is no change and not shown
    return Preview(f"Update {doc['name']}: {detail}", old, changed)


def apply_update(ctx: Context, args: MemberUpdate, change_id: str) -> Document:
    """Set the new values once per change id."""
    coll = ctx.scope["members"]
    if not was_applied(coll, args.member, change_id):
        preview_update(ctx, args)
        changes = args.changes.as_dict()
        before = require(ctx, "members", args.member, "member")
        update_once(coll, args.member, change_id,
                    {"$set": {**changes, **changed_keys("members", before, changes)}})
    return {"member": record_json(require(ctx, "members", args.member, "member"))}


def authorize_update(ctx: Context, args: MemberUpdate) -> None:
    """Status and membership are what a member pays for: managers only."""
    touched = [f for f in SENSITIVE_FIELDS if f in args.changes.as_dict()]
    if touched and not is_manager(ctx.principal):
        raise Forbidden(f"changing a member's {' or '.join(touched)} needs a manager")


OPERATIONS: tuple[Operation, ...] = (
    Operation("members.search", "read", "search", MemberSearch,
              "Find members by name, email or phone (partial and misspelt names work).",
              STAFF_UP, "members", run=search_members),
    Operation("members.get", "read", "get", MemberGet,
              "One member's full record: contact details, status, membership, notes.",
              MEMBERS_UP, "members", {"member": "members"}, run=get_member,
              authorize=authorize_get),
    Operation("members.create", "write", "create", MemberNew,
              "Create a new member (active, standard membership).",
              STAFF_UP, "members", preview=preview_create, apply=apply_create),
    Operation("members.update", "write", "update", MemberUpdate,
              "Change a member's details; status or membership changes need a manager.",
              STAFF_UP, "members", {"member": "members"}, preview=preview_update,
              apply=apply_update, authorize=authorize_update),
)
