"""The knowledge index's vectors kept on disk: a fresh process loads them instead of
embedding every section again; a change, a bad file or another model never reads stale
ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from pymongo.database import Database

from opsgraph.knowledge import search, vector_store
from opsgraph.knowledge.documents import bump_knowledge_version, document
from opsgraph.knowledge.embeddings import model_path
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope

Document = dict[str, Any]


def _fresh_process(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Forget every in-process index and vector, as a new process would; returns a list
    that counts the texts embedded from now on."""
    embedded: list[int] = []
    real = search._embed_cached

    def counting(texts: Sequence[str], *fill: Any) -> Any:
        embedded.append(len(texts))
        return real(texts, *fill)

    monkeypatch.setattr(search, "_indexes", type(search._indexes)())
    monkeypatch.setattr(search, "_vector_cache", type(search._vector_cache)())
    monkeypatch.setattr(search, "_embed_cached", counting)
    return embedded


def _files() -> list[Any]:
    return sorted((get_settings().home / "cache" / "knowledge-vectors").glob("*/*.npy"))


def test_a_fresh_process_loads_the_vectors_instead_of_embedding(
        demo_db: Database[Document], monkeypatch: pytest.MonkeyPatch) -> None:
    scope = TenantScope(demo_db, "demo")
    embedded = _fresh_process(monkeypatch)
    first = search.index_for(scope)
    assert embedded == [len(first.entries)]
    [kept] = _files()
    assert kept.parent.name == vector_store.model_digest(model_path())
    before = [h.entry.id for h in first.search("can I bring my dog")]

    embedded = _fresh_process(monkeypatch)
    again = search.index_for(scope)
    assert again is not first and embedded == []  # read from disk, nothing embedded
    assert [h.entry.id for h in again.search("can I bring my dog")] == before
    assert again.search("can I bring my pet", method="vector")  # the vectors work


def test_a_change_embeds_only_what_is_new_and_replaces_the_file(
        demo_db: Database[Document], monkeypatch: pytest.MonkeyPatch) -> None:
    scope = TenantScope(demo_db, "demo")
    _fresh_process(monkeypatch)
    search.index_for(scope)
    [old] = _files()

    embedded = _fresh_process(monkeypatch)
    demo_db["knowledge"].insert_one({**document("demo", "trampolines", "# Trampolines\n\n"
                                                "Jumping is £5 a session."),
                                     "tenant_id": "demo"})
    bump_knowledge_version(demo_db, "demo")
    index = search.index_for(scope)
    # the old file's vectors were not for these texts; the new section is embedded
    assert embedded == [len(index.entries)]
    [new] = _files()
    assert new != old and "-v" in new.name
    assert index.search("trampoline")[0].entry.document == "kb_demo_trampolines"


def test_an_unreadable_or_misshapen_file_is_rebuilt(
        demo_db: Database[Document], monkeypatch: pytest.MonkeyPatch) -> None:
    scope = TenantScope(demo_db, "demo")
    _fresh_process(monkeypatch)
    search.index_for(scope)
    [kept] = _files()
    for bad in (b"not a numpy file", None):
        if bad is None:
            np.save(kept, np.zeros((3, 384), dtype=np.float32))
        else:
            kept.write_bytes(bad)
        embedded = _fresh_process(monkeypatch)
        index = search.index_for(scope)
        assert embedded == [len(index.entries)]
        assert np.load(kept).shape == (len(index.entries), 384)  # written again, whole


def test_a_cache_that_cannot_be_written_only_costs_the_build(
        demo_db: Database[Document], monkeypatch: pytest.MonkeyPatch) -> None:
    home = get_settings().home
    home.mkdir(parents=True, exist_ok=True)
    (home / "cache").write_text("a file where the cache folder would go")
    _fresh_process(monkeypatch)
    index = search.index_for(TenantScope(demo_db, "demo"))
    assert index.search("can I bring my dog")
