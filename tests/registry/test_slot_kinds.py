"""Slots declare what they hold, so the resolver can fill them before the model runs."""

from __future__ import annotations

from typing import Any, get_args

import pytest
import yaml
from pydantic import ValidationError

from opsgraph.registry.spec import Slot, SlotKind
from opsgraph.resolve import KINDS, Mention
from opsgraph.resolve.slots import fills

from .conftest import AGENTS


def test_every_slot_of_the_registry_names_its_kind() -> None:
    missing = []
    for path in sorted(AGENTS.rglob("*.yaml")):
        spec: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        missing += [f"{path.name}: {s['name']}" for s in spec.get("slots") or ()
                    if s.get("kind") not in get_args(SlotKind)]
    assert missing == []


def test_a_slot_without_a_kind_still_loads_as_text() -> None:
    assert Slot(name="note", description="anything").kind == "text"
    with pytest.raises(ValidationError, match="kind"):
        Slot.model_validate({"name": "who", "description": "x", "kind": "person"})


def test_every_mention_kind_is_a_slot_kind() -> None:
    assert set(KINDS) <= set(get_args(SlotKind))


def test_ranges_fill_range_slots_and_moments_fill_date_slots() -> None:
    evening = Mention("tonight", "datetime", "2030-01-09T17:00:00+00:00",
                      end="2030-01-09T22:00:00+00:00")
    at_six = Mention("6pm", "datetime", "2030-01-09T18:00:00+00:00")
    assert fills("datetime_range", evening) and not fills("datetime_range", at_six)
    assert fills("date", at_six) and fills("datetime", at_six)
    assert not fills("member", at_six) and not fills("text", at_six)
