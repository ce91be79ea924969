"""Knowledge documents: sections with stable ids, the stored shape, the tenant's version.

A document is Markdown (`kind: markdown`) or plain text (`kind: text`). Its sections
(opsgraph.store.sections, the parser the seed shares) come from ATX headings outside fenced
code; a section's id is `<doc-slug>#<path>`, the path being the slugs of its heading and of
the headings above it joined by `/` — `refund-policy#refunds/late-cancellations` — so an
id survives edits elsewhere in the document. A document that opens with its only level-1
heading has that heading as its title; the text before the first other heading, and a
whole plain-text document, is the section `<doc-slug>#_top`.

Stored document (collection `knowledge`): `{_id, tenant_id, slug, title, body, kind, tags,
sections: [{id, title, level, text, path}], version}`; sections are parsed once, on write
(the seed's writes too); a row stored without them is parsed on read.
The tenant document's `knowledge_version` goes up by one with every change to its
documents or catalogue (`bump_knowledge_version`), so indexes built from them know when
they are stale.
"""

from __future__ import annotations

import re
from typing import Any

from pymongo import ReturnDocument
from pymongo.database import Database

from opsgraph.errors import BadInput, NotFound
from opsgraph.store.scope import TenantScope
from opsgraph.store.sections import TOP, Kind, Section, sections, slugify, title_of

__all__ = ["KINDS", "TOP", "Document", "Kind", "Section", "bump_knowledge_version",
           "check_slug", "doc_id", "document", "knowledge_version", "sections", "slugify",
           "stored_sections", "title_of"]

Document = dict[str, Any]
KINDS: tuple[Kind, ...] = ("markdown", "text")
_SLUG_OK = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def check_slug(slug: str) -> str:
    """The slug itself when it is lowercase words joined by `-`; BadInput otherwise."""
    # fullmatch: `$` would also match before a final newline ("hours\n" is not a slug)
    if not _SLUG_OK.fullmatch(slug) or len(slug) > 120:
        raise BadInput(f"slug {slug!r} is not valid: use lowercase letters, digits and "
                       "single '-' between them (at most 120 characters)", field="slug")
    return slug


def doc_id(tenant: str, slug: str) -> str:
    """The stored id of a tenant's document."""
    return f"kb_{tenant}_{slug}"


def document(tenant: str, slug: str, body: str, *, kind: Kind = "markdown",
             title: str | None = None, tags: list[str] | None = None,
             version: int = 1) -> Document:
    """The stored shape of a document, its sections parsed (without `tenant_id`)."""
    if kind not in KINDS:
        raise BadInput(f"kind {kind!r} is not one of {', '.join(KINDS)}", field="kind")
    check_slug(slug)
    name = (title or "").strip() or title_of(slug, body, kind)
    return {"_id": doc_id(tenant, slug), "slug": slug, "title": name, "body": body,
            "kind": kind, "tags": tags if tags is not None else slug.split("-"),
            "sections": [s.to_json() for s in sections(slug, body, kind, name)],
            "version": version}


def stored_sections(doc: Document) -> list[Section]:
    """A stored document's sections (parsed now if it predates stored sections)."""
    if "sections" in doc:
        return [Section.from_json(s) for s in doc["sections"]]
    kind: Kind = "text" if doc.get("kind") == "text" else "markdown"
    return sections(str(doc.get("slug") or doc["_id"]), str(doc.get("body", "")), kind,
                    str(doc.get("title") or ""))


def knowledge_version(scope: TenantScope) -> int:
    """The tenant's knowledge version: 0 before its first change."""
    return int((scope.tenant() or {}).get("knowledge_version", 0))


def bump_knowledge_version(db: Database[Document], tenant: str) -> int:
    """Count one more change to the tenant's knowledge; returns the new version."""
    doc = db["tenants"].find_one_and_update({"_id": tenant},
                                            {"$inc": {"knowledge_version": 1}},
                                            return_document=ReturnDocument.AFTER)
    if doc is None:
        raise NotFound(f"tenant {tenant!r} not found ('opsgraph seed' loads the demo "
                       "tenants)")
    return int(doc["knowledge_version"])
