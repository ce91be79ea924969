"""Hybrid search over a tenant's knowledge: BM25 by words, MiniLM by meaning, fused by rank.

What is searched (an `Entry`): every section of every document in the `knowledge`
collection (`documents.stored_sections`), and every object of the `catalogue` collection
written out as text (its name, type and fields). Each entry keeps the fields a filter may
test: a section has `tags`, `slug`, `document` and `title` of its document; an object has
its own stored fields (`type`, `name`, ...).

- BM25 (`bm25s`, Lucene's variant) over lowercased words without English stop words (NLTK's
  list, as bm25s ships it), each word lightly stemmed (plural and common suffixes), title
  words counted twice.
- Vectors: the MiniLM embedder of `knowledge.embeddings`, cosine similarity; only entries
  at least `MIN_SIMILARITY` alike count as matches, so a query about nothing in the base
  finds nothing.
- Hybrid: reciprocal rank fusion, `sum(1 / (RRF_K + rank))` over both rankings (k = 60,
  ranks from 1), ties broken by entry id so results are stable.

An `Index` is built per tenant and state of its knowledge: the key is the tenant, its
`knowledge_version` and a digest of the entries' text and fields, so an edit that forgot
to bump the version still rebuilds. The last few indexes stay cached in process; section
vectors are cached by text in process, kept in the store (`knowledge.stored_vectors`:
a document's sections are embedded when it is uploaded, only those whose text changed, so
a search embeds only its query) and on disk (`knowledge.vector_store`), so a fresh
process loads them instead of embedding every entry again.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from opsgraph.knowledge.documents import knowledge_version, stored_sections
from opsgraph.knowledge.embeddings import DIMENSIONS, get_embedder
from opsgraph.knowledge.stored_vectors import vectors_of
from opsgraph.knowledge.vector_store import stored_or_embedded
from opsgraph.store.scope import TenantScope
from opsgraph.store.search_keys import KEY_FIELDS

if TYPE_CHECKING:
    from opsgraph.knowledge.embeddings import Vectors

Document = dict[str, Any]
Method = Literal["hybrid", "bm25", "vector"]
METHODS: tuple[Method, ...] = ("hybrid", "bm25", "vector")
RRF_K = 60
MIN_SIMILARITY = 0.3
"""Cosine similarity below which an entry is not a match by meaning (MiniLM puts unrelated
short texts around 0 to 0.2)."""
CATALOGUE = "catalogue"
_CACHE_SIZE = 8
_VECTOR_CACHE_SIZE = 20_000
_WORD = re.compile(r"\w+", re.UNICODE)
_ASKING_WORDS = frozenset({
    "much", "many", "often", "ever", "please", "thanks", "hello", "anyone", "anything",
    "someone", "something", "tell", "know",
    # the people an asker speaks of: who asks, not what is asked about
    "daughter", "daughters", "sons", "child", "children", "kids", "wife", "husband",
    "partner", "friend", "friends", "mum", "mom", "dad", "mother", "father", "grandson",
    "granddaughter", "colleague", "boss",
    # when: a day or season is a time to read, not a thing the club offers
    "today", "tonight", "tomorrow", "yesterday", "morning", "mornings", "afternoon",
    "afternoons", "evening", "evenings", "night", "nights", "weekday", "weekdays", "weekend",
    "weekends", "christmas", "boxing", "easter", "halloween", "holiday", "holidays",
    "spring", "summer", "autumn", "winter"})
"""Words of asking that are not NLTK stop words, the people an asker speaks of and the times
asked about, that no knowledge base need use."""
_SHORTEST_FORM = 5
"""The fewest letters a stem needs to stand for the longer words it starts."""
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s")


def stem(word: str) -> str:
    """A light English stem: "cancellations" → "cancel", "bookings" → "book",
    "classes" → "class", "trampolines" → "trampoline"."""
    for suffix in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        base = word[: -len(suffix)]
        if suffix == "ies":
            return base + "y"
        if suffix == "es" and not base.endswith(("s", "x", "ch", "sh")):
            continue  # "trampolines": only the s goes
        if suffix == "s" and base.endswith(("s", "u", "i")):
            return word  # "class", "bus", "taxis"
        if (suffix not in ("s", "es") and len(base) > 3 and base[-1] == base[-2]
                and base[-1] not in "aeiousz"):
            return base[:-1]  # "cancell" → "cancel", "swimm" → "swim"
        return base
    return word


def _stopwords() -> frozenset[str]:
    # heavy: bm25s (cold start)
    from bm25s.stopwords import STOPWORDS_EN_PLUS  # NLTK's English list: "how", "can", "my"

    return frozenset(STOPWORDS_EN_PLUS)


def words(text: str, stopwords: frozenset[str]) -> list[str]:
    """The stemmed words BM25 counts (lowercase, stop words left out)."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in stopwords]


@dataclass(frozen=True, slots=True)
class Entry:
    """One searchable thing: a document's section or a catalogue object."""

    id: str  # a section id (`slug#path`) or a catalogue object's id
    kind: Literal["section", "object"]
    document: str  # the stored document's id; for an object, its own id
    title: str  # the section's title, or the object's name
    text: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def searchable(self) -> str:
        """What both rankers read: the title twice (it says what the text is about)."""
        context = self.fields.get("title") if self.kind == "section" else self.fields.get("type")
        return f"{self.title}\n{self.title}\n{context or ''}\n{self.text}"


@dataclass(frozen=True, slots=True)
class Hit:
    entry: Entry
    score: float  # fused score (hybrid), BM25 score or cosine similarity
    bm25_rank: int | None  # 1-based, None when BM25 found no word of the query
    vector_rank: int | None  # 1-based, None when below MIN_SIMILARITY


def _scalar(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_scalar(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    return str(value)


def section_entries(doc: Document) -> list[Entry]:
    """A stored document's sections as entries."""
    fields = {"document": str(doc["_id"]), "slug": doc.get("slug"), "title": doc.get("title"),
              "tags": list(doc.get("tags") or [])}
    out = []
    for s in stored_sections(doc):
        heading = " > ".join(s.path) if s.path else s.title
        out.append(Entry(s.id, "section", str(doc["_id"]), heading, s.text, fields))
    return out


_OBJECT_HIDDEN = frozenset({"_id", "tenant_id", "version", *KEY_FIELDS})
"""Bookkeeping, not what an object is: its search keys (store.search_keys) included."""


def object_entry(obj: Document) -> Entry:
    """A catalogue object as an entry: its name, then one `field: value` line per field."""
    fields = {k: v for k, v in obj.items() if k not in _OBJECT_HIDDEN}
    name = str(obj.get("name") or obj.get("title") or obj["_id"])
    lines = [f"{k}: {_scalar(v)}" for k, v in fields.items() if k not in ("name", "title")]
    return Entry(str(obj["_id"]), "object", str(obj["_id"]), name, "\n".join(lines), fields)


def matches(entry: Entry, filters: Mapping[str, Any]) -> bool:
    """Every filter holds: the entry's field equals the value (text compared without case)
    or, for a list field, holds it. A field the entry lacks fails its filter."""
    for key, wanted in filters.items():
        if key not in entry.fields:
            return False
        have = entry.fields[key]
        values = have if isinstance(have, list | tuple) else [have]
        if not any(_same(v, wanted) for v in values):
            return False
    return True


def _same(have: Any, wanted: Any) -> bool:
    if isinstance(have, str) and isinstance(wanted, str):
        return have.casefold() == wanted.strip().casefold()
    if isinstance(have, bool) or isinstance(wanted, bool):
        return have is wanted
    return bool(have == wanted)


def rrf(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: position → sum over rankings of 1 / (k + rank)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking, start=1):
            fused[position] = fused.get(position, 0.0) + 1.0 / (k + rank)
    return fused


class Index:
    """BM25 and vectors over a fixed list of entries."""

    def __init__(self, entries: Sequence[Entry],
                 embed: Callable[[Sequence[str]], Vectors] | None = None,
                 embed_query: Callable[[str], Vectors] | None = None) -> None:
        import bm25s  # heavy: bm25s (cold start)

        self.entries = tuple(entries)
        self._stopwords = _stopwords()
        self._bm25 = bm25s.BM25()
        self._empty = not self.entries
        corpus = [words(e.searchable, self._stopwords) or [""] for e in self.entries]
        self._vocabulary = frozenset(w for entry in corpus for w in entry)
        self._sorted_vocabulary = sorted(self._vocabulary)
        if not self._empty:
            self._bm25.index(corpus, show_progress=False)
        self._embed_query = embed_query
        self._vectors: Vectors | None = (
            embed([e.searchable for e in self.entries])
            if embed is not None and not self._empty else None)

    def unknown_words(self, text: str) -> list[str]:
        """The words of `text` that no entry uses in any form, in order, once each (stop
        words, words of asking, numbers and words under four letters left out): "what are
        the sauna opening hours?" → ["sauna"] when nothing mentions a sauna. A form is the
        same stem as BM25 reads it, or a stem of five letters or more that starts the other
        ("restring" and "restringing", "smaller" and "small")."""
        found: list[str] = []
        for word in _WORD.findall(text.lower()):
            if (len(word) >= 4 and word.isalpha() and word not in self._stopwords
                    and word not in _ASKING_WORDS and word not in found
                    and not self._known(word)):
                found.append(word)
        return found

    def _known(self, word: str) -> bool:
        base = stem(word)
        if base in self._vocabulary:
            return True
        at = bisect.bisect_left(self._sorted_vocabulary, base)
        if (len(base) >= _SHORTEST_FORM and at < len(self._sorted_vocabulary)
                and self._sorted_vocabulary[at].startswith(base)):
            return True  # a longer form: "restr" of "restring", "restringing"
        return any(word[:n] in self._vocabulary for n in range(_SHORTEST_FORM, len(word)))

    def bm25(self, query: str) -> list[tuple[int, float]]:
        """(position, score) of entries sharing a word with the query, best first."""
        terms = words(query, self._stopwords)
        if self._empty or not terms:
            return []
        scores = self._bm25.get_scores(terms)
        found = [(i, float(s)) for i, s in enumerate(scores) if s > 0]
        return sorted(found, key=lambda p: (-p[1], self.entries[p[0]].id))

    def vector(self, query: str) -> list[tuple[int, float]]:
        """(position, cosine) of entries alike in meaning, best first."""
        if self._vectors is None or self._embed_query is None or not query.strip():
            return []
        sims = self._vectors @ self._embed_query(query)
        found = [(i, float(s)) for i, s in enumerate(sims) if s >= MIN_SIMILARITY]
        return sorted(found, key=lambda p: (-p[1], self.entries[p[0]].id))

    def search(self, query: str, *, limit: int = 5, filters: Mapping[str, Any] | None = None,
               method: Method = "hybrid") -> list[Hit]:
        """The best entries for the query among those the filters keep."""
        def keep(position: int) -> bool:
            return not filters or matches(self.entries[position], filters)

        lexical = [p for p in self.bm25(query) if keep(p[0])] if method != "vector" else []
        semantic = [p for p in self.vector(query) if keep(p[0])] if method != "bm25" else []
        b_rank = {i: r for r, (i, _) in enumerate(lexical, start=1)}
        v_rank = {i: r for r, (i, _) in enumerate(semantic, start=1)}
        if method == "bm25":
            scored = lexical
        elif method == "vector":
            scored = semantic
        else:
            fused = rrf([[i for i, _ in lexical], [i for i, _ in semantic]])
            scored = sorted(fused.items(), key=lambda p: (-p[1], self.entries[p[0]].id))
        return [Hit(self.entries[i], s, b_rank.get(i), v_rank.get(i)) for i, s in scored[:limit]]


# ── the per-tenant cache ─────────────────────────────────────────────────────────────────

_indexes: OrderedDict[tuple[str, int, str], Index] = OrderedDict()
_vector_cache: OrderedDict[str, Any] = OrderedDict()
_lock = threading.Lock()


def _embed_cached(texts: Sequence[str],
                  fill: Callable[[Sequence[str]], Vectors] | None = None) -> Vectors:
    """Vectors of texts, from this process's cache by text digest, the rest from `fill`
    (the tenant's stored vectors, embedding only what no one embedded yet; default: the
    embedder)."""
    import numpy as np  # heavy: numpy (cold start)

    keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    with _lock:
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True)
                          if k not in _vector_cache}.items())
    if missing:
        fresh = (fill or get_embedder().embed)([t for _, t in missing])
        with _lock:
            for (k, _), vector in zip(missing, fresh, strict=True):
                _vector_cache[k] = vector
            while len(_vector_cache) > _VECTOR_CACHE_SIZE:
                _vector_cache.popitem(last=False)
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    with _lock:
        for row, k in enumerate(keys):
            vector = _vector_cache.get(k)
            if vector is None:  # evicted by a concurrent build: embed it again
                vector = get_embedder().embed([texts[row]])[0]
            out[row] = vector
    return out


def _remember(texts: Sequence[str], vectors: Vectors) -> None:
    """Vectors read from disk join the per-text cache, as if just embedded."""
    with _lock:
        for text, vector in zip(texts, vectors, strict=True):
            _vector_cache[hashlib.sha256(text.encode()).hexdigest()] = vector
        while len(_vector_cache) > _VECTOR_CACHE_SIZE:
            _vector_cache.popitem(last=False)


def _embed_query(text: str) -> Vectors:
    return get_embedder().embed_query(text)


def entries_of(scope: TenantScope) -> list[Entry]:
    """Every section and catalogue object of the tenant, in a stable order."""
    out: list[Entry] = []
    for doc in scope["knowledge"].find({}, sort=[("_id", 1)]):
        out.extend(section_entries(doc))
    out.extend(object_entry(o) for o in scope[CATALOGUE].find({}, sort=[("_id", 1)]))
    return out


def _digest(entries: Sequence[Entry]) -> str:
    payload = [(e.id, e.kind, e.title, e.text, sorted((k, _scalar(v)) for k, v in e.fields.items()))
               for e in entries]
    return hashlib.sha256(json.dumps(payload, default=str).encode()).hexdigest()


def index_for(scope: TenantScope) -> Index:
    """The tenant's index for its knowledge as it is now, built on first use and cached."""
    entries = entries_of(scope)
    version = knowledge_version(scope)
    key = (scope.tenant_id, version, _digest(entries))
    with _lock:
        cached = _indexes.get(key)
        if cached is not None:
            _indexes.move_to_end(key)
            return cached

    def from_store(texts: Sequence[str]) -> Vectors:
        return vectors_of(scope, texts)[0]

    embed = stored_or_embedded(scope.tenant_id, version,
                               lambda texts: _embed_cached(texts, from_store), _remember)
    built = Index(entries, embed, _embed_query)
    with _lock:
        _indexes[key] = built
        while len(_indexes) > _CACHE_SIZE:
            _indexes.popitem(last=False)
    return built


def recall_at(index: Index, questions: Sequence[tuple[str, Collection[str]]], method: Method,
              k: int = 5) -> float:
    """Share of questions, each with the entry ids that answer it, whose top `k` holds one."""
    if not questions:
        raise ValueError("recall needs at least one labelled question")
    found = sum(any(h.entry.id in right for h in index.search(q, limit=k, method=method))
                for q, right in questions)
    return found / len(questions)
