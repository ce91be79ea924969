"""Documents: sections from headings with stable ids, repeated headings, plain text, the
stored shape and the tenant's knowledge version."""

from __future__ import annotations

import pytest

from opsgraph.errors import BadInput, NotFound
from opsgraph.knowledge.documents import (
    Section,
    bump_knowledge_version,
    document,
    knowledge_version,
    sections,
    slugify,
    stored_sections,
)
from opsgraph.store.scope import TenantScope

POLICY = """# Refund policy

Refunds go back to the card that paid.

## Refunds

Within 14 days of payment.

### Late cancellations

No refund after the deadline.

## Coaching

```
# not a heading inside code
```

### Late cancellations

Coaching has its own 48-hour rule.
"""


def test_sections_follow_headings_with_ids_from_the_heading_path() -> None:
    found = sections("refund-policy", POLICY)
    assert [s.id for s in found] == [
        "refund-policy#_top", "refund-policy#refunds",
        "refund-policy#refunds/late-cancellations", "refund-policy#coaching",
        "refund-policy#coaching/late-cancellations"]
    top, refunds, late, coaching, coaching_late = found
    assert top == Section("refund-policy#_top", "Refund policy", 0,
                          "Refunds go back to the card that paid.", ())
    assert (late.title, late.level, late.text) == ("Late cancellations", 3,
                                                   "No refund after the deadline.")
    assert late.path == ("Refunds", "Late cancellations")
    assert refunds.text == "Within 14 days of payment."  # not its subsection's text
    assert "# not a heading inside code" in coaching.text
    assert coaching_late.text == "Coaching has its own 48-hour rule."


def test_ids_are_stable_when_other_parts_of_the_document_change() -> None:
    before = {s.title: s.id for s in sections("p", POLICY)}
    edited = POLICY.replace("## Refunds\n", "## Intro\n\nNew text.\n\n## Refunds\n")
    after = {s.title: s.id for s in sections("p", edited)}
    assert after["Refunds"] == before["Refunds"] == "p#refunds"
    assert after["Coaching"] == before["Coaching"]


def test_repeated_headings_get_unique_ids_in_document_order() -> None:
    text = "## Notes\none\n## Notes\ntwo\n### Extra\nthree\n## Notes\nfour\n"
    found = sections("faq", text)
    assert [s.id for s in found] == ["faq#notes", "faq#notes-2", "faq#notes-2/extra",
                                     "faq#notes-3"]
    assert [s.text for s in found] == ["one", "two", "three", "four"]
    assert len({s.id for s in sections("faq", POLICY + text)}) == len(
        sections("faq", POLICY + text))


def test_several_level_one_headings_are_all_part_of_the_paths() -> None:
    found = sections("d", "intro\n# A\na\n## B\nb\n# C\nc")
    assert [s.id for s in found] == ["d#_top", "d#a", "d#a/b", "d#c"]
    assert found[0].text == "intro"


def test_plain_text_is_one_section_and_markdown_without_headings_too() -> None:
    text = "# not a heading in a text file\nLockers are emptied nightly.\n"
    (only,) = sections("lockers", text, "text", "Lockers")
    assert (only.id, only.title, only.level) == ("lockers#_top", "Lockers", 0)
    assert only.text == text.strip()
    (md,) = sections("n", "just words")
    assert md.id == "n#_top" and md.text == "just words"


def test_slugify_keeps_ascii_words() -> None:
    assert slugify("Late cancellations (courts) — Café") == "late-cancellations-courts-cafe"
    assert sections("x", "## ???\nq")[0].id == "x#section"


def test_stored_document_carries_kind_sections_and_version() -> None:
    doc = document("demo", "refund-policy", POLICY)
    assert doc["_id"] == "kb_demo_refund-policy"
    assert (doc["title"], doc["kind"], doc["version"]) == ("Refund policy", "markdown", 1)
    assert stored_sections(doc) == sections("refund-policy", POLICY)
    legacy = {k: v for k, v in doc.items() if k != "sections"}
    assert stored_sections(legacy) == stored_sections(doc)
    text = document("demo", "lockers", "Lockers close at 22:00.", kind="text")
    assert text["title"] == "Lockers" and len(text["sections"]) == 1


@pytest.mark.parametrize("slug", ["Bad Slug", "", "a--b", "-a", "x/y", "hours\n", "\nhours"])
def test_bad_slugs_are_refused_by_name(slug: str) -> None:
    with pytest.raises(BadInput, match="slug"):
        document("demo", slug, "text")


def test_bad_kind_is_refused() -> None:
    with pytest.raises(BadInput, match="kind 'pdf'"):
        document("demo", "a", "text", kind="pdf")  # type: ignore[arg-type]


def test_knowledge_version_counts_changes_per_tenant(db) -> None:  # type: ignore[no-untyped-def]
    db["tenants"].insert_many([{"_id": "one"}, {"_id": "two"}])
    assert knowledge_version(TenantScope(db, "one")) == 0
    assert bump_knowledge_version(db, "one") == 1
    assert bump_knowledge_version(db, "one") == 2
    assert knowledge_version(TenantScope(db, "one")) == 2
    assert knowledge_version(TenantScope(db, "two")) == 0
    with pytest.raises(NotFound, match="tenant 'nobody' not found"):
        bump_knowledge_version(db, "nobody")


def test_seeded_documents_store_their_sections_and_old_rows_get_them_once(
        demo_db) -> None:  # type: ignore[no-untyped-def]
    from opsgraph.store.seed import seed

    scope = TenantScope(demo_db, "demo")
    docs = list(demo_db["knowledge"].find({"tenant_id": "demo"}))
    assert docs and all(doc.get("sections") for doc in docs)
    faq = next(d for d in docs if d["slug"] == "faq")
    assert stored_sections(faq) == sections("faq", faq["body"], "markdown", faq["title"])
    version = knowledge_version(scope)
    seed(demo_db, "demo")  # nothing changed: nothing written, the version stays
    assert knowledge_version(scope) == version
    assert demo_db["knowledge"].find_one({"_id": faq["_id"]})["version"] == faq["version"]
    # a row stored before sections were seeded is read by parsing its body ...
    demo_db["knowledge"].update_one({"_id": faq["_id"]}, {"$unset": {"sections": ""}})
    legacy = demo_db["knowledge"].find_one({"_id": faq["_id"]})
    assert "sections" not in legacy and stored_sections(legacy) == stored_sections(faq)
    # ... and the next seed writes its sections, once
    seed(demo_db, "demo")
    again = demo_db["knowledge"].find_one({"_id": faq["_id"]})
    assert again["sections"] == faq["sections"] and again["version"] == faq["version"] + 1
    assert knowledge_version(scope) == version + 1
    seed(demo_db, "demo")
    assert knowledge_version(scope) == version + 1
