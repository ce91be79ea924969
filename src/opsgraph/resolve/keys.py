"""Records a request names by a key: an invoice number ("INV-1042", "invoice 1042"), a
record id typed as it is ("bkg_demo_0042", "mem_demo_001"), a resource's code in capitals
("C1").

One indexed lookup each (`number`, `_id`). A member may name only their own member record,
invoices and bookings; anything else they name this way is left unresolved, the same
whether or not it exists.
"""

from __future__ import annotations

import re
from typing import Any

from opsgraph.operations.access import is_staff, own_member_id
from opsgraph.operations.base import Context
from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.tokens import Claimed

Document = dict[str, Any]

_INVOICE = re.compile(r"\b(?:inv[-\s]?|invoice\s+(?:no\.?\s*|number\s+|#\s*)?#?)(?P<n>\d{3,7})\b",
                      re.I)
_ID = re.compile(r"\b(?P<prefix>mem|stf|res|evt|bkg|inv)_[a-z0-9]+_[a-z0-9_]+\b", re.I)
_CODE = re.compile(r"\b[A-Z][A-Z0-9]{1,3}(?:-\d{1,2})?\b")  # a resource's code: "C1", "SQ"
_BY_PREFIX = {"mem": ("member", "members", "_id"), "stf": ("staff", "staff", None),
              "res": ("resource", "resources", None), "evt": ("event", "events", None),
              "bkg": ("booking", "bookings", "member_id"),
              "inv": ("invoice", "invoices", "member_id")}
"""Id prefix → (kind, collection, the field naming the member who owns it)."""
_LABELS = {"members": "name", "staff": "name", "resources": "name", "events": "title",
           "invoices": "number"}


def find_keys(ctx: Context, text: str, claimed: Claimed) -> list[Mention]:
    """Every invoice number and typed record id in `text`."""
    out = []
    for m in _INVOICE.finditer(text):
        number = f"INV-{m.group('n')}"
        doc = ctx.scope["invoices"].find_one({"number": number})
        out.append(_mention(ctx, m, "invoice", "invoices", "member_id", doc))
        claimed.add(m.start(), m.end())
    for m in _ID.finditer(text):
        if claimed.overlaps(m.start(), m.end()):
            continue
        kind, collection, owner = _BY_PREFIX[m.group("prefix").lower()]
        doc = ctx.scope[collection].find_one({"_id": m.group().lower()})
        out.append(_mention(ctx, m, kind, collection, owner, doc))
        claimed.add(m.start(), m.end())
    return out + _codes(ctx, text, claimed)


def _codes(ctx: Context, text: str, claimed: Claimed) -> list[Mention]:
    """Resources named by their code, written in capitals ("C1", "SQ"): one query."""
    written = [m for m in _CODE.finditer(text) if not claimed.overlaps(m.start(), m.end())]
    if not written:
        return []
    docs = {d["code"]: d for d in ctx.scope["resources"].find(
        {"code": {"$in": sorted({m.group() for m in written})}},
        projection={"_id": 1, "name": 1, "code": 1})}
    out = []
    for m in written:
        doc = docs.get(m.group())
        if doc is not None:
            claimed.add(m.start(), m.end())
            out.append(Mention(m.group(), "resource", str(doc["_id"]), str(doc["name"]),
                               start=m.start()))
    return out


def _mention(ctx: Context, m: re.Match[str], kind: str, collection: str, owner: str | None,
             doc: Document | None) -> Mention:
    if doc is None or not _may_see(ctx, doc, owner):
        return Mention(m.group(), kind, start=m.start())
    return Mention(m.group(), kind, str(doc["_id"]), label_of(collection, doc), start=m.start())


def _may_see(ctx: Context, doc: Document, owner: str | None) -> bool:
    if owner is None or is_staff(ctx.principal):
        return True
    return doc.get(owner) == own_member_id(ctx)


def label_of(collection: str, doc: Document) -> str:
    """How a record is named to a person (and a model: never its id): its name, title or
    number; a booking by its time (a member's bookings of a day never overlap)."""
    field = _LABELS.get(collection)
    if field and doc.get(field):
        return str(doc[field])
    start = doc.get("start")
    if collection == "bookings" and start is not None:
        return f"booking at {start:%a %d %b %H:%M}"
    return str(doc["_id"])
