"""Argument matching that forgives what people forgive (docs/evals.md).

Strings compare case-insensitively after trimming (accents and inner whitespace folded); a
record may be named by id or by any of its names (`mem_demo_001` matches `Jane Smith`); a
date matches a datetime on the same day; numbers compare by value (`45` matches `"45.00"`
and `"£45"`); phone numbers by their digits. An expected dict is a subset of the actual
one; an expected list is matched item by item, in any order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from opsgraph.operations.ranking import normalise

_NUMBER = re.compile(r"^[£$€]?\s*-?\d[\d,]*(?:\.\d+)?$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_PHONE = re.compile(r"^\+?[\d\s().-]+$")
_ID_NAME = re.compile(r'"(?:id|_id)":\s*"([^"]+)",\s*"(?:name|title|number)":\s*"([^"]+)"')
_NAME_PAREN_ID = re.compile(r"((?:[A-Z][\w'’.-]*\s){0,4}[A-Z][\w'’.-]*) \(([a-z]+_[A-Za-z0-9_]+)\)")


class Aliases:
    """Record ids and the names people call them by, both ways, normalised."""

    def __init__(self, names_by_id: Mapping[str, Iterable[str]] | None = None) -> None:
        self._names: dict[str, set[str]] = {}
        self._ids: dict[str, set[str]] = {}
        for record_id, names in (names_by_id or {}).items():
            self.add(record_id, *names)

    def add(self, record_id: str, *names: str) -> None:
        """Record that `record_id` is also called each of `names`."""
        key = normalise(record_id)
        for name in names:
            if name and str(name).strip():
                self._names.setdefault(key, set()).add(normalise(str(name)))
                self._ids.setdefault(normalise(str(name)), set()).add(key)

    def ids_of(self, text: str) -> set[str]:
        """The ids `text` may denote: itself when it is an id, plus every id named so."""
        key = normalise(text)
        return ({key} if key in self._names else set()) | self._ids.get(key, set())

    def names_of(self, record_id: str) -> set[str]:
        """The names of a record (empty when unknown)."""
        return set(self._names.get(normalise(record_id), set()))

    def same(self, a: str, b: str) -> bool:
        """Whether `a` and `b` may denote the same record."""
        return bool(self.ids_of(a) & self.ids_of(b))

    def merged(self, texts: Iterable[str]) -> Aliases:
        """A copy that also knows the id ↔ name pairs these texts show (tool results as
        JSON `{"id": .., "name": ..}`, card summaries as `Name (id)`)."""
        out = Aliases()
        for key, names in self._names.items():
            out.add(key, *names)
        for text in texts:
            for rid, name in _ID_NAME.findall(text):
                out.add(rid, name)
            for name, rid in _NAME_PAREN_ID.findall(text):
                # "Update Raj Mehta (mem_demo_007)": the name is some tail of the words.
                words = name.split()
                out.add(rid, *(" ".join(words[i:]) for i in range(len(words))))
        return out


def as_number(value: Any) -> Decimal | None:
    """The numeric value of a number or a numeric string (`"£1,200.50"`), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return Decimal(str(value))
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        try:
            return Decimal(re.sub(r"[£$€,\s]", "", value))
        except InvalidOperation:
            return None
    return None


def phone_digits(text: str) -> str | None:
    """The last nine digits of a phone-like string (9 to 15 digits), else None."""
    if not _PHONE.match(text.strip()):
        return None
    digits = re.sub(r"\D", "", text)
    return digits[-9:] if 9 <= len(digits) <= 15 else None


def _instant(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _same_when(a: str, b: str) -> bool | None:
    """Dates and datetimes: the same day when either is a bare date, else the same instant;
    None when either is not a date."""
    if not (_DAY.match(a.strip()) and _DAY.match(b.strip())):
        return None
    if len(a.strip()) == 10 or len(b.strip()) == 10:
        return a.strip()[:10] == b.strip()[:10]
    first, second = _instant(a), _instant(b)
    if first is None or second is None:
        return normalise(a) == normalise(b)
    return first == second


def same_text(expected: str, actual: str, aliases: Aliases | None = None) -> bool:
    """Strings: equal when folded, the same day, the same phone, or the same record."""
    if normalise(expected) == normalise(actual):
        return True
    when = _same_when(expected, actual)
    if when is not None:
        return when
    phones = phone_digits(expected), phone_digits(actual)
    if phones[0] is not None and phones[1] is not None:
        return phones[0] == phones[1]
    return aliases is not None and aliases.same(expected, actual)


def _keys(key: str, actual: Mapping[str, Any]) -> list[str]:
    bare = key.rstrip("_").removesuffix("_id")
    return [k for k in actual if k.rstrip("_").removesuffix("_id") == bare]


def match_all(expected: Sequence[Any], actual: Sequence[Any], aliases: Aliases | None
                  ) -> bool:
    """Every expected item matches a distinct actual item (small lists: backtracking)."""
    def place(i: int, used: frozenset[int]) -> bool:
        if i == len(expected):
            return True
        return any(place(i + 1, used | {j}) for j, item in enumerate(actual)
                   if j not in used and matches(expected[i], item, aliases))

    return len(expected) <= len(actual) and place(0, frozenset())


def matches(expected: Any, actual: Any, aliases: Aliases | None = None) -> bool:
    """Whether `actual` holds what `expected` asks for (the module's rules)."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            any(matches(value, actual[k], aliases) for k in _keys(str(key), actual))
            for key, value in expected.items())
    if isinstance(expected, list | tuple):
        items = list(actual) if isinstance(actual, list | tuple) else [actual]
        return match_all(list(expected), items, aliases)
    if isinstance(actual, list | tuple):
        return any(matches(expected, item, aliases) for item in actual)
    if expected is None or actual is None:
        return expected in (None, "") and actual in (None, "")
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(expected).lower() == str(actual).strip().lower()
    numbers = as_number(expected), as_number(actual)
    if numbers[0] is not None and numbers[1] is not None:
        return numbers[0] == numbers[1]
    return same_text(str(expected), str(actual), aliases)
