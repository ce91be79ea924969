"""Our own search ranking (the store has no text indexes): BM25 and fuzzy name matching.

Everything here is pure and deterministic: ties break on the key, never on dict order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from opsgraph.store.search_keys import normalise as normalise  # its home is the store's keys

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an and are as at be by can do does for from have how i if in is it me my of on or "
    "our the this to we what when where which who will with you your".split())


def _stem(word: str) -> str:
    # A light suffix strip so "refunds"/"refunded"/"refunding", "cancel"/"cancelling" and
    # "pause"/"paused" meet. Not a full stemmer: it only has to be consistent.
    if len(word) <= 3:
        return word
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + repl
            break
    if len(word) > 3 and word[-1] == "e":
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2]:
        word = word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Search terms of `text`: normalised words, stop words dropped, lightly stemmed."""
    return [_stem(w) for w in _WORD.findall(normalise(text)) if w not in _STOPWORDS]


@dataclass
class BM25:
    """Okapi BM25 over a fixed set of (key, text) passages."""

    k1: float = 1.5
    b: float = 0.75
    _keys: list[str] = field(default_factory=list)
    _bags: list[Counter[str]] = field(default_factory=list)
    _lengths: list[int] = field(default_factory=list)
    _df: Counter[str] = field(default_factory=Counter)

    @classmethod
    def of(cls, passages: Iterable[tuple[str, str]]) -> BM25:
        """Index the passages."""
        index = cls()
        for key, text in passages:
            bag = Counter(terms(text))
            index._keys.append(key)
            index._bags.append(bag)
            index._lengths.append(sum(bag.values()))
            index._df.update(bag.keys())
        return index

    def search(self, query: str, limit: int = 10) -> list[tuple[str, float]]:
        """Best passages first as (key, score); passages sharing no term are left out."""
        wanted = set(terms(query))
        if not wanted or not self._keys:
            return []
        count = len(self._keys)
        avg = sum(self._lengths) / count or 1.0
        scored: list[tuple[str, float]] = []
        for key, bag, length in zip(self._keys, self._bags, self._lengths, strict=True):
            score = 0.0
            for term in wanted & bag.keys():
                idf = math.log(1 + (count - self._df[term] + 0.5) / (self._df[term] + 0.5))
                tf = bag[term]
                norm = self.k1 * (1 - self.b + self.b * length / avg)
                score += idf * tf * (self.k1 + 1) / (tf + norm)
            if score > 0:
                scored.append((key, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:limit]


def name_score(query: str, candidate: str) -> float:
    """How well `query` names `candidate`, 0..1 (1 = same after normalising).

    Word-prefix matches ("jan smi" → "Jane Smith") score high; otherwise a character
    similarity catches typos ("Jane Smtih").
    """
    q, c = normalise(query), normalise(candidate)
    if not q or not c:
        return 0.0
    if q == c or q.replace(" ", "") == c.replace(" ", ""):
        return 1.0
    q_words, c_words = q.split(), c.split()
    if all(any(cw.startswith(qw) for cw in c_words) for qw in q_words):
        return 0.9 if len(q_words) > 1 else 0.8
    if q in c:
        return 0.7
    return 0.65 * SequenceMatcher(None, q, c).ratio()


def words_prefix_match(query: str, candidate: str) -> bool:
    """True when every word of `query` starts a word of `candidate` ("jane" → "Jane Smith")."""
    q_words, c_words = normalise(query).split(), normalise(candidate).split()
    return bool(q_words) and all(any(cw.startswith(qw) for cw in c_words) for qw in q_words)
