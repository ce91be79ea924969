"""Several query texts embedded together: the same vectors as one at a time (a text's vector
does not depend on the texts beside it), the cached ones not embedded again."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from opsgraph.knowledge.embeddings import Embedder, model_path

TEXTS = ["Find the cancellation policy", "book court 2 for jane tomorrow at 7pm",
         "who is on shift on saturday"]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(model_path())


def test_a_batch_is_one_call_with_the_vectors_one_at_a_time_would_give(
        embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    alone = [np.array(embedder.embed_query(t)) for t in TEXTS]
    embedder.clear_query_cache()
    calls: list[list[str]] = []
    run = embedder._run

    def counted(texts: list[str]) -> Any:
        calls.append(list(texts))
        return run(texts)

    monkeypatch.setattr(embedder, "_run", counted)
    batch = embedder.embed_queries([*TEXTS, TEXTS[0]])
    assert calls == [TEXTS]  # together, each text once
    for one, together in zip([*alone, alone[0]], batch, strict=True):
        np.testing.assert_array_equal(one, together)  # its batch-mates leave a vector be
    assert embedder.embed_queries(TEXTS[:2]) and calls == [TEXTS]  # cached now
    embedder.embed_query(TEXTS[2])
    assert calls == [TEXTS]


def test_a_text_being_embedded_is_waited_for_not_embedded_twice(
        embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """`prefetch` (a run's request, embedded while the run reads its thread) and the ranker
    asking for the same text at once share one ONNX call."""
    embedder.clear_query_cache()
    started, release = threading.Event(), threading.Event()
    calls: list[list[str]] = []
    run = embedder._run
    expected = run([TEXTS[0]])[0]

    def slow(texts: list[str]) -> Any:
        calls.append(list(texts))
        started.set()
        release.wait(10)
        return run(texts)

    monkeypatch.setattr(embedder, "_run", slow)
    embedder.prefetch([TEXTS[0], TEXTS[1]])
    assert started.wait(10)
    asked: list[Any] = []
    asker = threading.Thread(target=lambda: asked.append(embedder.embed_query(TEXTS[0])))
    asker.start()
    asker.join(0.2)
    assert asker.is_alive() and not asked  # waiting for the prefetch, not embedding
    release.set()
    asker.join(10)
    assert calls == [[TEXTS[0], TEXTS[1]]]
    assert float(np.array(asked[0]) @ expected) > 0.999  # the vector of the text asked for
    embedder.embed_query(TEXTS[1])
    assert calls == [[TEXTS[0], TEXTS[1]]]  # the other prefetched text is cached too


def test_a_failed_prefetch_leaves_the_text_to_its_caller(
        embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    embedder.clear_query_cache()
    started, release = threading.Event(), threading.Event()
    run = embedder._run

    def failing_in_the_background(texts: list[str]) -> Any:
        if threading.current_thread().name.startswith("embed-prefetch"):
            started.set()
            release.wait(10)
            raise RuntimeError("onnx fell over")
        return run(texts)

    monkeypatch.setattr(embedder, "_run", failing_in_the_background)
    embedder.prefetch([TEXTS[2]])
    assert started.wait(10)
    asked: list[Any] = []
    asker = threading.Thread(target=lambda: asked.append(embedder.embed_query(TEXTS[2])))
    asker.start()
    asker.join(0.2)
    assert asker.is_alive()  # waiting for the prefetch
    release.set()  # which fails: the caller embeds the text itself
    asker.join(10)
    assert asked[0].shape == (384,) and not asked[0].flags.writeable
