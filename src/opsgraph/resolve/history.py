"""Words that point at earlier turns: "her", "him", "them" (the person last named),
"that booking", "the event", "that invoice", "the same court", "the same time", "same
day". Each becomes a mention of the record or moment the thread last named, at the
pointing words; a request that names one itself ("book Jane and email her") needs none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from zoneinfo import ZoneInfo

from opsgraph.resolve.mentions import Mention

_PERSON = re.compile(r"\b(?P<w>her|hers|herself|him|his|himself|she|he|them|their|they)\b",
                     re.I)
_THING = re.compile(r"\b(?:that|the|this|same|her|his|their)\s+(?:same\s+)?"
                    r"(?P<w>booking|reservation|slot|event|class|session|invoice|bill|"
                    r"court|studio|room|member|person|guy|lady|woman|man|coach)\b", re.I)
_SAME_TIME = re.compile(r"\b(?:the\s+)?same\s+(?P<w>time|slot|day|date)\b", re.I)
_KINDS = {"booking": ("booking",), "reservation": ("booking",), "slot": ("booking",),
          "event": ("event",), "class": ("event",), "session": ("event", "booking"),
          "invoice": ("invoice",), "bill": ("invoice",), "court": ("resource",),
          "studio": ("resource",), "room": ("resource",), "member": ("member",),
          "person": ("member", "staff"), "guy": ("member", "staff"),
          "lady": ("member", "staff"), "woman": ("member", "staff"),
          "man": ("member", "staff"), "coach": ("staff",)}


def _last(earlier: Sequence[list[Mention]], kinds: tuple[str, ...]) -> Mention | None:
    """The latest mention of one of `kinds` with a record or moment, newest turn first."""
    for turn in reversed(earlier):
        for mention in reversed(turn):
            if mention.kind in kinds and mention.value is not None:
                return mention
    return None


def carry_over(text: str, found: list[Mention], earlier: Sequence[list[Mention]],
               zone: ZoneInfo) -> list[Mention]:
    """`found` and a mention for each of the words of `text` that point at earlier turns
    (see the module docstring)."""
    if not earlier:
        return found
    named = {m.kind for m in found}
    out: list[Mention] = []
    spans: list[tuple[int, int]] = [(m.start, m.stop) for m in found]

    def add(m: re.Match[str], kinds: tuple[str, ...]) -> None:
        if any(s < m.end() and m.start() < e for s, e in spans):
            return
        if any(k in named for k in kinds):
            return
        last = _last(earlier, kinds)
        if last is not None:
            out.append(Mention(m.group(), last.kind, last.value, last.label, last.end,
                               start=m.start()))
            spans.append((m.start(), m.end()))
            named.add(last.kind)

    for m in _THING.finditer(text):
        add(m, _KINDS[m.group("w").lower()])
    for m in _PERSON.finditer(text):
        add(m, ("member", "staff"))
    for m in _SAME_TIME.finditer(text):
        same = _same_time(m, found, earlier, zone)
        if same is not None:
            if same.kind == "datetime":  # "same time tomorrow": one datetime, not two
                found = [d for d in found if not (d.kind == "date" and d.end is None)]
            out.append(same)
    return found + out


def _same_time(m: re.Match[str], found: list[Mention], earlier: Sequence[list[Mention]],
               zone: ZoneInfo) -> Mention | None:
    """"The same time" (on the day this request names, else the same moment), "same day"."""
    last = _last(earlier, ("datetime",))
    if m.group("w").lower() in ("day", "date"):
        last = last or _last(earlier, ("date",))
        if last is None or last.value is None:
            return None
        return Mention(m.group(), "date", last.value[:10], start=m.start())
    if last is None or last.value is None:
        return None
    then = datetime.fromisoformat(last.value).astimezone(zone)
    length = (datetime.fromisoformat(last.end) - then) if last.end else None
    day = next((date.fromisoformat(d.value[:10]) for d in found
                if d.kind == "date" and d.end is None and d.value), None)
    if day is not None:
        then = datetime.combine(day, then.timetz())
    end = (then + length).isoformat() if length is not None else None
    return Mention(m.group(), "datetime", then.isoformat(), end=end, start=m.start())
