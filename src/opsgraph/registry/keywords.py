"""Keyword overlap between a request and each agent, weighted by rarity (IDF).

Embeddings carry the meaning; this small signal adds the exact business words that a
6-layer model blurs ("invoice", "rota", "procedure", "refund"). It is built from the specs
(name, domain, description) and costs one sparse dot product per request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opsgraph.registry.spec import AgentSpec

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "ies", "es", "ed", "er", "s")
STOPWORDS = frozenset("""
a an the to for of on in at and or my me i you your is are was be it its this that with by
from can could would pls please do does what whats who how when any have has get got u r we
our us they them he she her his him there their so just about all some up out as not no yes
""".split())


def stem(word: str) -> str:
    """A crude stem so that booking / bookings / booked meet at `book`."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def keywords(text: str) -> set[str]:
    """The stemmed content words of `text`."""
    words = _WORD.findall(text.lower().replace("'", ""))
    return {stem(w) for w in words if w not in STOPWORDS and len(w) > 1}


def agent_keywords(spec: AgentSpec) -> set[str]:
    """The words an agent is known by: its name, domain and description."""
    return keywords(f"{spec.name.replace('.', ' ').replace('_', ' ')} {spec.domain} "
                    f"{spec.description}")


@dataclass(frozen=True, slots=True)
class KeywordIndex:
    """Agents × vocabulary membership, plus each word's IDF."""

    vocabulary: dict[str, int]
    idf: npt.NDArray[np.float32]
    membership: npt.NDArray[np.float32]  # (agents, words), 1.0 where the agent has the word

    @classmethod
    def build(cls, specs: Iterable[AgentSpec]) -> KeywordIndex:
        """Index the agents' keywords, in the order given."""
        import numpy as np  # heavy: numpy (cold start)

        words = [agent_keywords(spec) for spec in specs]
        vocabulary = {w: i for i, w in enumerate(sorted(set().union(*words)))}
        membership = np.zeros((len(words), len(vocabulary)), dtype=np.float32)
        for row, found in enumerate(words):
            membership[row, [vocabulary[w] for w in found]] = 1.0
        df = membership.sum(axis=0)
        idf = np.log1p(len(words) / np.maximum(df, 1.0)).astype(np.float32)
        return cls(vocabulary, idf, membership)

    def overlap(self, request: str) -> npt.NDArray[np.float32]:
        """Per agent: the IDF share of the request's known words that the agent also has."""
        import numpy as np  # heavy: numpy (cold start)

        columns = [self.vocabulary[w] for w in keywords(request) if w in self.vocabulary]
        if not columns:
            return np.zeros(self.membership.shape[0], dtype=np.float32)
        weights = self.idf[columns]
        share: npt.NDArray[np.float32] = (
            self.membership[:, columns] @ weights / float(weights.sum())).astype(np.float32)
        return share
