"""Which mentions may fill a slot of an agent spec, by the slot's kind
(registry.spec.SlotKind): a record slot takes a mention of that record kind, `datetime` a
moment, `date` a day (or the day of a moment), `datetime_range` anything with an end; a
`shift` slot takes the shift resolve.shifts finds for the agent that asks."""

from __future__ import annotations

from opsgraph.resolve.mentions import RECORD_KINDS, Mention, Resolution

_FILLED_BY: dict[str, tuple[str, ...]] = {
    **{kind: (kind,) for kind in (*RECORD_KINDS, "shift")},
    "datetime": ("datetime",), "date": ("date", "datetime"),
    "datetime_range": ("datetime", "date"), "money": ("money",), "email": ("email",),
    "phone": ("phone",),
}


def fills(slot_kind: str, mention: Mention) -> bool:
    """True when `mention` is the kind of thing a slot of `slot_kind` holds."""
    if mention.kind not in _FILLED_BY.get(slot_kind, ()):
        return False
    return slot_kind != "datetime_range" or mention.end is not None


def candidates_for(slot_kind: str, resolution: Resolution) -> tuple[Mention, ...]:
    """The mentions of a resolution that could fill a slot of `slot_kind`, in order."""
    return tuple(m for m in resolution.mentions if fills(slot_kind, m))
