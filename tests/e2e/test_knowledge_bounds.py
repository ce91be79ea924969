"""What a knowledge document may cost, on a real server process (issue 18, finding 10: a
66 KiB document of 5,000 one-line sections made the next search take 14.7 s while every
section was embedded again). Sections are bounded per document and per tenant (413 naming
the limit, nothing written); a document's sections are embedded when it is uploaded, not
at the next search, and a new version embeds only the sections whose text changed."""

from __future__ import annotations

import time
from typing import Any

import httpx
from mcp.client.session import ClientSession

from opsgraph.knowledge.admin import MAX_SECTIONS_PER_DOCUMENT, MAX_SECTIONS_PER_TENANT
from opsgraph.knowledge.documents import document
from opsgraph.knowledge.search import section_entries
from opsgraph.knowledge.stored_vectors import text_key
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.test_http_api import assert_error
from tests.e2e.test_mcp_user import over_mcp

DOCS = "/v1/knowledge/documents"


def sections_doc(count: int, changed: int | None = None) -> str:
    """A Markdown document of `count` one-line sections (section `changed` reworded)."""
    return "\n".join(f"## Rule {i}\nLocker {i} is emptied at "
                     f"{'23:00' if i == changed else '22:30'}." for i in range(count))


def stored_keys(db: Any) -> set[str]:
    return {d["key"] for d in db["knowledge_vectors"].find({"tenant_id": "demo"})}


def test_a_document_over_the_section_limit_is_413_and_writes_nothing(
        http: httpx.Client, demo_db: Any) -> None:
    before = (demo_db["knowledge"].count_documents({}),
              demo_db["knowledge_vectors"].count_documents({}))
    flood = sections_doc(5_000)  # the finding's document: 5,000 one-line sections
    refused = http.put(f"{DOCS}/flood", json={"body": flood}, headers=bearer("admin"))
    assert_error(refused, 413, mentions=f"{MAX_SECTIONS_PER_DOCUMENT:,} sections")
    assert refused.json()["error"]["detail"]["limit"] == "sections_per_document"
    assert (demo_db["knowledge"].count_documents({}),
            demo_db["knowledge_vectors"].count_documents({})) == before


def test_a_tenant_over_its_section_limit_is_413(http: httpx.Client, demo_db: Any) -> None:
    # stored directly (no embedding): documents that bring the tenant near its limit
    have = sum(len(d["sections"]) for d in demo_db["knowledge"].find({"tenant_id": "demo"}))
    left, n = MAX_SECTIONS_PER_TENANT - have, 0
    while left > 0:
        size = min(left, MAX_SECTIONS_PER_DOCUMENT)
        demo_db["knowledge"].insert_one({**document("demo", f"bulk-{n}", sections_doc(size)),
                                         "tenant_id": "demo"})
        left, n = left - size, n + 1
    refused = http.put(f"{DOCS}/one-more", json={"body": sections_doc(2)},
                       headers=bearer("admin"))
    assert_error(refused, 413, mentions=f"{MAX_SECTIONS_PER_TENANT:,} sections for a tenant")
    assert refused.json()["error"]["detail"]["limit"] == "sections_per_tenant"
    assert demo_db["knowledge"].find_one({"slug": "one-more"}) is None
    # replacing a document counts its new sections instead of its old ones
    replaced = http.put(f"{DOCS}/bulk-0", json={"body": sections_doc(3)},
                        headers=bearer("admin"))
    assert replaced.status_code == 200, replaced.text


def test_sections_are_embedded_at_upload_and_only_what_changed(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    count = MAX_SECTIONS_PER_DOCUMENT
    started = time.perf_counter()
    added = http.put(f"{DOCS}/locker-rules", json={"body": sections_doc(count)},
                     headers=bearer("admin"))
    upload_s = time.perf_counter() - started
    assert added.status_code == 200, added.text
    assert added.json()["sections"] == count and added.json()["embedded"] == count
    stored = demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "locker-rules"})
    wanted = {text_key(e.searchable) for e in section_entries(stored)}
    assert wanted <= stored_keys(demo_db)  # every section's vector, before any search

    async def search(session: ClientSession) -> Any:
        return await session.call_tool("knowledge_search",
                                       {"query": "when is locker 7 emptied"})

    started = time.perf_counter()
    assert not over_mcp(server, bearer("staff"), search).is_error
    seeded_s = time.perf_counter() - started  # the seed's own sections are embedded here
    edited = http.put(f"{DOCS}/locker-rules", json={"body": sections_doc(count, changed=7)},
                      headers=bearer("admin"))
    assert edited.status_code == 200, edited.text
    assert edited.json()["embedded"] == 1  # the one reworded section
    stored = demo_db["knowledge"].find_one({"tenant_id": "demo", "slug": "locker-rules"})
    now = {text_key(e.searchable) for e in section_entries(stored)}
    assert now <= stored_keys(demo_db) and not (wanted - now) & stored_keys(demo_db)

    server.restart()  # a fresh process: nothing in memory, every vector in the store

    started = time.perf_counter()
    found = over_mcp(server, bearer("staff"), search)
    search_s = time.perf_counter() - started
    assert not found.is_error, found.content
    assert "23:00" in found.content[0].text
    print(f"\n{count} sections: upload {upload_s:.1f} s (embedding them); first search "
          f"{seeded_s:.1f} s (embedding the seeded documents, which no upload embedded); "
          f"after an edit (1 embedded) the first search of a fresh process {search_s:.1f} s")
