"""Whole numbers a caller writes in a header or a query (`Last-Event-ID`, `?after=`,
`?version=`, `Content-Length`): ASCII digits only, at most 2^63 - 1.

`str.isdigit()` is true for "²" and "٣", which `int()` then refuses or reads as a digit
of another script; and a number past 64 bits overflows the store's integers. Every such
parameter is read here, so each of those is the same 400 naming the parameter.
"""

from __future__ import annotations

from typing import Final

from opsgraph.errors import BadInput

MAX_INT64: Final = 2**63 - 1
_DIGITS: Final = frozenset("0123456789")


def ascii_number(raw: str, maximum: int = MAX_INT64) -> int | None:
    """`raw` (surrounding spaces allowed) as a number of ASCII digits at most `maximum`;
    None when it is anything else."""
    text = raw.strip(" \t")
    if not text or len(text) > len(str(maximum)) or not set(text) <= _DIGITS:
        return None
    value = int(text)
    return value if value <= maximum else None


def parse_number(raw: str, field: str, what: str, maximum: int = MAX_INT64) -> int:
    """`raw` as a number, or BadInput naming `field` and saying what it must be
    (`what`: "an event id of this thread")."""
    value = ascii_number(raw, maximum)
    if value is None:
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        raise BadInput(f"{field}: {shown!r} is not {what} (ASCII digits 0-9, at most "
                       f"{maximum:,})", field=field)
    return value
