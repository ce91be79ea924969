"""Turn human references ("Jane Smith", "Court 1", "INV-1042") into record ids.

Order of trust: an exact id; then a name or key (email, invoice number, slug) equal after
normalising case, accents and whitespace; then names whose words the reference starts
("jane smi"). One match resolves; several raise AmbiguousReference with candidates; none
raises NotFound with the closest names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from opsgraph.errors import AmbiguousReference, BadInput, NotFound
from opsgraph.operations.base import Context, Operation, OpInput
from opsgraph.operations.ranking import name_score, normalise, words_prefix_match
from opsgraph.operations.records import to_json

Document = dict[str, Any]
Args = TypeVar("Args", bound=OpInput)

_MAX_CANDIDATES = 10


@dataclass(frozen=True, slots=True)
class Lookup:
    """How records of one collection are named."""

    kind: str  # what a person calls one record: "member", "resource", ...
    names: tuple[str, ...] = ()  # matched exactly or by word prefix
    keys: tuple[str, ...] = ()  # matched exactly only (email, invoice number, slug)
    details: tuple[str, ...] = ()  # shown with candidates to tell them apart
    hint: str = ""  # where to find the id when names do not apply


LOOKUPS: dict[str, Lookup] = {
    "members": Lookup("member", ("name",), ("email",), ("email", "status")),
    "staff": Lookup("staff member", ("name",), ("email",), ("email", "position")),
    "resources": Lookup("resource", ("name",), ("code",), ("kind",)),
    "events": Lookup("event", ("title",), (), ("start", "location")),
    "invoices": Lookup("invoice", (), ("number",), ("member_name", "total", "status")),
    "knowledge": Lookup("document", ("title",), ("slug",), ("slug",)),
    "bookings": Lookup("booking", hint="use bookings.list to find the booking id"),
    "shifts": Lookup("shift", hint="use schedules.shifts to find the shift id"),
}


def _label(lookup: Lookup, doc: Document) -> str:
    for fld in (*lookup.names, *lookup.keys):
        if doc.get(fld):
            return str(doc[fld])
    return str(doc["_id"])


def candidate(lookup: Lookup, doc: Document) -> Document:
    """One candidate as shown to a person or a model: id, name and telling details."""
    out: Document = {"id": doc["_id"], "name": _label(lookup, doc)}
    out.update({d: to_json(doc[d]) for d in lookup.details if doc.get(d) is not None})
    return out


def _matches(lookup: Lookup, docs: list[Document], value: str) -> list[Document]:
    wanted = normalise(value)
    squashed = wanted.replace(" ", "")

    def same(text: Any) -> bool:
        norm = normalise(str(text))
        return norm == wanted or norm.replace(" ", "") == squashed

    exact = [d for d in docs if any(same(d[f]) for f in (*lookup.names, *lookup.keys)
                                    if d.get(f) is not None)]
    if exact:
        return exact
    return [d for d in docs if any(words_prefix_match(value, str(d[f]))
                                   for f in lookup.names if d.get(f))]


def resolve_reference(ctx: Context, collection: str, value: str, field: str) -> Document:
    """The one record of `collection` that `value` names (id, name or key), in this tenant."""
    lookup = LOOKUPS.get(collection, Lookup(collection.rstrip("s")))
    text = value.strip()
    if not text:
        raise BadInput(f"{field}: empty reference")
    coll = ctx.scope[collection]
    by_id = coll.find_one({"_id": text})
    if by_id is not None:
        return by_id
    if not lookup.names and not lookup.keys:
        hint = f" ({lookup.hint})" if lookup.hint else ""
        raise NotFound(f"{field}: no {lookup.kind} with id {text!r}{hint}")
    fields = {f: 1 for f in ("_id", *lookup.names, *lookup.keys, *lookup.details)}
    docs = list(coll.find({}, projection=fields))
    found = _matches(lookup, docs, text)
    if len(found) == 1:
        full = coll.find_one({"_id": found[0]["_id"]})
        if full is not None:
            return full
    if len(found) > 1:
        found.sort(key=lambda d: (_label(lookup, d), str(d["_id"])))
        shown = [candidate(lookup, d) for d in found[:_MAX_CANDIDATES]]
        listing = "; ".join(_describe(c) for c in shown)
        raise AmbiguousReference(
            f"{field}: {text!r} matches {len(found)} {lookup.kind} records: {listing}. "
            "Use the id of the one you mean.", candidates=shown)
    raise _not_found(lookup, docs, text, field)


def _describe(cand: Document) -> str:
    extra = ", ".join(str(v) for k, v in cand.items() if k not in ("id", "name"))
    return f"{cand['name']} ({cand['id']}{', ' + extra if extra else ''})"


def _best_score(lookup: Lookup, doc: Document, text: str) -> float:
    named = [str(doc[f]) for f in (*lookup.names, *lookup.keys) if doc.get(f) is not None]
    return max((name_score(text, n) for n in named), default=0.0)


def _not_found(lookup: Lookup, docs: list[Document], text: str, field: str) -> NotFound:
    scored = sorted(((_best_score(lookup, d, text), d) for d in docs),
                    key=lambda item: (-item[0], str(item[1]["_id"])))
    close = [candidate(lookup, d) for score, d in scored[:3] if score >= 0.4]
    suggestion = ""
    if close:
        suggestion = " Did you mean: " + "; ".join(_describe(c) for c in close) + "?"
    return NotFound(f"{field}: no {lookup.kind} matches {text!r}.{suggestion}",
                    candidates=close)


def resolve_args(ctx: Context, op: Operation, args: Args) -> Args:
    """A copy of `args` whose reference fields hold record ids instead of human names."""
    updates: dict[str, str] = {}
    for field, collection in op.references.items():
        value = getattr(args, field, None)
        if isinstance(value, str):
            updates[field] = str(resolve_reference(ctx, collection, value, field)["_id"])
    return args.model_copy(update=updates) if updates else args
