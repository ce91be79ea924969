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

from opsgraph.errors import BadInput, NotFound
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
from opsgraph.store.search_keys import with_keys

Document = dict[str, Any]
MAX_BYTES = 1024 * 1024
"""The largest document body, in bytes of UTF-8."""
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


def put_document(db: Database[Document], tenant: str, slug: str, body: str, *,
                 kind: str = "markdown", title: str | None = None) -> Document:
    """Add or replace a document; returns `{slug, title, kind, version, sections, created,
    knowledge_version}`."""
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
    fields = {k: v for k, v in with_keys("knowledge", doc).items() if k != "_id"}
    db["knowledge"].update_one({"_id": doc["_id"], "tenant_id": tenant},
                               {"$set": fields}, upsert=True)
    return {**summary(doc), "created": old is None,
            "knowledge_version": bump_knowledge_version(db, tenant)}


def remove_document(db: Database[Document], tenant: str, slug: str) -> Document:
    """Remove a document; returns `{slug, removed: true, knowledge_version}`."""
    check_slug(slug)
    _tenant(db, tenant)
    result = db["knowledge"].delete_one({"tenant_id": tenant, "slug": slug})
    if result.deleted_count == 0:
        raise NotFound(f"document {slug!r} not found in tenant {tenant!r}")
    return {"slug": slug, "removed": True,
            "knowledge_version": bump_knowledge_version(db, tenant)}


def list_documents(db: Database[Document], tenant: str) -> Document:
    """`{knowledge_version, documents: [summary]}` by slug."""
    _tenant(db, tenant)
    docs = db["knowledge"].find({"tenant_id": tenant}, sort=[("slug", 1)])
    version = (db["tenants"].find_one({"_id": tenant}) or {}).get("knowledge_version", 0)
    return {"knowledge_version": int(version), "documents": [summary(d) for d in docs]}
