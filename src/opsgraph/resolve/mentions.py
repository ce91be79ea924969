"""What the resolver found: a `Mention` per thing the request names, in a `Resolution`.

A mention carries the words it came from (`text`, `start`: the offset in the request, -1
when it was carried over from earlier turns), its `kind`, and either a `value` (a record
id, an ISO 8601 datetime or date, a decimal amount, an address, an E.164 number), the
`candidates` when several records match, or neither when nothing matched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

KINDS = ("member", "staff", "resource", "event", "booking", "invoice", "datetime", "date",
         "money", "email", "phone")
"""Every kind a mention may have (the record kinds first)."""
RECORD_KINDS = KINDS[:6]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One record an ambiguous mention may mean: its id and its label."""

    value: str
    label: str

    def to_json(self) -> dict[str, str]:
        """`{"value", "label"}`."""
        return {"value": self.value, "label": self.label}


@dataclass(frozen=True, slots=True)
class Mention:
    """One thing the request names (see the module docstring)."""

    text: str
    kind: str
    value: str | None = None
    label: str | None = None
    end: str | None = None  # closes a range (datetime or date)
    candidates: tuple[Candidate, ...] = ()
    start: int = -1

    @property
    def stop(self) -> int:
        """The offset just past the mention's words (-1 when carried over)."""
        return -1 if self.start < 0 else self.start + len(self.text)

    def to_json(self) -> dict[str, Any]:
        """The mention as `opsgraph resolve --json` prints it (absent fields left out)."""
        out: dict[str, Any] = {"text": self.text, "kind": self.kind}
        if self.value is not None:
            out["value"] = self.value
        if self.label is not None:
            out["label"] = self.label
        if self.end is not None:
            out["end"] = self.end
        if self.candidates:
            out["candidates"] = [c.to_json() for c in self.candidates]
        out["start"] = self.start
        return out


@dataclass(frozen=True, slots=True)
class Resolution:
    """Every mention of one request, at the clock and in the time zone it was read."""

    now: datetime
    timezone: str
    mentions: tuple[Mention, ...] = field(default_factory=tuple)

    def of_kind(self, kind: str) -> tuple[Mention, ...]:
        """The mentions of one kind, in the order they appear."""
        return tuple(m for m in self.mentions if m.kind == kind)

    def to_json(self) -> dict[str, Any]:
        """`{"now", "timezone", "mentions": [...]}`."""
        return {"now": self.now.isoformat(), "timezone": self.timezone,
                "mentions": [m.to_json() for m in self.mentions]}
