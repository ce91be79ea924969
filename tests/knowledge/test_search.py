"""The hybrid knowledge search: BM25 and MiniLM fused by reciprocal rank, filters, the
per-tenant cache, and search quality (recall@5) on a labelled question set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pymongo.database import Database

from opsgraph.knowledge.documents import bump_knowledge_version, document
from opsgraph.knowledge.search import METHODS, Index, index_for, recall_at, rrf
from opsgraph.store.scope import TenantScope

Document = dict[str, Any]
QUESTIONS = Path(__file__).parent / "data" / "search_questions.yaml"


def _questions() -> list[tuple[str, frozenset[str]]]:
    """(question, the sections that answer it): `section` or any of `sections`."""
    data = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    return [(str(q["q"]), frozenset(q["sections"]) if "sections" in q else
             frozenset([str(q["section"])])) for q in data["questions"]]


def _store(db: Database[Document], tenant: str, slug: str, body: str,
           tags: list[str] | None = None) -> None:
    db["knowledge"].insert_one({**document(tenant, slug, body, tags=tags), "tenant_id": tenant})
    bump_knowledge_version(db, tenant)


def test_reciprocal_rank_fusion_adds_one_over_k_plus_rank() -> None:
    fused = rrf([[7, 3], [3, 9]], k=60)
    assert fused == pytest.approx({7: 1 / 61, 3: 1 / 62 + 1 / 61, 9: 1 / 62})
    assert max(fused, key=lambda p: fused[p]) == 3  # found by both beats first by one


def test_recall_at_5_of_bm25_vectors_and_the_hybrid(demo_db: Database[Document]) -> None:
    index = index_for(TenantScope(demo_db, "demo"))
    questions = _questions()
    known = {e.id for e in index.entries}
    missing = sorted(want for _, right in questions for want in right if want not in known)
    assert not missing, f"{QUESTIONS.name} names sections the demo base lacks: {missing}"
    recall = {m: recall_at(index, questions, m) for m in METHODS}
    print(f"\nrecall@5 over {len(questions)} questions: "
          + ", ".join(f"{m} {recall[m]:.2f}" for m in ("bm25", "vector", "hybrid")))
    assert recall["hybrid"] >= min(recall["bm25"], recall["vector"])


def test_a_query_about_nothing_in_the_base_finds_nothing(demo_db: Database[Document]) -> None:
    index = index_for(TenantScope(demo_db, "demo"))
    assert index.search("xylophone zeppelin") == []
    assert index.search("the and of") == []  # stop words only: no word to match


def test_filters_on_document_and_catalogue_fields(demo_db: Database[Document]) -> None:
    scope = TenantScope(demo_db, "demo")
    demo_db["catalogue"].insert_one({
        "_id": "cat_demo_test-court", "tenant_id": "demo", "type": "resource",
        "key": "test-court", "name": "Clay Court 9", "kind": "court", "indoor": False,
        "surface": "red clay", "price_peak": 14.0})
    bump_knowledge_version(demo_db, "demo")
    index = index_for(scope)
    refunds = index.search("cancel and get money back", filters={"slug": "refund-policy"})
    assert refunds and {h.entry.document for h in refunds} == {"kb_demo_refund-policy"}
    clay = index.search("clay court", filters={"type": "resource", "surface": "Red Clay"})
    assert [h.entry.id for h in clay] == ["cat_demo_test-court"]
    assert clay[0].entry.kind == "object" and "surface: red clay" in clay[0].entry.text
    assert index.search("clay court", filters={"surface": "red clay", "indoor": True}) == []
    assert index.search("refund", filters={"no_such_field": "x"}) == []


def test_the_index_is_cached_per_tenant_and_rebuilt_on_change(
        demo_db: Database[Document]) -> None:
    scope = TenantScope(demo_db, "demo")
    first = index_for(scope)
    assert index_for(scope) is first
    assert not first.search("trampoline")
    _store(demo_db, "demo", "trampoline-park", "# Trampoline park\n\n## Socks\n\n"
           "Grip socks are compulsory on the trampolines; they cost £2.", tags=["kids"])
    second = index_for(scope)
    assert second is not first
    hits = second.search("what do children wear on the trampolines")
    assert hits[0].entry.id == "trampoline-park#socks"
    assert hits[0].bm25_rank is not None and hits[0].vector_rank == 1
    assert [h.entry.id for h in second.search("socks", filters={"tags": "kids"})] == [
        "trampoline-park#socks"]
    other = index_for(TenantScope(demo_db, "acme"))
    assert all(not h.entry.id.startswith("trampoline") for h in other.search("trampoline"))


def test_an_empty_base_has_an_empty_index() -> None:
    index = Index([])
    assert index.entries == () and index.search("anything") == []
    assert index.unknown_words("the sauna's hours") == ["sauna", "hours"]
    with pytest.raises(ValueError, match="at least one labelled question"):
        recall_at(index, [], "hybrid")
