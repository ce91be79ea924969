"""Records a request names loosely: members, staff, resources and events.

Finding them takes one indexed query a collection, on the search keys stored with each
record (store.search_keys), never a scan: the records having a word one of the request's
words starts (`name_prefixes`: "jane", "smi", "emily_chen" as two words); and only when a
word starts no name at all, one more: the records with a word that sounds like it
(`name_sounds`: "Smtih", "Siobhan OConnor"). Each record found is then lined up with
the request's words (resolve.matching) and the best run of words names it; several
records matching equally well are the candidates of one ambiguous mention.

Who may see what follows operations.references: staff see every record; anyone else only
their own member record, public records (resources, events), and a staff member only when
the name picks out one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from opsgraph.operations.access import is_staff, own_member_id
from opsgraph.operations.base import Context
from opsgraph.resolve.matching import Match, best_matches, probe_words
from opsgraph.resolve.mentions import Candidate, Mention
from opsgraph.resolve.tokens import Claimed, Token
from opsgraph.resolve.vocabulary import GENERIC, STAFF_CUES
from opsgraph.store.search_keys import soundex, words

Document = dict[str, Any]
MAX_CANDIDATES = 10


@dataclass(frozen=True, slots=True)
class Named:
    """One collection of named records, as the resolver searches it."""

    kind: str
    collection: str
    field: str  # the field holding the name
    details: tuple[str, ...] = ()  # what tells two of them apart, in a candidate's label
    public: bool = False
    owned: bool = False  # a non-staff caller may name only their own record


NAMED = (Named("member", "members", "name", ("email",), owned=True),
         Named("staff", "staff", "name", ("position",)),
         Named("resource", "resources", "name", ("location",), public=True),
         Named("event", "events", "title", ("start",), public=True))


def find_named(ctx: Context, text: str, tokens: list[Token], claimed: Claimed,
               blocked: frozenset[int]) -> list[Mention]:
    """Every member, staff member, resource and event `text` names. `blocked` holds the
    indexes of tokens that are part of a date or time (used only inside a longer name)."""
    usable = [t for i, t in enumerate(tokens) if not claimed.overlaps(t.start, t.end)
              and (i not in blocked or t.norm in GENERIC)]
    probes = probe_words(usable)
    if not probes:
        return []
    staff_cue = any(t.norm in STAFF_CUES for t in tokens)
    found_docs = _search(ctx, "name_prefixes", probes)
    sounds = _unheard(probes, found_docs)
    if sounds:  # a word that starts no name: a typo ("smtih"), or a word that names nothing
        found_docs += _search(ctx, "name_sounds", sounds)
    matches: list[tuple[Named, Match]] = []
    staff = is_staff(ctx.principal)
    for named in NAMED:
        docs = list({str(d["_id"]): d for n, d in found_docs if n is named}.values())
        found = best_matches(usable, docs, named.field, loose=named.public)
        if not staff and not named.public:  # only a full name, for who cannot list them
            found = [m for m in found if m.score >= 1.0 - 1e-9]
        matches += [(named, m) for m in found]
    return _mentions(ctx, text, _pick(matches, staff_cue), claimed)


def _fields(named: Named) -> dict[str, int]:
    return {f: 1 for f in ("_id", named.field, *named.details)}


def _scope_filter(ctx: Context, named: Named) -> Document | None:
    """What a non-staff caller may find of this collection: None when nothing."""
    if is_staff(ctx.principal) or named.public or not named.owned:
        return {}
    own = own_member_id(ctx)
    return None if own is None else {"_id": own}


def _search(ctx: Context, key: str, values: list[str]) -> list[tuple[Named, Document]]:
    """The records of every kind having one of `values` among their search keys `key`
    (`name_prefixes` or `name_sounds`): one indexed query a collection the caller may read."""
    found: list[tuple[Named, Document]] = []
    for named in NAMED:
        limit = _scope_filter(ctx, named)
        if limit is not None:
            found += [(named, doc) for doc in ctx.scope[named.collection].find(
                {**limit, key: {"$in": values}}, projection=_fields(named))]
    return found


def _unheard(probes: list[str], docs: Iterable[tuple[Named, Document]]) -> list[str]:
    """The Soundex codes of the probes no record's word starts with (likely typos)."""
    heard = {w for named, d in docs for w in words(str(d.get(named.field) or ""))}
    return sorted({soundex(p) for p in probes if len(p) >= 4 and not p.isdigit()
                   and not any(w.startswith(p) for w in heard)} - {""})


def _pick(matches: list[tuple[Named, Match]], staff_cue: bool
          ) -> list[tuple[Named, list[Match]]]:
    """Group matches by the words they cover; each run of words keeps its best-scoring
    records (of one kind: staff over members only when the request talks of staff work)."""
    by_span: dict[tuple[int, int], list[tuple[Named, Match]]] = {}
    for named, m in matches:
        by_span.setdefault((m.first, m.last), []).append((named, m))
    chosen: list[tuple[Named, list[Match]]] = []
    taken: list[tuple[int, int]] = []
    # Longer runs of words first, then better scores: "Jane Smith" before "Jane".
    order = sorted(by_span.items(), key=lambda kv: (-(kv[0][1] - kv[0][0]),
                                                    -max(m.score for _, m in kv[1]), kv[0]))
    for span, group in order:
        if any(s <= span[1] and span[0] <= e for s, e in taken):
            continue
        best = max(m.score for _, m in group)
        top = [(n, m) for n, m in group if m.score >= best - 1e-9]
        kinds = {n.kind for n, _ in top}
        if {"member", "staff"} <= kinds:
            keep = "staff" if staff_cue else "member"
            top = [(n, m) for n, m in top if n.kind == keep]
        elif len(kinds) > 1:
            order_of = {n.kind: i for i, n in enumerate(NAMED)}
            first = min(kinds, key=order_of.__getitem__)
            top = [(n, m) for n, m in top if n.kind == first]
        taken.append(span)
        chosen.append((top[0][0], [m for _, m in top]))
    return chosen


def _mentions(ctx: Context, text: str, picked: list[tuple[Named, list[Match]]],
              claimed: Claimed) -> list[Mention]:
    staff = is_staff(ctx.principal)
    out = []
    for named, group in picked:
        start, end = group[0].start, group[0].end
        words = text[start:end]
        docs = sorted((m.doc for m in group), key=lambda d: str(d["_id"]))
        if named.kind == "event":
            docs = _upcoming(docs, ctx.now)
        claimed.add(start, end)
        if len(docs) == 1:
            doc = docs[0]
            out.append(Mention(words, named.kind, str(doc["_id"]), str(doc[named.field]),
                               start=start))
        elif staff or named.public:
            cands = tuple(Candidate(str(d["_id"]), _label(named, d))
                          for d in docs[:MAX_CANDIDATES])
            out.append(Mention(words, named.kind, candidates=cands, start=start))
        else:  # more than one, and not for this caller to list
            out.append(Mention(words, named.kind, start=start))
    return out


def _upcoming(docs: list[Document], now: datetime) -> list[Document]:
    """Events from today on, when any are (nobody means last week's yoga)."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    ahead = [d for d in docs if not isinstance(d.get("start"), datetime)
             or _aware(d["start"]) >= today]
    return ahead or docs


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _label(named: Named, doc: Document) -> str:
    """A candidate's label: its name and what tells it apart."""
    extra = []
    for d in named.details:
        value = doc.get(d)
        if isinstance(value, datetime):
            extra.append(f"{value:%a %d %b %H:%M}")
        elif value:
            extra.append(str(value))
    name = str(doc[named.field])
    return f"{name} ({', '.join(extra)})" if extra else name
