"""The eight knowledge tools through the one operation path: navigation (search, grep,
find_objects, outline, file_outline) returns no sources; reading (read, read_section,
get_object) returns the document, section or object read as the source."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import AmbiguousReference, NotFound
from opsgraph.knowledge.documents import bump_knowledge_version
from opsgraph.principal import Role
from opsgraph.store.search_keys import with_keys

from .support import call

Document = dict[str, Any]


@pytest.mark.parametrize(("query", "section"), [
    ("can I get a refund on my membership?", "refund-policy#membership-fees"),
    ("what time do you open on sunday", "opening-hours#club-and-courts"),
    ("how long do I have to accept a waitlist place", "events-and-waitlists#when-an-event-is-full"),
])
def test_search_finds_the_section_and_is_not_a_source(
        shared_db: Database[Document], query: str, section: str) -> None:
    out = call(shared_db, Role.VISITOR, "knowledge.search", {"query": query})
    results = out["result"]["results"]
    assert section in [r["id"] for r in results[:3]]
    hit = next(r for r in results if r["id"] == section)
    assert hit["kind"] == "section" and hit["document"] == "kb_demo_" + section.split("#")[0]
    assert out["sources"] == []


def test_search_without_a_match_says_what_to_try(shared_db: Database[Document]) -> None:
    out = call(shared_db, Role.VISITOR, "knowledge.search", {"query": "xylophone zeppelin"})
    assert out["result"]["results"] == [] and out["sources"] == []
    assert "knowledge_grep" in out["result"]["hint"]


@pytest.mark.parametrize(("query", "unknown"), [
    ("what are the sauna opening hours?", ["sauna"]),
    ("how much is a padel court at the weekend, or for a wedding?", ["padel", "wedding"]),
    # other forms of words the base uses are known: restringing, mornings, cancellations
    ("restring my racket on sunday mornings; cancellation deadline", None),
    ("what time do you open on sunday", None),
    # times are read, not looked for: the club's page says 26 December
    ("r u open on boxing day, or tomorrow morning?", None),
])
def test_search_names_the_query_words_nothing_in_the_base_uses(
        shared_db: Database[Document], query: str, unknown: list[str] | None) -> None:
    out = call(shared_db, Role.VISITOR, "knowledge.search", {"query": query})["result"]
    assert out.get("unknown_words") == unknown


def test_search_filters_by_document_fields(shared_db: Database[Document]) -> None:
    out = call(shared_db, Role.MEMBER, "knowledge.search",
               {"query": "cancel", "filters": {"slug": "membership-plans"}})["result"]
    assert out["results"] and {r["document"] for r in out["results"]} == {
        "kb_demo_membership-plans"}


def test_grep_finds_an_exact_code(shared_db: Database[Document]) -> None:
    out = call(shared_db, Role.MEMBER, "knowledge.grep", {"pattern": "inv-1042"})
    assert [m["document"] for m in out["result"]["matches"]] == ["kb_demo_payments-and-invoices"]
    assert "INV-1042" in out["result"]["matches"][0]["line"] and out["sources"] == []


def test_outline_and_file_outline_are_navigation(shared_db: Database[Document]) -> None:
    base = call(shared_db, Role.VISITOR, "knowledge.outline", {})
    docs = {d["slug"]: d for d in base["result"]["documents"]}
    assert docs["faq"]["title"] == "Frequently asked questions" and docs["faq"]["sections"] > 1
    assert base["sources"] == []
    toc = call(shared_db, Role.VISITOR, "knowledge.file_outline", {"document": "faq"})
    assert "faq#is-there-parking" in [s["id"] for s in toc["result"]["sections"]]
    assert toc["sources"] == []


def test_read_is_a_document_source(shared_db: Database[Document]) -> None:
    out = call(shared_db, Role.VISITOR, "knowledge.read", {"document": "Opening hours"})
    assert "Saturday and Sunday: 08:00 to 20:00" in out["result"]["body"]
    assert out["sources"] == [{"kind": "document", "id": "kb_demo_opening-hours",
                               "title": "Opening hours"}]


@pytest.mark.parametrize("section", ["faq#is-there-parking", "is-there-parking",
                                     "Is there parking?"])
def test_read_section_by_id_path_or_heading_is_a_section_source(
        shared_db: Database[Document], section: str) -> None:
    out = call(shared_db, Role.VISITOR, "knowledge.read_section",
               {"document": "faq", "section": section})
    assert "40 free spaces" in out["result"]["text"]
    assert out["sources"] == [{"kind": "section", "id": "faq#is-there-parking",
                               "title": "Frequently asked questions — Is there parking?"}]


def test_an_unknown_section_lists_the_documents_sections(shared_db: Database[Document]) -> None:
    with pytest.raises(NotFound, match="faq#is-there-parking"):
        call(shared_db, Role.VISITOR, "knowledge.read_section",
             {"document": "faq", "section": "helipad"})


def _objects(db: Database[Document]) -> None:
    db["catalogue"].insert_many([with_keys("catalogue", o) for o in [  # as every write
        {"_id": "cat_demo_t-clay", "tenant_id": "demo", "type": "resource", "key": "t-clay",
         "name": "Clay Court 9", "kind": "court", "indoor": False, "price_peak": 14.0},
        {"_id": "cat_demo_t-hall", "tenant_id": "demo", "type": "resource", "key": "t-hall",
         "name": "Clay Hall", "kind": "court", "indoor": True, "price_peak": 20.0},
        {"_id": "cat_demo_t-grip", "tenant_id": "demo", "type": "product", "key": "t-grip",
         "name": "Overgrip", "sku": "GRP-OVR-1", "price": 3.5}]])
    bump_knowledge_version(db, "demo")


def test_get_object_by_name_key_or_sku_is_an_object_source(seeded: Database[Document]) -> None:
    _objects(seeded)
    for name in ("Clay Court 9", "t-clay", "cat_demo_t-clay"):
        out = call(seeded, Role.VISITOR, "knowledge.get_object", {"object": name})
        assert out["result"]["price_peak"] == 14.0
        assert out["sources"] == [{"kind": "object", "id": "cat_demo_t-clay",
                                   "title": "Clay Court 9"}]
    assert call(seeded, Role.VISITOR, "knowledge.get_object",
                {"object": "grp-ovr-1"})["result"]["name"] == "Overgrip"
    with pytest.raises(AmbiguousReference) as err:
        call(seeded, Role.VISITOR, "knowledge.get_object", {"object": "clay"})
    assert {c["id"] for c in err.value.candidates} == {"cat_demo_t-clay", "cat_demo_t-hall"}
    with pytest.raises(NotFound, match="of type 'product' named 'Clay Hall'"):
        call(seeded, Role.VISITOR, "knowledge.get_object",
             {"object": "Clay Hall", "type": "product"})


def test_find_objects_by_fields_is_navigation(seeded: Database[Document]) -> None:
    _objects(seeded)
    out = call(seeded, Role.VISITOR, "knowledge.find_objects",
               {"type": "resource", "where": {"kind": "court", "indoor": True}})
    assert "cat_demo_t-hall" in [o["id"] for o in out["result"]["objects"]]
    assert all(o["indoor"] is True for o in out["result"]["objects"])
    assert out["sources"] == []
    one = call(seeded, Role.VISITOR, "knowledge.find_objects", {"type": "product", "limit": 1})
    assert len(one["result"]["objects"]) == 1 and one["result"]["count"] >= 1
