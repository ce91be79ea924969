"""What the runner reads from the seeded store for scoring (the real embedded store)."""

from __future__ import annotations

from typing import Any

from opsgraph.evals.lookups import StoreLookups
from opsgraph.evals.records import Card
from tests.evals.builders import PHONE_CARD


def test_names_contacts_sources_and_stored_values(demo_db: Any) -> None:
    lookups = StoreLookups(demo_db)
    aliases = lookups.aliases("demo")
    assert aliases.same("Jane Smith", "mem_demo_001")
    assert aliases.same("jane.smith@example.com", "MEM_DEMO_001")
    assert aliases.same("Court 1", "res_demo_court1") and aliases.same("C1", "Court 1")
    assert not aliases.same("Jane Smith", "mem_demo_002")
    assert not lookups.aliases("acme").same("Jane Smith", "mem_demo_001")

    assert lookups.caller_contacts("demo", "mem_demo_008") == ("emily.chen@example.org",
                                                               "+44 7700 900788")
    assert lookups.caller_contacts("demo", "alex") == ()

    [text] = lookups.source_texts("demo", [{"kind": "member", "id": "mem_demo_008"},
                                           {"kind": "member", "id": "mem_demo_999"},
                                           {"kind": "spaceship", "id": "x"}])
    assert "+44 7700 900788" in text and "junior" in text

    card = Card(operation="members.update", summary="", old=PHONE_CARD["old"],
                new=PHONE_CARD["new"], args=PHONE_CARD["args"])
    assert lookups.before("demo", card) == {"phone": "+44 7700 900788"}
    created = Card(operation="members.create", summary="", old={}, new={"name": "x"},
                   args={"name": "x"})
    assert lookups.before("demo", created) is None
