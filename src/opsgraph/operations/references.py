"""Turn human references ("Jane Smith", "Court 1", "INV-1042") into record ids.

Order of trust: an exact id; then a name or key (email, invoice number, slug) equal after
normalising case, accents and whitespace; then names whose words the reference starts
("jane smi"). One match resolves; several raise AmbiguousReference with candidates; none
raises NotFound with the closest names.

Candidates go back to the caller, so they show only what the caller may see: staff,
managers and admins get every candidate with its telling details; anyone else gets only
records that are theirs or public, without contact details. The full listing is logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeVar

from opsgraph.errors import AmbiguousReference, BadInput, NotFound
from opsgraph.operations.access import is_staff, own_member_id
from opsgraph.operations.base import Context, Operation, OpInput
from opsgraph.operations.ranking import name_score, normalise, words_prefix_match
from opsgraph.operations.records import to_json

Document = dict[str, Any]
Args = TypeVar("Args", bound=OpInput)

log = logging.getLogger(__name__)

_MAX_CANDIDATES = 10


@dataclass(frozen=True, slots=True)
class Lookup:
    """How records of one collection are named."""

    kind: str  # what a person calls one record: "member", "resource", ...
    names: tuple[str, ...] = ()  # matched exactly or by word prefix
    keys: tuple[str, ...] = ()  # matched exactly only (email, invoice number, slug)
    details: tuple[str, ...] = ()  # shown with candidates to tell them apart (to staff)
    hint: str = ""  # where to find the id when names do not apply
    # Who else sees candidates: everyone (public), or the member whose id is in `owner`.
    # Anyone who is not staff sees only `public_details` of them: never contact details.
    public: bool = False
    owner: str | None = None
    public_details: tuple[str, ...] = ()


LOOKUPS: dict[str, Lookup] = {
    "members": Lookup("member", ("name",), ("email",), ("email", "status"), owner="_id"),
    "staff": Lookup("staff member", ("name",), ("email",), ("email", "position")),
    "resources": Lookup("resource", ("name",), ("code",), ("kind",), public=True,
                        public_details=("kind",)),
    "events": Lookup("event", ("title",), (), ("start", "location"), public=True,
                     public_details=("start", "location")),
    "invoices": Lookup("invoice", (), ("number",), ("member_name", "total", "status"),
                       owner="member_id", public_details=("total", "status")),
    "knowledge": Lookup("document", ("title",), ("slug",), ("slug",), public=True,
                        public_details=("slug",)),
    "bookings": Lookup("booking", hint="use bookings.list to find the booking id"),
    "shifts": Lookup("shift", hint="use schedules.shifts to find the shift id"),
}


def _label(lookup: Lookup, doc: Document) -> str:
    for fld in (*lookup.names, *lookup.keys):
        if doc.get(fld):
            return str(doc[fld])
    return str(doc["_id"])


def candidate(lookup: Lookup, doc: Document, details: tuple[str, ...] | None = None
              ) -> Document:
    """One candidate as shown to a person or a model: id, name and telling details
    (`details`, default all of the lookup's)."""
    out: Document = {"id": doc["_id"], "name": _label(lookup, doc)}
    shown = lookup.details if details is None else details
    out.update({d: to_json(doc[d]) for d in shown if doc.get(d) is not None})
    return out


@dataclass(frozen=True, slots=True)
class _Audience:
    """What one caller may be shown of the candidates of one lookup."""

    lookup: Lookup
    full: bool  # staff, managers and admins: every candidate, every detail
    member_id: str | None  # the caller's own member id, for owned records

    @classmethod
    def of(cls, ctx: Context, lookup: Lookup) -> _Audience:
        if is_staff(ctx.principal):
            return cls(lookup, True, None)
        return cls(lookup, False, own_member_id(ctx) if lookup.owner else None)

    def may_see(self, doc: Document) -> bool:
        if self.full or self.lookup.public:
            return True
        owner = self.lookup.owner
        return owner is not None and doc.get(owner) == self.member_id

    def shown(self, docs: list[Document]) -> list[Document]:
        """Candidates of the docs this caller may see, with the details it may see."""
        details = self.lookup.details if self.full else self.lookup.public_details
        return [candidate(self.lookup, d, details) for d in docs if self.may_see(d)]


def _plain(text: str) -> str:
    """Normalised, with `_` read as a space: models write names as `emily_chen`."""
    return normalise(text.replace("_", " "))


def _matches(lookup: Lookup, docs: list[Document], value: str) -> list[Document]:
    wanted = _plain(value)
    squashed = wanted.replace(" ", "")

    def same(text: Any) -> bool:
        norm = _plain(str(text))
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
    owner = (lookup.owner,) if lookup.owner else ()
    fields = {f: 1 for f in ("_id", *lookup.names, *lookup.keys, *lookup.details, *owner)}
    docs = list(coll.find({}, projection=fields))
    found = _matches(lookup, docs, text)
    if len(found) == 1:
        full = coll.find_one({"_id": found[0]["_id"]})
        if full is not None:
            return full
    audience = _Audience.of(ctx, lookup)
    if len(found) > 1:
        found.sort(key=lambda d: (_label(lookup, d), str(d["_id"])))
        raise _ambiguous(audience, found, text, field)
    raise _not_found(audience, docs, text, field)


def _describe(cand: Document) -> str:
    extra = ", ".join(str(v) for k, v in cand.items() if k not in ("id", "name"))
    return f"{cand['name']} ({cand['id']}{', ' + extra if extra else ''})"


def _best_score(lookup: Lookup, doc: Document, text: str) -> float:
    named = [str(doc[f]) for f in (*lookup.names, *lookup.keys) if doc.get(f) is not None]
    return max((name_score(text, n) for n in named), default=0.0)


def _listing(candidates: list[Document]) -> str:
    return "; ".join(_describe(c) for c in candidates)


def _ambiguous(audience: _Audience, found: list[Document], text: str, field: str,
               ) -> AmbiguousReference:
    kind = audience.lookup.kind
    log.info("%s: %r matches %d %s records: %s", field, text, len(found), kind,
             _listing([candidate(audience.lookup, d) for d in found]))
    shown = audience.shown(found)[:_MAX_CANDIDATES]
    if audience.full or audience.lookup.public:
        return AmbiguousReference(
            f"{field}: {text!r} matches {len(found)} {kind} records: {_listing(shown)}. "
            "Use the id of the one you mean.", candidates=shown)
    yours = f" Yours: {_listing(shown)}." if shown else ""
    return AmbiguousReference(
        f"{field}: {text!r} matches more than one {kind} record.{yours} "
        "Use the id of the one you mean.", candidates=shown)


def _not_found(audience: _Audience, docs: list[Document], text: str, field: str,
               ) -> NotFound:
    lookup = audience.lookup
    scored = sorted(((_best_score(lookup, d, text), d) for d in docs),
                    key=lambda item: (-item[0], str(item[1]["_id"])))
    near = [d for score, d in scored if score >= 0.4]
    if near:
        log.info("%s: no %s matches %r; close: %s", field, lookup.kind, text,
                 _listing([candidate(lookup, d) for d in near[:3]]))
    close = audience.shown(near)[:3]
    suggestion = f" Did you mean: {_listing(close)}?" if close else ""
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
