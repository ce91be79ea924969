"""Search keys: the forms of a record's name that lookups find by index, stored with it.

People name records loosely ("  jane SMITH", "emily_chen", "Court1", "smithson", "ja smi"),
and the store has no text index. So a named record carries, beside its name:

- `name_key`: the name normalised (accents stripped, case folded) with `_` and every space
  taken out: two spellings name the same record when their keys are equal;
- `name_prefixes`: every prefix (up to `PREFIX_CHARS` characters) of every word of the
  name, so one query word finds the records that have a word starting with it;
- `name_sounds`: the Soundex code of every word, so a misspelt word ("Smtih", "Kym")
  finds the names it sounds like;
- members also `member_keys`, what `members.search` finds them by, in one field so that a
  search is one indexed query (the embedded store walks no index for an `$or`): `n:` and
  every prefix of a name word, `s:` and every Soundex code of the name, `c:` and every
  prefix of a word of the email and every ending of four or more digits of the phone.

All are written with the record (the seed, `members.create`/`update`, `events.create`),
indexed after `tenant_id`, and filled in for records stored before they existed (both in
store.indexes). Key fields (email, code, number, slug) need no extra field: each has
one canonical form (`canonical_key`) and is indexed as it is.
"""

from __future__ import annotations

import unicodedata
from typing import Any

Document = dict[str, Any]

NAMED: dict[str, str] = {"members": "name", "staff": "name", "resources": "name",
                         "events": "title", "knowledge": "title", "catalogue": "name"}
"""Collection → the field that holds a record's name."""
KEY_FIELDS = ("name_key", "name_prefixes", "name_sounds", "member_keys")
"""Every field this module adds to a record (bookkeeping a reader of it never sees)."""
PREFIX_CHARS = 12
MIN_DIGITS = 4
_UPPER_KEYS = frozenset({"code", "number"})  # "C1", "INV-1042"; emails and slugs are lower


def normalise(text: str) -> str:
    """Accents stripped, case folded, whitespace collapsed: the form names compare in."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(plain.casefold().split())


def name_key(text: str) -> str:
    """The form two spellings of one name share: `Emily_Chen`, `emily chen`, `EmilyChen`."""
    return normalise(text.replace("_", " ")).replace(" ", "")


def words(text: str) -> list[str]:
    """The words of a name as prefix matching sees them."""
    return normalise(text).split()


def prefix_key(word: str) -> str:
    """What `name_prefixes` holds for a query word (long words are cut, then re-checked)."""
    return word[:PREFIX_CHARS]


def canonical_key(field: str, text: str) -> str:
    """The stored form of a key field's value: no spaces, and the case that field uses."""
    squashed = "".join(text.split())
    return squashed.upper() if field in _UPPER_KEYS else squashed.lower()


_SOUNDEX = {**dict.fromkeys("bfpv", "1"), **dict.fromkeys("cgjkqsxz", "2"),
            **dict.fromkeys("dt", "3"), "l": "4", **dict.fromkeys("mn", "5"), "r": "6"}


def soundex(word: str) -> str:
    """American Soundex of a word's letters ("smith", "smtih", "smyth" → "s530"); "" when
    it has none."""
    letters = [ch for ch in normalise(word) if "a" <= ch <= "z"]
    if not letters:
        return ""
    code, last = letters[0], _SOUNDEX.get(letters[0], "")
    for ch in letters[1:]:
        digit = _SOUNDEX.get(ch, "")
        if digit and digit != last:
            code += digit
        if ch not in "hw":  # h and w do not separate two letters of the same code
            last = digit
    return (code + "000")[:4]


def _prefixes(word: str) -> set[str]:
    return {word[:n] for n in range(1, min(len(word), PREFIX_CHARS) + 1)}


def name_fields(name: str) -> Document:
    """The search keys of one name."""
    parts = words(name)
    return {"name_key": name_key(name),
            "name_prefixes": sorted(set().union(*map(_prefixes, parts))),
            "name_sounds": sorted({code for w in parts if (code := soundex(w))})}


def digits(text: str) -> str:
    """The digits of a phone number or a query."""
    return "".join(ch for ch in text if ch.isdigit())


def email_words(text: str) -> list[str]:
    """The words of an email address (or of a query, read as one): its runs of letters
    and digits."""
    return "".join(ch if ch.isalnum() else " " for ch in normalise(text)).split()


def national(number: str) -> str:
    """A number without its trunk zeros (07700 900123 → 7700900123), as phones end."""
    return number.lstrip("0") or number


def member_fields(named: Document, email: str | None, phone: str | None) -> Document:
    """`member_keys` of a member: the name keys of `named` (`name_fields`), its email
    words' prefixes and its phone's endings, each marked with what it is."""
    keys = {f"n:{p}" for p in named["name_prefixes"]} | {f"s:{s}" for s in named["name_sounds"]}
    for word in email_words(email or ""):
        keys |= {f"c:{p}" for p in _prefixes(word)}
    number = digits(phone or "")
    keys |= {f"c:{number[n:]}" for n in range(len(number) - MIN_DIGITS + 1)}
    return {"member_keys": sorted(keys)}


def member_probes(query: str) -> list[str]:
    """The `member_keys` a search for `query` looks up: a name word starting like its
    longest word or sounding like any of its words, an email word starting like its
    longest one, a phone ending in its digits (four or more)."""
    name_words, mail_words, number = words(query), email_words(query), digits(query)
    probes = {f"s:{code}" for w in name_words if (code := soundex(w))}
    if name_words:
        probes.add(f"n:{prefix_key(max(name_words, key=len))}")
    if mail_words:
        probes.add(f"c:{prefix_key(max(mail_words, key=len))}")
    if len(number) >= MIN_DIGITS:
        probes |= {f"c:{number}", f"c:{national(number)}"}
    return sorted(probes)


def with_keys(collection: str, doc: Document) -> Document:
    """`doc` with the search keys of its name (unchanged when its collection has none)."""
    field = NAMED.get(collection)
    if field is None or not isinstance(doc.get(field), str):
        return doc
    out = {**doc, **name_fields(doc[field])}
    if collection == "members":
        out.update(member_fields(out, doc.get("email"), doc.get("phone")))
    return out


def changed_keys(collection: str, before: Document, changes: Document) -> Document:
    """The search keys to set beside `changes` to a record that was `before`."""
    keyed = with_keys(collection, {**before, **changes})
    return {k: v for k, v in keyed.items() if k in KEY_FIELDS}
