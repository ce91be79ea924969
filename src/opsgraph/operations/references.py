"""Turn human references ("Jane Smith", "Court 1", "INV-1042") into record ids.

Order of trust: an exact id; then a name or key (email, invoice number, slug) equal after
normalising case, accents, `_` and spaces; then names whose words the reference starts
("jane smi", "smithson"). One match resolves; several raise AmbiguousReference with
candidates; none raises NotFound with names that sound alike. Every step is one indexed
query on the search keys stored with the record (store.search_keys), never a scan.

Candidates go back to the caller, so they show only what the caller may see: staff,
managers and admins get every candidate with its telling details; anyone else gets only
public records, without contact details. The full listing is logged. Records that belong
to a member (their member record, their invoices) a member may name only among their own:
anything else is the same Forbidden, with the same words, whether or not such a record
exists, so nobody can learn who is a member by naming people.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeVar

from opsgraph.errors import AmbiguousReference, BadInput, Forbidden, NotFound
from opsgraph.operations.access import is_staff, own_member_id
from opsgraph.operations.base import Context, Operation, OpInput
from opsgraph.operations.ranking import name_score, words_prefix_match
from opsgraph.operations.records import to_json
from opsgraph.store.scope import ScopedCollection
from opsgraph.store.search_keys import canonical_key, name_key, prefix_key, soundex, words

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

    @property
    def own_only(self) -> bool:
        """Only the caller's own records may be named (a member, owned records)."""
        return not self.full and self.lookup.owner is not None

    @property
    def sees_candidates(self) -> bool:
        return self.full or self.lookup.public

    def shown(self, docs: list[Document]) -> list[Document]:
        """Candidates of the docs this caller may see, with the details it may see."""
        if not self.sees_candidates:
            return []
        details = self.lookup.details if self.full else self.lookup.public_details
        return [candidate(self.lookup, d, details) for d in docs]


def _fields(lookup: Lookup) -> dict[str, int]:
    owner = (lookup.owner,) if lookup.owner else ()
    return {f: 1 for f in ("_id", *lookup.names, *lookup.keys, *lookup.details, *owner)}


def _exact(coll: ScopedCollection, lookup: Lookup, text: str) -> list[Document]:
    """Records whose name or a key is `text` once normalised (one query per field)."""
    queries = [{"name_key": name_key(text)}] if lookup.names else []
    queries += [{key: canonical_key(key, text)} for key in lookup.keys]
    found: dict[str, Document] = {}
    for query in queries:
        found.update((str(d["_id"]), d) for d in coll.find(query, projection=_fields(lookup)))
    return list(found.values())


def _by_words(coll: ScopedCollection, lookup: Lookup, text: str) -> list[Document]:
    """Records with a name whose words `text`'s words start: the records having a word
    that starts like the longest of them, checked against every word."""
    wanted = words(text)
    if not lookup.names or not wanted:
        return []
    key = prefix_key(max(wanted, key=len))
    return [d for d in coll.find({"name_prefixes": key}, projection=_fields(lookup))
            if any(words_prefix_match(text, str(d[f])) for f in lookup.names if d.get(f))]


def _same(lookup: Lookup, doc: Document, text: str) -> bool:
    """`text` names `doc` exactly (what `_exact` asks the store, for a record at hand)."""
    return (any(name_key(str(doc[f])) == name_key(text) for f in lookup.names if doc.get(f))
            or any(doc.get(k) == canonical_key(k, text) for k in lookup.keys))


def _own(ctx: Context, audience: _Audience, collection: str, text: str,
         field: str) -> Document:
    """The caller's own record that `text` names; Forbidden, in words that depend on
    nothing but the lookup, when it names none of them."""
    lookup, owner = audience.lookup, audience.lookup.owner
    coll = ctx.scope[collection]
    mine = list(coll.find({owner: audience.member_id})) if owner else []
    found = ([d for d in mine if d["_id"] == text] or [d for d in mine if _same(lookup, d, text)]
             or [d for d in mine if any(words_prefix_match(text, str(d[f]))
                                        for f in lookup.names if d.get(f))])
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        shown = [candidate(lookup, d, lookup.public_details) for d in _sorted(lookup, found)]
        raise AmbiguousReference(
            f"{field}: {text!r} matches more than one of your {lookup.kind} records: "
            f"{_listing(shown)}. Use the id of the one you mean.", candidates=shown)
    raise Forbidden(f"{field}: members may refer only to their own {lookup.kind} records")


def _sorted(lookup: Lookup, docs: list[Document]) -> list[Document]:
    return sorted(docs, key=lambda d: (_label(lookup, d), str(d["_id"])))


def resolve_reference(ctx: Context, collection: str, value: str, field: str) -> Document:
    """The one record of `collection` that `value` names (id, name or key), in this tenant."""
    lookup = LOOKUPS.get(collection, Lookup(collection.rstrip("s")))
    text = value.strip()
    if not text:
        raise BadInput(f"{field}: empty reference")
    audience = _Audience.of(ctx, lookup)
    if audience.own_only:
        return _own(ctx, audience, collection, text, field)
    coll = ctx.scope[collection]
    by_id = coll.find_one({"_id": text})
    if by_id is not None:
        return by_id
    if not lookup.names and not lookup.keys:
        hint = f" ({lookup.hint})" if lookup.hint else ""
        raise NotFound(f"{field}: no {lookup.kind} with id {text!r}{hint}")
    found = _exact(coll, lookup, text) or _by_words(coll, lookup, text)
    if len(found) == 1:
        full = coll.find_one({"_id": found[0]["_id"]})
        if full is not None:
            return full
    if len(found) > 1:
        raise _ambiguous(audience, _sorted(lookup, found), text, field)
    raise _not_found(audience, coll, text, field)


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
    if audience.sees_candidates:
        return AmbiguousReference(
            f"{field}: {text!r} matches {len(found)} {kind} records: {_listing(shown)}. "
            "Use the id of the one you mean.", candidates=shown)
    return AmbiguousReference(
        f"{field}: {text!r} matches more than one {kind} record. "
        "Use the id of the one you mean.", candidates=shown)


def _sounding_alike(coll: ScopedCollection, lookup: Lookup, text: str) -> list[Document]:
    """Records with a name word that sounds like a word of `text`, closest first."""
    sounds = sorted({code for w in words(text) if (code := soundex(w))})
    if not lookup.names or not sounds:
        return []
    docs = coll.find({"name_sounds": {"$in": sounds}}, projection=_fields(lookup))
    scored = sorted(((_best_score(lookup, d, text), d) for d in docs),
                    key=lambda item: (-item[0], str(item[1]["_id"])))
    return [d for score, d in scored if score >= 0.4]


def _not_found(audience: _Audience, coll: ScopedCollection, text: str, field: str,
               ) -> NotFound:
    lookup = audience.lookup
    near = _sounding_alike(coll, lookup, text) if audience.sees_candidates else []
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
