"""Field types of operation inputs: each type carries its own constraints.

Every operation input model builds on these, so a value is refused where it enters (a
direct call, an agent's tool call, a manager's edit) with a message under the field's name:

- text: one line (`Name`, `Reference`, `Line`, `Reason`) or text over lines with tabs
  (`Description`, `Notes`, `Text`; CRLF is read as LF), trimmed, bounded by the type.
  None may hold control characters, lone surrogates, unassigned or private-use code
  points, line or paragraph separators or bidirectional overrides. A field's bounds come
  from its type: pydantic ignores a `Field(max_length=...)` given next to these types, so
  a field that needs other bounds gets a type of its own here.
- `Email`: `local@domain`, at most 254 characters, the local part a dot-atom of at most 64,
  the domain two or more DNS labels (an international domain is checked in its IDNA form);
  kept in lower case, as members' addresses are stored and compared.
- `Phone`: an international number as E.164 defines it, `+`, a country code not starting
  with 0 and 7 to 15 digits in all, written either packed (`+447700900123`) or in groups
  separated by one space or hyphen (`+44 7700 900123`, as E.123 prints it).
- `Moment`: an ISO 8601 date and time (no offset means UTC) on a day operations accept
  (`base.Day`: 1970 to 2199), read as UTC.
- money: `Money` (a charge or refund: above 0, at most 100,000) and `SignedMoney` (an
  invoice line: -100,000 to 100,000, negative for a discount) are `Decimal`s of at most two
  decimal places, never floats: `1e-9` or `0.1 + 0.2` is refused, not rounded. The store
  keeps amounts as BSON Decimal128 with two places (`stored_money`); `money_of` reads one
  back (a legacy float too), `money_json` is how callers see one: a JSON number.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any

from bson.decimal128 import Decimal128
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from opsgraph.operations.base import FIRST_DAY, LAST_DAY

# ── text ─────────────────────────────────────────────────────────────────────────────────

_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cs": "a lone surrogate",
    "Cn": "an unassigned code point",
    "Co": "a private-use code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LONG_TEXT_CONTROLS = frozenset("\n\t")


def _refuse(kind: str, message: str, **context: Any) -> PydanticCustomError:
    return PydanticCustomError(kind, message, context)


def _printable(value: str, allowed: frozenset[str]) -> str:
    for position, char in enumerate(value, start=1):
        if char in allowed:
            continue
        what = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if what is None and char in _BIDI_CONTROLS:
            what = "a bidirectional override"
        if what is not None:
            raise _refuse("unprintable_character",
                          "must not contain {what} (U+{code} at position {position})",
                          what=what, code=f"{ord(char):04X}", position=position)
    return value


def _one_line(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str validator refuses it, naming the type
    return _printable(value.strip(), frozenset())


def _long_text(value: object) -> object:
    if not isinstance(value, str):
        return value
    return _printable(value.strip().replace("\r\n", "\n"), _LONG_TEXT_CONTROLS)


_LINE = BeforeValidator(_one_line)
_TEXT = BeforeValidator(_long_text)


def _bounds(min_length: int, max_length: int) -> StringConstraints:
    return StringConstraints(strip_whitespace=True, min_length=min_length,
                             max_length=max_length)


Name = Annotated[str, _bounds(1, 120), _LINE]
"""A person's or a thing's name: one printable line of 1 to 120 characters."""

Reference = Annotated[str, _bounds(1, 200), _LINE]
"""A record named by its id or by human words ("Jane Smith", "Court 1", "INV-1042")."""

Line = Annotated[str, _bounds(1, 200), _LINE]
"""One printable line of 1 to 200 characters: a subject, a search, an invoice line."""

Query = Annotated[str, _bounds(1, 500), _LINE]
"""What to look up, in plain words: one printable line of 1 to 500 characters."""

Reason = Annotated[str, _bounds(3, 500), _LINE]
"""Why something is done, for the audit trail: one line of 3 to 500 characters."""

Description = Annotated[str, _bounds(5, 2000), _TEXT]
"""What is wrong or what happens, in a sentence or a few lines: 5 to 2,000 characters."""

Notes = Annotated[str, _bounds(0, 2000), _TEXT]
"""Staff notes: up to 2,000 characters over lines; empty clears them."""

Text = Annotated[str, _bounds(1, 20_000), _TEXT]
"""A message body: 1 to 20,000 printable characters, newlines and tabs allowed."""


# ── e-mail ───────────────────────────────────────────────────────────────────────────────

EMAIL_MAX = 254
_LOCAL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_TOP_LABEL = re.compile(r"^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$")


def email_problem(value: str) -> str | None:
    """Why `value` is not a valid e-mail address, or None when it is one."""
    local, at, domain = value.rpartition("@")
    if not at or not local or not domain or len(value) > EMAIL_MAX:
        return "expected name@example.com"
    if len(local) > 64 or not _LOCAL.match(local):
        return "the part before the @ is not valid"
    try:
        ascii_domain = domain.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return "the domain after the @ is not valid"
    labels = ascii_domain.split(".")
    if (len(labels) < 2 or not all(_LABEL.match(label) for label in labels)
            or not _TOP_LABEL.match(labels[-1])):
        return "the domain after the @ is not valid"
    return None


def _email(value: str) -> str:
    problem = email_problem(value)
    if problem is not None:
        raise _refuse("email", "{value} is not a valid email address: {problem}",
                      value=repr(value), problem=problem)
    return value.lower()


Email = Annotated[str, _bounds(3, EMAIL_MAX), AfterValidator(_email), _LINE]
"""A valid e-mail address, in lower case."""

_ADDRESS = r"[^<>()\s,;]+@[^<>()\s,;]+"
_DISPLAYED = re.compile(rf"^(?:[^<>()@]*?[<(]\s*(?P<a>{_ADDRESS})\s*[>)]"
                        rf"|(?P<b>{_ADDRESS})\s*\([^<>()@]*\))$")


def bare_address(value: str) -> str:
    """The address in the forms an address book shows one: "Tom Baker <tom@example.com>",
    "Tom Baker (tom@example.com)", "tom@example.com (Tom Baker)"; anything else unchanged.
    (`email.utils.parseaddr` reads "Name (addr)" as the name being the address.)"""
    m = _DISPLAYED.match(value.strip())
    return value if m is None else m.group("a") or m.group("b")

# ── phone ────────────────────────────────────────────────────────────────────────────────

_PHONE = re.compile(r"^\+[1-9][0-9]*(?:[ -][0-9]+)*$")


def _phone(value: str) -> str:
    digits = sum(c.isdigit() for c in value)
    if not _PHONE.match(value) or not 7 <= digits <= 15:
        raise _refuse("phone", "{value} is not an international phone number: '+', the "
                      "country code, then the number, 7 to 15 digits in all (spaces or "
                      "hyphens between groups), e.g. +44 7700 900123", value=repr(value))
    return value


Phone = Annotated[str, _bounds(1, 24), AfterValidator(_phone), _LINE]
"""An E.164 phone number, packed or grouped by single spaces or hyphens."""

# ── time ─────────────────────────────────────────────────────────────────────────────────


def _moment(value: datetime) -> datetime:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if not FIRST_DAY <= aware.date() <= LAST_DAY:
        raise _refuse("moment", "{value} is outside the days accepted ({first} to {last})",
                      value=value.isoformat(), first=FIRST_DAY.isoformat(),
                      last=LAST_DAY.isoformat())
    return aware.astimezone(UTC)


Moment = Annotated[datetime, AfterValidator(_moment)]
"""A date and time, ISO 8601, between 1970 and 2199; without an offset it is UTC."""

# ── money ────────────────────────────────────────────────────────────────────────────────

CENT = Decimal("0.01")
MONEY_MAX = Decimal("100000")


def _cents(value: Decimal) -> Decimal:
    return value.quantize(CENT)


def _money_json(value: Decimal) -> float:
    return float(value)


Money = Annotated[
    Decimal,
    Field(gt=0, le=MONEY_MAX, decimal_places=2, allow_inf_nan=False),
    AfterValidator(_cents),
    PlainSerializer(_money_json, return_type=float, when_used="json"),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "maximum": 100_000}),
]
"""An amount above zero and at most 100,000 with at most two decimal places."""

SignedMoney = Annotated[
    Decimal,
    Field(ge=-MONEY_MAX, le=MONEY_MAX, decimal_places=2, allow_inf_nan=False),
    AfterValidator(_cents),
    PlainSerializer(_money_json, return_type=float, when_used="json"),
    WithJsonSchema({"type": "number", "minimum": -100_000, "maximum": 100_000}),
]
"""An amount from -100,000 to 100,000 with at most two decimal places."""


def money_of(value: object) -> Decimal:
    """A stored amount as a Decimal of cents: Decimal128 as stored, or a legacy number."""
    if isinstance(value, Decimal128):
        amount = value.to_decimal()
    elif isinstance(value, Decimal):
        amount = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        amount = Decimal(repr(value))  # the shortest decimal that reads back as this float
    else:
        raise TypeError(f"not an amount of money: {value!r}")
    if not amount.is_finite():
        raise TypeError(f"not an amount of money: {value!r}")
    return amount.quantize(CENT)


def stored_money(amount: Decimal) -> Decimal128:
    """`amount` as the store keeps it: Decimal128 with exactly two decimal places."""
    return Decimal128(amount.quantize(CENT))


def money_json(value: object) -> float:
    """A stored or computed amount as callers see it: a JSON number (two places at most)."""
    return _money_json(money_of(value))
