"""Lining a record's name up with the words of a request.

A request word meets a name word exactly (1.0), as a loose synonym ("night" for
"evening", 0.95), as its start ("smi" for "Smith", 0.9), or as a typo of it (rapidfuzz's
ratio ≥ 80, scaled below 0.8). A record's match is the run of request words (function
words may sit inside it) that meets the most of its name: the score is the sum of the
meetings over the name's words, so "Jane Smith" scores 1.0 for Jane Smith and 0.95 for
Jane Smithson, and "Jane" alone 0.5 for both. Numbers are written as digits ("court one"
is "court 1"), a possessive loses its "'s", and underscores split words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from opsgraph.resolve.tokens import Token, number_value
from opsgraph.resolve.vocabulary import (
    FUNCTION_WORDS,
    GENERIC,
    NUMBER_SIGNS,
    STOPWORDS,
    SYNONYMS,
)
from opsgraph.store.search_keys import PREFIX_CHARS, name_key, words

Document = dict[str, Any]
_PUNCT = re.compile(r"[’'.\-]")
_MIN_SINGLE = 0.48  # a lone word must name half of a record's name ("fatimas": 0.98 of a half)
_TYPO = 80.0
_DISTINCTIVE = 5  # letters a lone word of a catalogue name needs to name it alone


@dataclass(frozen=True, slots=True)
class Word:
    """A request word as names are compared: `key` is its plain form."""

    key: str
    start: int
    end: int
    stop: bool  # a function word: may sit inside a name, never names one alone


@dataclass(frozen=True, slots=True)
class Match:
    """The best run of request words (`first`..`last`, indexes into the words) for a
    record, how well it names it, and its characters (`start`, `end`)."""

    doc: Document
    score: float
    first: int
    last: int
    start: int
    end: int
    weak: bool = False  # one word of a longer name, kept only when it names one record


def key_of(word: str) -> str:
    """The plain form a word is compared in: no possessive, no punctuation, numbers as
    digits ("one" → "1")."""
    w = "and" if word == "&" else re.sub(r"[’']s$", "", word)
    number = number_value([w]) if w not in ("a", "an") else None
    if number is not None:
        return str(number)
    return _PUNCT.sub("", w)


def request_words(tokens: list[Token]) -> list[Word]:
    """The request's words for name matching (underscored words split)."""
    out = []
    for n, t in enumerate(tokens):
        following = tokens[n + 1].norm if n + 1 < len(tokens) else ""
        if t.norm in NUMBER_SIGNS and key_of(following).isdigit():
            continue  # "court no. 1", "court number one"
        offset = t.start
        for part in t.norm.split("_"):
            if part:
                key = key_of(part)
                out.append(Word(key, offset, offset + len(part), key in STOPWORDS or not key))
            offset += len(part) + 1
    return out


def probe_words(tokens: list[Token]) -> list[str]:
    """What to look up in `name_prefixes`: every word that may start a name word."""
    probes: set[str] = set()
    for w in request_words(tokens):
        if w.stop or (len(w.key) < 2 and not w.key.isdigit()):
            continue
        probes.add(w.key[:PREFIX_CHARS])
        probes.update(s[:PREFIX_CHARS] for s in SYNONYMS.get(w.key, ()))
        if len(w.key) >= 4 and w.key.endswith("s"):  # "fatimas": what `meet` reads as Fatima's
            probes.add(w.key[:-1][:PREFIX_CHARS])
    return sorted(probes)


@lru_cache(maxsize=65536)
def meet(request: str, name: str) -> float:
    """How well one request word meets one name word, 0..1 (see the module docstring)."""
    if request == name:
        return 1.0
    if request == name + "s":  # "smiths booking", "the bakers": a possessive or plural
        return 0.98
    if name in SYNONYMS.get(request, ()):
        return 0.95
    if request.isdigit() or name.isdigit():
        return 0.0
    if len(request) >= 2 and name.startswith(request):
        return 0.9
    if len(request) >= 4 and len(name) >= 4:
        ratio = fuzz.ratio(request, name)
        if ratio >= _TYPO:
            return 0.8 * ratio / 100
    return 0.0


def name_words(name: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The words of a record's name that count (no punctuation, no function words but a
    last one: "Pilates for Beginners" is two words, "Studio A" two), and the function
    words it holds, which may sit between them in a request."""
    keys = tuple(k for w in words(name) if (k := key_of(w)))
    content = tuple(k for n, k in enumerate(keys)
                    if k not in FUNCTION_WORDS or n == len(keys) - 1)
    return content or keys, frozenset(k for k in keys if k in FUNCTION_WORDS)


def best_matches(req: list[Token], docs: list[Document], field: str,
                 loose: bool = False) -> list[Match]:
    """The best match of each record that the request names well enough. `loose`: one
    distinctive word of a longer name will do ("the social" for Members' Social Night)
    when it names only one of `docs`."""
    said = request_words(req)
    out = []
    for doc in docs:
        name = str(doc.get(field) or "")
        match = _best_run(said, *name_words(name), name_key(name), doc, loose)
        if match is not None:
            out.append(match)
    if loose:
        weak = [m for m in out if m.weak]
        spans = {(m.first, m.last) for m in weak}
        for span in spans:
            if sum((m.first, m.last) == span for m in out) > 1:
                out = [m for m in out if not (m.weak and (m.first, m.last) == span)]
    return out


def _best_run(said: list[Word], wanted: tuple[str, ...], glue: frozenset[str], whole: str,
              doc: Document, loose: bool = False) -> Match | None:
    if not wanted:
        return None
    best: Match | None = None
    for i, word in enumerate(said):
        if word.stop and not any(meet(word.key, w) == 1.0 for w in wanted):
            continue
        if word.key == _PUNCT.sub("", whole):  # "emilychen", "EmilyChen"
            return Match(doc, 1.0, i, i, word.start, word.end)
        run = _run_from(said, i, wanted, glue)
        if run is None:
            continue
        score, last = run
        # The best score; of equal ones the tightest run ("arthur hill", not "hill and
        # arthur" in "freya hill and arthur hill").
        if best is None or (score, best.last - best.first) > (best.score, last - i):
            best = Match(doc, score, i, last, word.start, said[last].end)
    if best is None or all(w.stop for w in said[best.first:best.last + 1]):
        return None
    single = best.first == best.last
    alone = said[best.first].key
    if single and (alone.isdigit() or alone in GENERIC):
        return None
    if single and best.score < _MIN_SINGLE - 1e-9:
        distinctive = loose and len(alone) >= _DISTINCTIVE and alone in wanted
        return Match(doc, best.score, best.first, best.last, best.start, best.end,
                     weak=True) if distinctive else None
    return best


def _run_from(said: list[Word], i: int, wanted: tuple[str, ...], glue: frozenset[str]
              ) -> tuple[float, int] | None:
    """The score and last word of the run of request words from `i` that meets `wanted`
    (a function word may sit inside the run only when the name has it: "pilates for
    beginners", "wine and tennis")."""
    used: set[int] = set()
    total, last, k = 0.0, -1, i
    while k < len(said):
        word = said[k]
        options = [(meet(word.key, w), n) for n, w in enumerate(wanted) if n not in used]
        quality, n = max(options, default=(0.0, -1))
        if quality > 0 and (not word.stop or quality == 1.0):
            used.add(n)
            total += quality
            last = k
        elif not (word.stop and word.key in glue):
            break
        k += 1
    if last < 0:
        return None
    return total / len(wanted), last
