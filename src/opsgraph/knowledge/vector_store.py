"""The knowledge index's vectors on disk, so a fresh process does not embed again.

Embedding every section and catalogue object with MiniLM is most of the cost of a
tenant's first search in a process (about 4 s for the demo club on one core). The vectors
are kept under `OPSGRAPH_HOME/cache/knowledge-vectors/<model>/`, `<model>` being the
first 16 hex digits of the ONNX model file's SHA-256 (another model never reads them),
one `.npy` file per tenant named by the tenant, its knowledge version and a digest of the
exact texts embedded, so a file is only ever read for the texts it was made from.

Writes go to a temporary file renamed into place: a crash halfway leaves no file, and two
processes building the same index write the same bytes. Writing a tenant's file removes its
older ones. A file that cannot be read, or holds the wrong shape, is treated as absent and
rebuilt; a cache directory that cannot be written only costs the next process the build.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from opsgraph.knowledge.embeddings import DIMENSIONS, model_path, save_vectors
from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from opsgraph.knowledge.embeddings import Vectors

log = logging.getLogger(__name__)
_model_digest: dict[Path, str] = {}
_lock = threading.Lock()


def model_digest(path: Path) -> str:
    """The first 16 hex digits of the model file's SHA-256 (hashed once per process)."""
    with _lock:
        known = _model_digest.get(path)
    if known is None:
        sha = hashlib.sha256()
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                sha.update(chunk)
        known = sha.hexdigest()[:16]
        with _lock:
            _model_digest[path] = known
    return known


def texts_digest(texts: Sequence[str]) -> str:
    """What the vectors were made from: every text, in order."""
    sha = hashlib.sha256()
    for text in texts:
        sha.update(hashlib.sha256(text.encode()).digest())
    return sha.hexdigest()[:16]


def _tenant_part(tenant: str) -> str:
    return hashlib.sha256(tenant.encode()).hexdigest()[:12]


def vector_file(tenant: str, version: int, texts: Sequence[str]) -> Path:
    """Where the vectors of `texts`, the tenant's knowledge at `version`, are kept."""
    folder = (get_settings().home / "cache" / "knowledge-vectors"
              / model_digest(model_path()))
    return folder / f"{_tenant_part(tenant)}-v{version}-{texts_digest(texts)}.npy"


def load(path: Path, rows: int) -> Vectors | None:
    """The vectors kept at `path`, or None when there are none (or none of this shape)."""
    import numpy as np  # heavy: numpy (cold start)

    try:
        vectors = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("knowledge vectors at %s unreadable (%s): rebuilding", path, exc)
        return None
    if vectors.shape != (rows, DIMENSIONS) or vectors.dtype != np.float32:
        log.warning("knowledge vectors at %s have shape %s, not (%d, %d): rebuilding",
                    path, vectors.shape, rows, DIMENSIONS)
        return None
    loaded: Vectors = vectors
    return loaded


def save(path: Path, vectors: Vectors) -> None:
    """Keep `vectors` at `path` (atomically) and drop the tenant's older files."""
    try:
        save_vectors(path, vectors)
        tenant = path.name.split("-", 1)[0]
        for old in path.parent.glob(f"{tenant}-v*.npy"):
            if old != path:
                with contextlib.suppress(OSError):
                    old.unlink()
    except OSError as exc:
        log.warning("could not keep knowledge vectors at %s: %s", path, exc)


def stored_or_embedded(tenant: str, version: int,
                       embed: Callable[[Sequence[str]], Vectors],
                       remember: Callable[[Sequence[str], Vectors], None]
                       ) -> Callable[[Sequence[str]], Vectors]:
    """An embedder for the tenant's index: the vectors on disk when they were made from
    these very texts (handed to `remember`, so a later change embeds only what is new),
    else `embed`'s, kept for the next process."""
    def vectors(texts: Sequence[str]) -> Vectors:
        path = vector_file(tenant, version, texts)
        found = load(path, len(texts))
        if found is not None:
            remember(texts, found)
            return found
        made = embed(texts)
        save(path, made)
        return made

    return vectors
