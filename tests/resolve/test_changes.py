"""The new values a request gives a member's record (resolve.changes), read from what the
resolver found in requests as staff write them; anything not said plainly is left out."""

from __future__ import annotations

import pytest

from opsgraph.resolve.changes import member_changes

from .conftest import Resolve


def _changes(resolve: Resolve, text: str, member: str | None = "Siobhan O'Connor"
             ) -> dict[str, str] | None:
    return member_changes(text, resolve(text).mentions, member)


@pytest.mark.parametrize(("text", "member", "expected"), [
    # held-out members-03
    ("siobhan o'connor got married, her surname's Byrne now - can you fix her record",
     "Siobhan O'Connor", {"name": "Siobhan Byrne"}),
    ("her last name is now byrne", "Siobhan O'Connor", {"name": "Siobhan Byrne"}),
    ("change her name to Siobhan Byrne", "Siobhan O'Connor", {"name": "Siobhan Byrne"}),
    ("change Jane Smith's phone to +44 7700 900123", "Jane Smith",
     {"phone": "+44 7700 900123"}),
    ("change tom baker's number to 07700 900999", "Tom Baker", {"phone": "+44 7700 900999"}),
    ("update her email to emily.chen@newmail.example pls", "Emily Chen",
     {"email": "emily.chen@newmail.example"}),
    ("raj mehta's back from his knee op, unfreeze his membership", "Raj Mehta",
     {"status": "active"}),
    ("pause zara hughes' membership, she's broken her wrist", "Zara Hughes",
     {"status": "paused"}),
    ("put Tom's membership on hold for 6 weeks", "Tom Baker", {"status": "paused"}),
    ("cancel kai robinson's membership, he's moving to leeds", "Kai Robinson",
     {"status": "cancelled"}),
    ("move aisha wright onto premium pls", "Aisha Wright", {"membership": "premium"}),
    ("switch him to off-peak", "Tom Baker", {"membership": "off_peak"}),
])
def test_plain_new_values_are_read(resolve: Resolve, text: str, member: str,
                                   expected: dict[str, str]) -> None:
    assert _changes(resolve, text, member) == expected


@pytest.mark.parametrize("text", [
    "update Tom's address",  # no new value given
    "fix the spelling of her name",
    "her surname is wrong",
    "email jane.smith@example.com the invoice",  # an address, not a new one
    "turn off marketing emails for Jane",
])
def test_nothing_said_plainly_is_left_to_the_model(resolve: Resolve, text: str) -> None:
    assert _changes(resolve, text) is None
