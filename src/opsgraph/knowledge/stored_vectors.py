"""Section vectors kept in the store, one record per embedded text, so each text is
embedded once: at upload, for the sections whose text changed, and never again at search.

Collection `knowledge_vectors`: `{_id: "<tenant>:<model>:<text sha256>", tenant_id, key,
model, vector}` — `vector` is the 384 float32 of MiniLM (`knowledge.embeddings`) as bytes,
`model` the first 16 hex digits of the ONNX file's SHA-256, so another model never reads
them. Every process and Lambda instance shares them (a disk cache, `vector_store`, is per
machine). The key is the text the rankers read (`search.Entry.searchable`), so a section
whose words and headings are unchanged keeps its vector across edits of its document.
Records of texts no section has any more are dropped when their document changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bson.binary import Binary
from pymongo.errors import BulkWriteError

from opsgraph.knowledge.embeddings import DIMENSIONS, get_embedder, model_path
from opsgraph.knowledge.vector_store import model_digest
from opsgraph.store.scope import TenantScope

if TYPE_CHECKING:
    from opsgraph.knowledge.embeddings import Vectors

COLLECTION = "knowledge_vectors"
_LOOKUP_BATCH = 500


def text_key(text: str) -> str:
    """The digest a text's vector is kept under."""
    return hashlib.sha256(text.encode()).hexdigest()


def _model() -> str:
    return model_digest(model_path())


def _record_id(scope: TenantScope, model: str, key: str) -> str:
    return f"{scope.tenant_id}:{model}:{key}"


def stored(scope: TenantScope, keys: Sequence[str]) -> dict[str, Vectors]:
    """The vectors kept for these text keys (those there are)."""
    import numpy as np  # heavy: numpy (cold start)

    model, found = _model(), {}
    for start in range(0, len(keys), _LOOKUP_BATCH):
        ids = [_record_id(scope, model, k) for k in keys[start:start + _LOOKUP_BATCH]]
        for doc in scope[COLLECTION].find({"_id": {"$in": ids}}):
            vector = np.frombuffer(bytes(doc["vector"]), dtype=np.float32)
            if vector.shape == (DIMENSIONS,):
                found[str(doc["key"])] = vector
    return found


def keep(scope: TenantScope, vectors: dict[str, Vectors]) -> None:
    """Store vectors by text key; one another writer stored first is left as it is (the
    same text, the same model: the same vector)."""
    if not vectors:
        return
    model, at = _model(), datetime.now(UTC)
    docs = [{"_id": _record_id(scope, model, key), "key": key, "model": model, "at": at,
             "vector": Binary(vector.astype("float32").tobytes())}
            for key, vector in vectors.items()]
    try:
        scope.bookkeeper()[COLLECTION].insert_many(docs, ordered=False)
    except BulkWriteError as exc:
        if any(e.get("code") != 11000 for e in exc.details.get("writeErrors", [])):
            raise  # anything but "stored already"


def vectors_of(scope: TenantScope, texts: Sequence[str]) -> tuple[Vectors, int]:
    """Vectors of `texts` in order, embedding (and keeping) only those not stored yet;
    and how many were embedded now."""
    import numpy as np  # heavy: numpy (cold start)

    keys = [text_key(t) for t in texts]
    have = stored(scope, sorted(set(keys)))
    missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in have}.items())
    if missing:
        fresh = get_embedder().embed([t for _, t in missing])
        made = {k: fresh[i] for i, (k, _) in enumerate(missing)}
        keep(scope, made)
        have.update(made)
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    for row, key in enumerate(keys):
        out[row] = have[key]
    return out, len(missing)


def forget(scope: TenantScope, old: Iterable[str], still_used: Iterable[str]) -> None:
    """Drop the records of texts in `old` that are not in `still_used`."""
    gone = set(old) - set(still_used)
    if gone:
        model = _model()
        scope.bookkeeper()[COLLECTION].delete_many(
            {"_id": {"$in": [_record_id(scope, model, k) for k in sorted(gone)]}})
