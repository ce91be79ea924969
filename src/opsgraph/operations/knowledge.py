"""The knowledge base (policies, FAQ, opening hours): search and read documents.

Document `knowledge`: {_id, slug, title, body (Markdown), tags}.
Search ranks passages (one per Markdown section, titled) and whole documents with BM25 and
returns the best documents with the passage that matched; those documents are the answer's
sources.
"""

from __future__ import annotations

import re

from pydantic import Field

from opsgraph.operations.access import ANYONE
from opsgraph.operations.base import Context, Operation, OpInput, Result, Source
from opsgraph.operations.fields import Query, Reference
from opsgraph.operations.ranking import BM25
from opsgraph.operations.records import Document, record_json, require

_HEADING = re.compile(r"^#{1,6}\s+", re.MULTILINE)
_RESULTS = 5
_SNIPPET = 700


class KnowledgeSearch(OpInput):
    query: Query = Field(description="What to look up, in plain words (\"refund policy\").")


class KnowledgeGet(OpInput):
    document: Reference = Field(description="The document: id, slug or title.")


def passages(doc: Document) -> list[tuple[str, str]]:
    """(key, text) per Markdown section of a document; each text leads with the title."""
    parts = [p.strip() for p in _HEADING.split(str(doc.get("body", ""))) if p.strip()]
    title = str(doc["title"])
    return [(f"{doc['_id']}#{n}", f"{title}\n{part}") for n, part in enumerate(parts)]


def _source(doc: Document) -> Source:
    return Source("document", str(doc["_id"]), str(doc["title"]))


def _best_passages(docs: dict[str, Document], query: str) -> dict[str, tuple[float, str]]:
    """Document id → (score, text) of its best-matching passage."""
    texts = dict(p for d in docs.values() for p in passages(d))
    best: dict[str, tuple[float, str]] = {}
    for key, score in BM25.of(texts.items()).search(query, limit=len(texts)):
        best.setdefault(key.split("#", 1)[0], (score, texts[key]))
    return best


def rank_documents(docs: dict[str, Document], query: str) -> list[tuple[str, float, str]]:
    """(id, score, best passage), best first.

    A document's score adds its best passage's score and the whole document's score (title
    counted twice), each scaled to the best of its kind: the passage finds the precise
    answer, the whole document prefers the policy about the subject over a passing mention.
    """
    best = _best_passages(docs, query)
    whole = dict(BM25.of((i, f"{d['title']}\n{d['title']}\n{d.get('body', '')}")
                         for i, d in docs.items()).search(query, limit=len(docs)))
    top_passage = max((s for s, _ in best.values()), default=1.0)
    top_whole = max(whole.values(), default=1.0)
    scored = [(i, best[i][0] / top_passage + whole.get(i, 0.0) / top_whole, best[i][1])
              for i in best]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def search_knowledge(ctx: Context, args: KnowledgeSearch) -> Result:
    """The documents that best answer the query, each with its best passage."""
    docs = {str(d["_id"]): d for d in ctx.scope["knowledge"].find({}, sort=[("_id", 1)])}
    ranked = rank_documents(docs, args.query)[:_RESULTS]
    results = [{"id": i, "title": docs[i]["title"], "slug": docs[i].get("slug"),
                "score": round(score, 3), "passage": text[:_SNIPPET]}
               for i, score, text in ranked]
    return Result({"query": args.query, "results": results},
                  tuple(_source(docs[i]) for i, _, _ in ranked))


def get_document(ctx: Context, args: KnowledgeGet) -> Result:
    """One document in full (a source)."""
    doc = require(ctx, "knowledge", args.document, "document")
    return Result(record_json(doc), (_source(doc),))


OPERATIONS: tuple[Operation, ...] = (
    Operation("knowledge.search", "read", "search", KnowledgeSearch,
              "Search the club's policies, FAQ and opening hours; cite what it returns.",
              ANYONE, "knowledge", run=search_knowledge),
    Operation("knowledge.get", "read", "get", KnowledgeGet,
              "Read one knowledge-base document in full.",
              ANYONE, "knowledge", {"document": "knowledge"}, run=get_document),
)
