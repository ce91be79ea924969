"""Admin changes to a tenant's knowledge documents: add or replace, remove, list.

The CLI (`opsgraph kb add|rm|list`) and the HTTP routes (api.knowledge_admin) both come
here. Every change checks everything first and writes nothing on bad input (an empty or
binary body, one over `MAX_BYTES`, a bad slug or kind, an unknown tenant); a change that
went through bumps the tenant's knowledge version (documents.bump_knowledge_version).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pymongo.database import Database

from opsgraph.errors import BadInput, NotFound, PayloadTooLarge
from opsgraph.knowledge.documents import (
    KINDS,
    Kind,
    bump_knowledge_version,
    check_slug,
    doc_id,
    document,
    slugify,
    stored_sections,
)
from opsgraph.knowledge.search import section_entries
from opsgraph.knowledge.stored_vectors import forget, text_key, vectors_of
from opsgraph.store.scope import TenantScope
from opsgraph.store.search_keys import with_keys

Document = dict[str, Any]
MAX_BYTES = 1024 * 1024
"""The largest document body, in bytes of UTF-8."""
MAX_SECTIONS_PER_DOCUMENT = 500
"""The most sections (headings) one document may have: a long manual has about 200."""
MAX_SECTIONS_PER_TENANT = 5_000
"""The most sections a tenant's documents may have together (the demo club has 208)."""
SUFFIX_KIND: dict[str, Kind] = {".md": "markdown", ".markdown": "markdown", ".txt": "text"}


def _tenant(db: Database[Document], tenant: str) -> None:
    if db["tenants"].find_one({"_id": tenant}, {"_id": 1}) is None:
        raise NotFound(f"tenant {tenant!r} not found ('opsgraph seed' loads the demo tenants)")


def check_body(body: str, where: str = "body") -> str:
    """The body itself when it is non-empty text of at most `MAX_BYTES`; BadInput naming
    `where` otherwise."""
    if "\x00" in body:
        raise BadInput(f"{where}: binary content (a NUL byte); documents are Markdown or "
                       "plain text", field="body")
    size = len(body.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise BadInput(f"{where}: {size:,} bytes, over the {MAX_BYTES:,}-byte limit",
                       field="body")
    if not body.strip():
        raise BadInput(f"{where}: empty document", field="body")
    return body


def read_file(path: Path) -> tuple[str, Kind]:
    """A document file's text and kind (.md → markdown, .txt → text); BadInput naming the
    file when it is missing, of another type, binary, too large or empty."""
    kind = SUFFIX_KIND.get(path.suffix.lower())
    if kind is None:
        raise BadInput(f"{path}: not a .md or .txt file", field="path")
    if not path.is_file():
        raise BadInput(f"{path}: no such file", field="path")
    if path.stat().st_size > MAX_BYTES:
        raise BadInput(f"{path}: {path.stat().st_size:,} bytes, over the {MAX_BYTES:,}-byte "
                       "limit", field="body")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: binary content (not UTF-8 text); documents are Markdown "
                       "or plain text", field="body") from None
    return check_body(text, str(path)), kind


def slug_for(path: Path) -> str:
    """The slug a file gets when none is given: its name without the suffix, slugified."""
    slug = slugify(path.stem)
    if not slug:
        raise BadInput(f"{path}: cannot make a slug of its name; pass --slug", field="slug")
    return slug


def summary(doc: Document) -> Document:
    """What a listing shows of a stored document."""
    return {"slug": doc["slug"], "title": doc["title"], "kind": doc.get("kind", "markdown"),
            "version": int(doc.get("version", 1)), "bytes": len(str(doc["body"]).encode()),
            "sections": len(stored_sections(doc))}


def check_sections(db: Database[Document], tenant: str, doc: Document) -> None:
    """PayloadTooLarge when the document has more sections than one document may, or
    would take the tenant's knowledge base past its total (each section is indexed and
    embedded, so their number, not the bytes, is what a search pays for)."""
    count = len(doc["sections"])
    if count > MAX_SECTIONS_PER_DOCUMENT:
        raise PayloadTooLarge(
            f"body: {count:,} sections (headings), over the limit of "
            f"{MAX_SECTIONS_PER_DOCUMENT:,} sections in one document; split it into "
            "several documents or use fewer headings", field="body",
            limit="sections_per_document", maximum=MAX_SECTIONS_PER_DOCUMENT)
    total = count + sum(_section_count(db, d) for d in db["knowledge"].find(
        {"tenant_id": tenant, "_id": {"$ne": doc["_id"]}}, {"sections.id": 1}))
    if total > MAX_SECTIONS_PER_TENANT:
        raise PayloadTooLarge(
            f"body: the knowledge base would hold {total:,} sections, over the limit of "
            f"{MAX_SECTIONS_PER_TENANT:,} sections for a tenant; remove documents first",
            field="body", limit="sections_per_tenant", maximum=MAX_SECTIONS_PER_TENANT)


def _section_count(db: Database[Document], ids_only: Document) -> int:
    """How many sections a stored document has (read whole only when it was stored
    before its sections were)."""
    if "sections" in ids_only:
        return len(ids_only["sections"])
    whole = db["knowledge"].find_one({"_id": ids_only["_id"]})
    return len(stored_sections(whole)) if whole else 0


def _keys(doc: Document | None) -> list[str]:
    """The stored-vector keys of a document's sections (the texts the rankers read)."""
    return [text_key(e.searchable) for e in section_entries(doc)] if doc else []


def embed_sections(db: Database[Document], tenant: str, doc: Document) -> int:
    """Embed the document's sections that have no stored vector yet (a section whose text
    is unchanged keeps its own); how many were embedded. Done at upload, so a search
    embeds only its query."""
    _, embedded = vectors_of(TenantScope(db, tenant),
                             [e.searchable for e in section_entries(doc)])
    return embedded


def put_document(db: Database[Document], tenant: str, slug: str, body: str, *,
                 kind: str = "markdown", title: str | None = None) -> Document:
    """Add or replace a document, its new sections embedded; returns `{slug, title, kind,
    version, sections, embedded, created, knowledge_version}`."""
    if kind not in KINDS:
        raise BadInput(f"kind {kind!r} is not one of {', '.join(KINDS)}", field="kind")
    check_slug(slug)
    check_body(body)
    if title is not None and (not title.strip() or len(title) > 200):
        raise BadInput("title: must be 1 to 200 characters", field="title")
    _tenant(db, tenant)
    old = db["knowledge"].find_one({"tenant_id": tenant, "_id": doc_id(tenant, slug)})
    version = int((old or {}).get("version", 0)) + 1
    doc = document(tenant, slug, body, kind="text" if kind == "text" else "markdown",
                   title=title, tags=None if old is None else old.get("tags"), version=version)
    check_sections(db, tenant, doc)
    embedded = embed_sections(db, tenant, doc)  # before the write: a failure writes nothing
    fields = {k: v for k, v in with_keys("knowledge", doc).items() if k != "_id"}
    db["knowledge"].update_one({"_id": doc["_id"], "tenant_id": tenant},
                               {"$set": fields}, upsert=True)
    forget(TenantScope(db, tenant), _keys(old), _keys(doc))
    return {**summary(doc), "embedded": embedded, "created": old is None,
            "knowledge_version": bump_knowledge_version(db, tenant)}


def remove_document(db: Database[Document], tenant: str, slug: str) -> Document:
    """Remove a document (and its sections' stored vectors); returns `{slug, removed: true,
    knowledge_version}`."""
    check_slug(slug)
    _tenant(db, tenant)
    old = db["knowledge"].find_one({"tenant_id": tenant, "slug": slug})
    result = db["knowledge"].delete_one({"tenant_id": tenant, "slug": slug})
    if result.deleted_count == 0:
        raise NotFound(f"document {slug!r} not found in tenant {tenant!r}")
    forget(TenantScope(db, tenant), _keys(old), [])
    return {"slug": slug, "removed": True,
            "knowledge_version": bump_knowledge_version(db, tenant)}


def list_documents(db: Database[Document], tenant: str) -> Document:
    """`{knowledge_version, documents: [summary]}` by slug."""
    _tenant(db, tenant)
    docs = db["knowledge"].find({"tenant_id": tenant}, sort=[("slug", 1)])
    version = (db["tenants"].find_one({"_id": tenant}) or {}).get("knowledge_version", 0)
    return {"knowledge_version": int(version), "documents": [summary(d) for d in docs]}
