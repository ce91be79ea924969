"""Rank agents for a request by embedding similarity.

Each agent is represented by a few short texts (the definition and each quoted example
request of its description, each of its `examples`, plus a line built from its domain, verbs,
slots and tools). An agent scores the best cosine of its texts, blended with their mean so
that one lucky example does not win alone, plus a small keyword-overlap term
(`keywords.py`). Agent vectors are computed once per registry version and kept in memory
and on disk (`OPSGRAPH_HOME/cache/agent-embeddings-<version>.npy`); a request embeds only
itself, and a request ranked before (the code plans' checks and the planner's candidates
rank the same request several times) is ranked from a small LRU.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opsgraph.knowledge.embeddings import (
    DIMENSIONS,
    clear_query_caches,
    get_embedder,
    save_vectors,
)
from opsgraph.registry.keywords import KeywordIndex
from opsgraph.registry.loader import get_registry
from opsgraph.registry.registry import Registry
from opsgraph.registry.spec import AgentSpec
from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from opsgraph.knowledge.embeddings import Vectors

log = logging.getLogger(__name__)
_QUOTED = re.compile(r'"([^"]+)"')

# score = MAX_WEIGHT * best text + (1 - MAX_WEIGHT) * mean of texts + KEYWORD_WEIGHT * overlap
MAX_WEIGHT = 0.7
KEYWORD_WEIGHT = 0.15
VERB_WORDS: dict[str, str] = {
    "get": "show details", "list": "list", "search": "find", "check": "check",
    "report": "report statistics", "create": "create new", "update": "change",
    "cancel": "cancel", "assign": "assign", "send": "send message", "issue": "issue",
    "refund": "refund", "register": "sign up",
}


@dataclass(frozen=True, slots=True)
class Ranked:
    """One ranked agent."""

    agent: str
    domain: str
    operations: tuple[str, ...]
    score: float

    def to_json(self) -> dict[str, Any]:
        """`{agent, domain, operations, score}` as `opsgraph rank --json` prints it."""
        return {"agent": self.agent, "domain": self.domain,
                "operations": list(self.operations), "score": round(self.score, 4)}


def agent_texts(spec: AgentSpec) -> list[str]:
    """The texts that represent an agent to the ranker.

    A description is a definition followed by quoted example requests; each example, and
    each entry of the spec's `examples`, is a text of its own (requests match requests
    best), the definition is one more, and a summary line adds the domain, verbs, slots and
    tools.
    """
    quoted = [e.strip() for e in _QUOTED.findall(spec.description) if e.strip()]
    examples = list(dict.fromkeys([*quoted, *spec.examples]))
    definition = _QUOTED.sub(" ", spec.description)
    definition = " ".join(re.sub(r"[\s,:;.]+$", "", definition.strip()).split())
    verbs = " ".join(VERB_WORDS[v] for v in spec.operations)
    slots = " ".join(slot.name.replace("_", " ") for slot in spec.slots)
    tools = " ".join(t.replace(".", " ").replace("_", " ") for t in spec.tools)
    summary = f"{spec.domain}: {verbs} {spec.short_name.replace('_', ' ')}; {slots}; {tools}"
    return [definition, *examples, summary]


@dataclass(frozen=True, slots=True)
class AgentVectors:
    """Every agent text's vector, with the agent each row belongs to."""

    version: str
    specs: tuple[AgentSpec, ...]
    owner: Any  # int array: row → index into specs
    vectors: Vectors
    keywords: KeywordIndex


_memory: dict[str, AgentVectors] = {}
_memory_lock = threading.Lock()
_computations = 0


def computations() -> int:
    """How many times this process embedded a registry's agents (cache misses)."""
    return _computations


def clear_memory_cache() -> None:
    """Forget in-memory agent vectors (the disk cache stays) and the rankings made with
    them."""
    with _memory_lock:
        _memory.clear()
    clear_request_cache()


def clear_request_cache() -> None:
    """Forget the requests ranked and their vectors (timing runs start cold)."""
    _ranking.cache_clear()
    clear_query_caches()


def cache_path(version: str) -> Path:
    """Where the agent vectors of one registry version are kept on disk."""
    return get_settings().home / "cache" / f"agent-embeddings-{version}.npy"


def agent_vectors(registry: Registry) -> AgentVectors:
    """The agent vectors of `registry`: from memory, else disk, else computed and saved."""
    with _memory_lock:
        found = _memory.get(registry.version)
        if found is not None:
            return found
        found = _build(registry)
        _memory[registry.version] = found
        return found


def _build(registry: Registry) -> AgentVectors:
    import numpy as np  # heavy: numpy (cold start)

    global _computations
    specs = tuple(registry)
    texts: list[str] = []
    owner: list[int] = []
    for i, spec in enumerate(specs):
        for text in agent_texts(spec):
            texts.append(text)
            owner.append(i)
    path = cache_path(registry.version)
    vectors = _read_cache(path, texts)
    if vectors is None:
        vectors = get_embedder().embed(texts)
        _computations += 1
        _write_cache(path, vectors)
    return AgentVectors(registry.version, specs, np.array(owner, dtype=np.int64), vectors,
                        KeywordIndex.build(specs))


def _read_cache(path: Path, texts: list[str]) -> Vectors | None:
    """Cached vectors when they fit `texts` (shape, dtype, spot-check of one row)."""
    import numpy as np  # heavy: numpy (cold start)

    try:
        vectors = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError) as exc:
        log.warning("agent embedding cache %s unreadable (%s); recomputing", path, exc)
        return None
    if vectors.dtype != np.float32 or vectors.shape != (len(texts), DIMENSIONS):
        log.warning("agent embedding cache %s does not fit the registry; recomputing", path)
        return None
    # A changed text recipe or model under the same registry version shows up here.
    probe = len(texts) // 2
    if not np.isfinite(vectors).all() or float(
            get_embedder().embed([texts[probe]])[0] @ vectors[probe]) < 0.999:
        log.warning("agent embedding cache %s is stale; recomputing", path)
        return None
    result: Vectors = vectors
    return result


def _write_cache(path: Path, vectors: Vectors) -> None:
    try:
        save_vectors(path, vectors)
    except OSError as exc:
        log.warning("cannot write agent embedding cache %s: %s", path, exc)


def rank_agents(request: str, top_k: int = 5, registry: Registry | None = None) -> list[Ranked]:
    """The `top_k` agents best suited to `request`, best first."""
    ranked = _ranking(registry if registry is not None else get_registry(),
                      " ".join(request.split()))
    return list(ranked[:max(top_k, 0)])


@functools.lru_cache(maxsize=256)
def _ranking(registry: Registry, request: str) -> tuple[Ranked, ...]:
    """Every agent of `registry` for `request`, best first (kept: the code plans' checks
    and the planner's candidates rank one request several times)."""
    import numpy as np  # heavy: numpy (cold start)

    index = agent_vectors(registry)
    query = get_embedder().embed_query(request)
    sims = index.vectors @ query
    n = len(index.specs)
    best = np.full(n, -1.0, dtype=np.float32)
    np.maximum.at(best, index.owner, sims)
    mean = np.bincount(index.owner, weights=sims, minlength=n) / np.bincount(
        index.owner, minlength=n)
    scores = (MAX_WEIGHT * best + (1.0 - MAX_WEIGHT) * mean
              + KEYWORD_WEIGHT * index.keywords.overlap(request))
    order = sorted(range(n), key=lambda i: (-float(scores[i]), index.specs[i].name))
    return tuple(Ranked(spec.name, spec.domain, tuple(spec.operations), float(scores[i]))
                 for i in order for spec in (index.specs[i],))


def warm(registry: Registry | None = None) -> None:
    """Load the model and the agent vectors now, so the first request pays nothing extra."""
    registry = registry if registry is not None else get_registry()
    agent_vectors(registry)
    get_embedder().embed_query("warm up")
