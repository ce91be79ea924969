"""The knowledge base: eight tools to navigate and read a tenant's documents and catalogue.

Documents (collection `knowledge`, see opsgraph.knowledge.documents) have sections with
stable ids (`<slug>#<heading path>`); the catalogue (collection `catalogue`) holds typed
objects (resources, classes and events, plans, products, price lists).

Navigation — these return no sources:
- `search`: hybrid search (BM25 and MiniLM fused by reciprocal rank, opsgraph.knowledge.search)
  over sections and catalogue objects, with `filters` on document fields (`tags`, `slug`,
  `document`) or catalogue fields (`type`, `kind`, ...).
- `grep`: an exact string (a clause number, an SKU, a precise wording), case ignored.
- `find_objects`: catalogue objects of a type whose fields equal the values given.
An empty search, grep or selection answers a `hint` naming the other ways to look, so an
agent switches method (meaning, exact string, fields, table of contents) before it says
the knowledge base does not have it.
- `outline`: the documents (id, slug, title, tags, sections) and the catalogue's types.
- `file_outline`: one document's table of contents.
Reading — what these return is a source of the answer:
- `read` (and `get`, its older name): a whole document; `read_section`: one section;
  `get_object`: one catalogue object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import Field

from opsgraph.errors import AmbiguousReference, NotFound
from opsgraph.knowledge.documents import Section, stored_sections
from opsgraph.knowledge.search import CATALOGUE, index_for, matches, object_entry
from opsgraph.operations.access import ANYONE
from opsgraph.operations.base import Context, Operation, OpInput, Result, Source
from opsgraph.operations.fields import Line, Query, Reference
from opsgraph.operations.ranking import words_prefix_match
from opsgraph.operations.records import Document, record_json, require
from opsgraph.store.search_keys import name_key, prefix_key, words

_RESULTS = 5
_SNIPPET = 500
_GREP_LIMIT = 20
_OBJECT_LIMIT = 50

FilterValue = Line | int | float | bool
Filters = Annotated[dict[Line, FilterValue], Field(max_length=10)]


class KnowledgeSearch(OpInput):
    query: Query = Field(description="What to look up, in plain words (\"refund policy\").")
    filters: Filters | None = Field(
        None, description="Only results whose field equals the value: document fields "
        "(tags, slug) or catalogue fields (type, kind, ...), e.g. {\"tags\": \"pool\"}.")


class KnowledgeGrep(OpInput):
    pattern: Line = Field(description="An exact string to find (a clause number, an SKU, a "
                          "precise wording); case is ignored.")


class KnowledgeGetObject(OpInput):
    object: Reference = Field(description="The catalogue object: its id, key or name.")
    type: Line | None = Field(None, description="Its type (resource, class, event, plan, "
                              "product, price_list), to tell apart objects of the same name.")


class KnowledgeFindObjects(OpInput):
    type: Line = Field(description="The catalogue type: resource, class, event, plan, "
                       "product or price_list.")
    where: Filters | None = Field(None, description="Field → value that must match, e.g. "
                                  "{\"kind\": \"court\", \"indoor\": true}.")
    limit: int | None = Field(None, ge=1, le=_OBJECT_LIMIT, description="At most this many.")


class KnowledgeOutline(OpInput):
    pass


class KnowledgeDocument(OpInput):
    document: Reference = Field(description="The document: id, slug or title.")


class KnowledgeReadSection(OpInput):
    document: Reference = Field(description="The document: id, slug or title.")
    section: Line = Field(description="The section: its id (slug#path, from search or "
                          "file_outline), its path after '#', or its heading.")


# ── navigation ───────────────────────────────────────────────────────────────────────────

def _snippet(text: str) -> str:
    return text if len(text) <= _SNIPPET else text[:_SNIPPET].rsplit(" ", 1)[0] + " …"


def search_knowledge(ctx: Context, args: KnowledgeSearch) -> Result:
    """The best sections and catalogue objects for the query (navigation: no sources);
    `unknown_words`: the query's words that nothing in the knowledge base uses (a question
    about a sauna the club does not have)."""
    index = index_for(ctx.scope)
    hits = index.search(args.query, limit=_RESULTS, filters=args.filters)
    results = []
    for hit in hits:
        e = hit.entry
        item: Document = {"id": e.id, "kind": e.kind, "title": e.title,
                          "score": round(hit.score, 4), "snippet": _snippet(e.text)}
        if e.kind == "section":
            item.update(document=e.document, document_title=e.fields.get("title"))
        else:
            item["type"] = e.fields.get("type")
        results.append(item)
    hint = ("" if results else
            "nothing matched: try another way before saying it is not there — other words, "
            "knowledge_grep for an exact string (a clause, an SKU, a wording), "
            "knowledge_find_objects by catalogue fields, or knowledge_outline and "
            "knowledge_file_outline for the tables of contents")
    unknown = index.unknown_words(args.query)
    return Result({"query": args.query, "results": results,
                   **({"unknown_words": unknown} if unknown else {}),
                   **({"hint": hint} if hint else {})})


def grep_knowledge(ctx: Context, args: KnowledgeGrep) -> Result:
    """Lines holding the exact string, in sections and catalogue objects (no sources)."""
    needle = args.pattern.casefold()
    found: list[Document] = []
    for entry in index_for(ctx.scope).entries:
        for line in (entry.title, *entry.text.splitlines()):
            if needle in line.casefold():
                found.append({"id": entry.id, "kind": entry.kind, "document": entry.document,
                              "title": entry.title, "line": line.strip()[:_SNIPPET]})
                break
        if len(found) >= _GREP_LIMIT:
            break
    hint = ({} if found else {"hint": "no exact match: the wording may differ — try "
                              "knowledge_search by meaning, a shorter string, or "
                              "knowledge_file_outline of the likely document"})
    return Result({"pattern": args.pattern, "matches": found,
                   "truncated": len(found) >= _GREP_LIMIT, **hint})


def _object_card(obj: Document) -> Document:
    card = record_json(obj)
    card.pop("tenant_id", None)
    return card


def find_objects(ctx: Context, args: KnowledgeFindObjects) -> Result:
    """Catalogue objects of a type whose fields match (navigation: no sources)."""
    wanted = {"type": args.type, **(args.where or {})}
    found = []
    limit = args.limit or _OBJECT_LIMIT
    for obj in ctx.scope[CATALOGUE].find({}, sort=[("_id", 1)]):
        if matches(object_entry(obj), wanted):
            found.append(_object_card(obj))
    hint = ({} if found else {"hint": f"no {args.type!r} object matches: knowledge_outline "
                              "lists the catalogue's types; try fewer fields, or "
                              "knowledge_search by words"})
    return Result({"type": args.type, "where": args.where or {}, "count": len(found),
                   "objects": found[:limit], **hint})


def outline(ctx: Context, args: KnowledgeOutline) -> Result:
    """The knowledge base's structure: documents and catalogue types (no sources)."""
    docs = [{"id": d["_id"], "slug": d.get("slug"), "title": d.get("title"),
             "tags": list(d.get("tags") or []), "sections": len(stored_sections(d))}
            for d in ctx.scope["knowledge"].find({}, sort=[("_id", 1)])]
    types: dict[str, int] = {}
    for obj in ctx.scope[CATALOGUE].find({}, projection={"type": 1}):
        types[str(obj.get("type"))] = types.get(str(obj.get("type")), 0) + 1
    return Result({"documents": docs, "catalogue": dict(sorted(types.items()))})


def file_outline(ctx: Context, args: KnowledgeDocument) -> Result:
    """One document's table of contents (no sources)."""
    doc = require(ctx, "knowledge", args.document, "document")
    toc = [{"id": s.id, "title": s.title, "level": s.level, "path": list(s.path),
            "chars": len(s.text)} for s in stored_sections(doc)]
    return Result({"id": doc["_id"], "slug": doc.get("slug"), "title": doc.get("title"),
                   "sections": toc})


# ── reading: sources ─────────────────────────────────────────────────────────────────────

def _document_source(doc: Document) -> Source:
    return Source("document", str(doc["_id"]), str(doc["title"]))


def read_document(ctx: Context, args: KnowledgeDocument) -> Result:
    """One document in full, with its sections' ids (a source)."""
    doc = require(ctx, "knowledge", args.document, "document")
    out = record_json(doc)
    out.pop("tenant_id", None)
    out["sections"] = [{"id": s.id, "title": s.title, "level": s.level}
                       for s in stored_sections(doc)]
    return Result(out, (_document_source(doc),))


def _find_section(doc: Document, wanted: str) -> Section:
    found = stored_sections(doc)
    key = wanted.strip()
    path = key.split("#", 1)[1] if "#" in key else key
    ways: tuple[Callable[[Section], bool], ...] = (
        lambda s: s.id == key, lambda s: s.id.split("#", 1)[1] == path,
        lambda s: s.title.casefold() == key.casefold())
    for way in ways:
        hits = [s for s in found if way(s)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise AmbiguousReference(
                f"section: {wanted!r} names {len(hits)} sections of {doc['title']!r}; "
                "give its id", [{"id": s.id, "title": s.title} for s in hits])
    ids = ", ".join(s.id for s in found[:30])
    raise NotFound(f"section: {doc['title']!r} has no section {wanted!r}; its sections: {ids}")


def read_section(ctx: Context, args: KnowledgeReadSection) -> Result:
    """One section of a document (a source)."""
    doc = require(ctx, "knowledge", args.document, "document")
    section = _find_section(doc, args.section)
    return Result({"document": doc["_id"], "document_title": doc.get("title"),
                   **section.to_json()},
                  (Source("section", section.id, section_label(str(doc["title"]), section.title)),))


def section_label(document: str, section: str) -> str:
    """A section's source title: its document's, then its own unless they are the same
    (the text before a document's first heading is titled like the document)."""
    return document if section == document else f"{document} — {section}"


def _object_label(obj: Document) -> str:
    return str(obj.get("name") or obj.get("key") or obj["_id"])


def _named_objects(ctx: Context, wanted: str) -> list[Document]:
    """Catalogue objects `wanted` names: its id, key or SKU, or its name once normalised
    ("Court1", "court 1"), each an indexed equality; else the objects with a name whose
    words its words start ("centre ct" → "Centre Court"), by the search keys."""
    coll = ctx.scope[CATALOGUE]
    found: dict[str, Document] = {}
    for query in ({"_id": wanted}, {"key": wanted.lower()}, {"sku": wanted.upper()},
                  {"name_key": name_key(wanted)}):
        found.update((str(o["_id"]), o) for o in coll.find(query))
    if found:
        return list(found.values())
    query_words = words(wanted)
    if not query_words:
        return []
    longest = prefix_key(max(query_words, key=len))
    return [o for o in coll.find({"name_prefixes": longest})
            if words_prefix_match(wanted, _object_label(o))]


def get_object(ctx: Context, args: KnowledgeGetObject) -> Result:
    """One catalogue object: by id, key, SKU or name (a source)."""
    kind = (args.type or "").strip().casefold()
    hits = sorted((o for o in _named_objects(ctx, args.object.strip())
                   if not kind or str(o.get("type", "")).casefold() == kind),
                  key=lambda o: str(o["_id"]))
    if not hits:
        what = f" of type {args.type!r}" if args.type else ""
        raise NotFound(f"object: no catalogue object{what} named {args.object!r} "
                       "(knowledge_find_objects lists them by type)")
    if len(hits) > 1:
        raise AmbiguousReference(
            f"object: {args.object!r} names {len(hits)} catalogue objects; give the id or the "
            "type", [{"id": o["_id"], "name": _object_label(o), "type": o.get("type")}
                     for o in hits[:10]])
    obj = hits[0]
    return Result(_object_card(obj), (Source("object", str(obj["_id"]), _object_label(obj)),))


_DOCUMENT = {"document": "knowledge"}

OPERATIONS: tuple[Operation, ...] = (
    Operation("knowledge.search", "read", "search", KnowledgeSearch,
              "Search the knowledge base (policies, procedures, FAQ, catalogue) by words and "
              "meaning; returns section and object ids to read, not an answer.",
              ANYONE, "knowledge", run=search_knowledge),
    Operation("knowledge.grep", "read", "search", KnowledgeGrep,
              "Find an exact string in the knowledge base: a clause number, an SKU, a "
              "precise wording.", ANYONE, "knowledge", run=grep_knowledge),
    Operation("knowledge.get_object", "read", "get", KnowledgeGetObject,
              "Read one catalogue object (a court, class, plan, product, price list) with "
              "all its fields.", ANYONE, "knowledge", run=get_object),
    Operation("knowledge.find_objects", "read", "search", KnowledgeFindObjects,
              "List catalogue objects of a type whose fields match, e.g. indoor courts.",
              ANYONE, "knowledge", run=find_objects),
    Operation("knowledge.outline", "read", "search", KnowledgeOutline,
              "The knowledge base's structure: every document's id and title, and the "
              "catalogue's types.", ANYONE, "knowledge", run=outline),
    Operation("knowledge.file_outline", "read", "get", KnowledgeDocument,
              "One document's table of contents: its sections' ids and titles.",
              ANYONE, "knowledge", _DOCUMENT, run=file_outline),
    Operation("knowledge.read", "read", "get", KnowledgeDocument,
              "Read one knowledge-base document in full.",
              ANYONE, "knowledge", _DOCUMENT, run=read_document),
    Operation("knowledge.read_section", "read", "get", KnowledgeReadSection,
              "Read one section of a document (by the section id that search or "
              "file_outline gave).", ANYONE, "knowledge", _DOCUMENT, run=read_section),
)
