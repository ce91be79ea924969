"""A pick among the records an earlier turn listed: "the family one", "the duplicate one",
"the paid invoice", "the second one" — or among the candidates of a name the same message
left ambiguous ("tom baker, the family membership one").

The latest earlier turn that names several records of one kind (the candidates of an
ambiguous mention, or two or more records named) is what such words choose from. A word
picks the one record whose stored words hold it ("family" in Tom Baker's membership,
"duplicate" in an invoice's line, a typo tolerated by rapidfuzz's ratio), read in one
indexed query; an ordinal ("first", "second", "last") picks by the order the turn named
them. Nothing is found when the word fits none of them, or more than one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from rapidfuzz import fuzz

from opsgraph.operations.base import Context
from opsgraph.resolve.mentions import RECORD_KINDS, Mention

Document = dict[str, Any]
_CHOICE = re.compile(r"\bthe\s+(?P<w>[^\W\d_][\w-]*)(?:\s+[^\W\d_][\w-]*)?\s+"
                     r"(?P<noun>one|invoice|bill|booking|member|event|class)\b", re.I)
_NOUN_KINDS = {"invoice": ("invoice",), "bill": ("invoice",), "booking": ("booking",),
               "member": ("member",), "event": ("event",), "class": ("event",)}
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "last": -1, "former": 0,
             "latter": -1}
_COLLECTIONS = {"member": "members", "staff": "staff", "resource": "resources",
                "event": "events", "booking": "bookings", "invoice": "invoices"}
_KEY_FIELDS = ("_id", "_key", "_keys", "_prefixes", "_sounds")
"""Fields ending so are ids or search keys, not words a person would pick a record by."""
_WORD = re.compile(r"[^\W\d_]+")
_TYPO = 85.0
_MIN_TYPO_LEN = 5


def picks_one(text: str) -> bool:
    """True when `text` has words that pick among records an earlier turn listed."""
    return _CHOICE.search(text) is not None


def settle_here(ctx: Context, text: str, found: list[Mention]) -> list[Mention]:
    """`found` with an ambiguous mention settled by a pick in the same message ("let tom
    baker know … the family membership one"): its candidates are what the pick chooses
    from."""
    out = list(found)
    for m in _CHOICE.finditer(text):
        kinds = _NOUN_KINDS.get(m.group("noun").lower(), RECORD_KINDS)
        word = m.group("w").lower()
        for n, mention in enumerate(out):
            if mention.kind not in kinds or mention.value is not None or not mention.candidates:
                continue
            listed: list[tuple[str, str | None]] = [(c.value, c.label)
                                                    for c in mention.candidates]
            pick = (_by_order(word, listed) if word in _ORDINALS
                    else _by_word(ctx, mention.kind, word, listed))
            if pick is not None:
                out[n] = Mention(mention.text, mention.kind, pick[0], pick[1],
                                 start=mention.start)
                break
    return out


def find_choices(ctx: Context, text: str, found: list[Mention],
                 earlier: Sequence[list[Mention]]) -> list[Mention]:
    """A mention for each pick in `text` (see the module docstring) that settles on one
    record; words another finder already read are left to it."""
    out = []
    for m in _CHOICE.finditer(text):
        if any(f.start < m.end() and m.start() < f.stop for f in found):
            continue
        kinds = _NOUN_KINDS.get(m.group("noun").lower(), RECORD_KINDS)
        word = m.group("w").lower()
        for kind, listed in _listed(earlier, kinds):
            pick = (_by_order(word, listed) if word in _ORDINALS
                    else _by_word(ctx, kind, word, listed))
            if pick is not None:
                out.append(Mention(m.group(), kind, pick[0], pick[1], start=m.start()))
                break
    return out


def _listed(earlier: Sequence[list[Mention]], kinds: tuple[str, ...]
            ) -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
    """Each kind the latest turn that lists several records of one of `kinds` lists
    several of, with those records (id, label) in the order the turn named them."""
    for turn in reversed(earlier):
        lists = [(kind, _records(turn, kind)) for kind in kinds]
        several = [(kind, records) for kind, records in lists if len(records) > 1]
        if several:
            yield from several
            return


def _records(turn: list[Mention], kind: str) -> list[tuple[str, str | None]]:
    records: dict[str, str | None] = {}
    for m in sorted(turn, key=lambda m: m.start):
        if m.kind != kind:
            continue
        if m.value is not None:
            records.setdefault(m.value, m.label)
        for c in m.candidates:
            records.setdefault(c.value, c.label)
    return list(records.items())


def _by_order(word: str, listed: list[tuple[str, str | None]]) -> tuple[str, str | None] | None:
    index = _ORDINALS[word]
    return listed[index] if index < len(listed) else None


def _by_word(ctx: Context, kind: str, word: str, listed: list[tuple[str, str | None]]
             ) -> tuple[str, str | None] | None:
    labels = dict(listed)
    docs = ctx.scope[_COLLECTIONS[kind]].find({"_id": {"$in": list(labels)}})
    fits = [str(d["_id"]) for d in docs if _holds(_words_of(d), word)]
    return (fits[0], labels[fits[0]]) if len(fits) == 1 else None


def _holds(words: set[str], word: str) -> bool:
    if word in words:
        return True
    if len(word) < _MIN_TYPO_LEN:
        return False

    return any(fuzz.ratio(word, w) >= _TYPO for w in words if len(w) >= _MIN_TYPO_LEN)


def _words_of(value: object, field: str = "") -> set[str]:
    """The lower-case words of a record's values, its ids and search keys left out."""
    if field.endswith(_KEY_FIELDS):
        return set()
    if isinstance(value, str):
        return {w.lower() for w in _WORD.findall(value)}
    if isinstance(value, dict):
        return {w for k, v in value.items() for w in _words_of(v, str(k))}
    if isinstance(value, list):
        return {w for v in value for w in _words_of(v, field)}
    return set()
