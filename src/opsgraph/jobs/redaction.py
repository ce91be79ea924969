"""Personal data out of few-shot examples: the tenant's members and staff, their record
ids, e-mail addresses and phone numbers become numbered placeholders (`<member 1>`,
`<staff 1>`, `<email 1>`, `<phone 1>`), numbered per example so a request and its calls
agree.

Names are matched the way resolution compares them (`store.search_keys.normalise`: accents
stripped, case folded) and without punctuation as well, so "Siobhan O'Connor",
"siobhan o’connor" and "SIOBHÁN OCONNOR" are all the stored "Siobhán O'Connor". A run of
words that is a whole name becomes one placeholder; a possessive stays outside it
(`<member 1>'s`). Everyone the texts name is redacted — by a whole name, a record id, or
one word that is part of a name (a first or last name of three letters or more) — and
then every part of their names wherever it appears: a first name that two people share
stands for both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from opsgraph.store.scope import TenantScope
from opsgraph.store.search_keys import normalise

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\d[\d ().-]{6,}\d")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_JOINS = re.compile(r"[\s-]*")
"""What may stand between the words of one name ("Fatima Al Sayed", "Al-Sayed")."""
MAX_NAME_WORDS = 3
MIN_PART = 3
PHONE_KEY_DIGITS = 9
"""A phone number is known by its last digits, whatever its country prefix or trunk 0."""


def fold(text: str) -> str:
    """The form names compare in here: normalised, letters and digits only."""
    return "".join(ch for ch in normalise(text) if ch.isalnum())


def _bare(word: str) -> str:
    return _POSSESSIVE.sub("", word)


@dataclass(frozen=True, order=True)
class Person:
    """A member or staff record as redaction sees it."""

    kind: str
    id: str
    name: str

    def keys(self) -> set[str]:
        """Its id, its whole name and each part of it, folded."""
        parts = {fold(p) for p in re.split(r"[\s-]+", self.name)} | {
            fold(p) for p in self.name.split()}
        return {fold(self.id), fold(self.name)} | {p for p in parts if len(p) >= MIN_PART}


class People:
    """The tenant's members and staff by folded id, whole name and name part (names only
    are read, once per promotion)."""

    def __init__(self, scope: TenantScope) -> None:
        self.by_key: dict[str, list[Person]] = {}
        for kind, collection in (("member", "members"), ("staff", "staff")):
            for doc in scope[collection].find({}, projection={"name": 1}):
                person = Person(kind, str(doc["_id"]), str(doc.get("name") or ""))
                for key in person.keys() - {""}:
                    self.by_key.setdefault(key, []).append(person)
        for found in self.by_key.values():
            found.sort()

    def named(self, key: str) -> list[Person]:
        """Who a folded word or run of words names (several for a shared first name)."""
        return self.by_key.get(key, [])


def _runs(text: str) -> Iterable[tuple[int, int, str]]:
    """Every run of up to `MAX_NAME_WORDS` adjacent words: (start, end, folded key), the
    longest first at each word; a final possessive is left out of the run."""
    words = list(_WORD.finditer(text))
    for i in range(len(words)):
        for size in range(MAX_NAME_WORDS, 0, -1):
            run = words[i:i + size]
            if len(run) < size or any(not _JOINS.fullmatch(text[a.end():b.start()])
                                      for a, b in pairwise(run)):
                continue
            last = _bare(run[-1].group())
            key = fold(" ".join([*(w.group() for w in run[:-1]), last]))
            yield run[0].start(), run[-1].start() + len(last), key


@dataclass
class Redactor:
    """Replaces the tenant's people and contact details by numbered placeholders."""

    scope: TenantScope
    people: People | None = None
    found: dict[str, str] = field(default_factory=dict)
    """what was seen (`id:…`, `email:…`, `phone:…`) → its placeholder"""
    names: dict[str, str] = field(default_factory=dict)
    """a folded id, name or name part → its person's placeholder"""

    def _placeholder(self, kind: str, key: str) -> str:
        if key not in self.found:
            number = sum(1 for v in self.found.values() if v.startswith(f"<{kind} ")) + 1
            self.found[key] = f"<{kind} {number}>"
        return self.found[key]

    def learn(self, texts: Iterable[str]) -> None:
        """Find the people named (or referred to by id) in `texts`."""
        if self.people is None:
            self.people = People(self.scope)
        named: set[Person] = set()
        for text in texts:
            for _, _, key in _runs(text):
                named.update(self.people.named(key))
        for person in sorted(named):
            label = self._placeholder(person.kind, f"id:{person.id}")
            for key in sorted(person.keys()):
                self.names.setdefault(key, label)

    def _names(self, text: str) -> str:
        out, pos = [], 0
        for start, end, key in _runs(text):
            if start >= pos and key in self.names:
                out += [text[pos:start], self.names[key]]
                pos = end
        return "".join([*out, text[pos:]])

    def __call__(self, value: Any) -> Any:
        """`value` with every person and contact detail replaced (strings, lists, dicts)."""
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if not isinstance(value, str):
            return value
        text = _EMAIL.sub(lambda m: self._placeholder("email", f"email:{m.group().lower()}"),
                          value)
        # one number in two formats ("07700 900111", "+44 7700 900111") is one placeholder
        text = _PHONE.sub(lambda m: self._placeholder(
            "phone", "phone:" + re.sub(r"\D", "", m.group())[-PHONE_KEY_DIGITS:]), text)
        return self._names(text)
