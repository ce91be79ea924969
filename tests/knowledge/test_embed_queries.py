"""Several query texts embedded in one ONNX call: the same vectors as one at a time, the
cached ones not embedded again."""

from __future__ import annotations

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
    assert calls == [TEXTS]  # one call, each text once
    for one, together in zip(alone, batch, strict=False):
        assert float(one @ together) > 0.999  # padding in a batch leaves the vector be
    assert embedder.embed_queries(TEXTS[:2]) and calls == [TEXTS]  # cached now
    embedder.embed_query(TEXTS[2])
    assert calls == [TEXTS]
