"""Forgiving argument matching, and the checkable statements read out of text."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.evals.figures import Evidence, claims
from opsgraph.evals.matching import Aliases, matches
from tests.evals.builders import DEMO_ALIASES


@pytest.mark.parametrize(("expected", "actual"), [
    ("Jane Smith", "  jane   SMITH "),
    ("Siobhan O'Connor", "Siobhán O'Connor"),
    ("Jane Smith", "mem_demo_001"),
    ("jane.smith@example.com", "Jane Smith"),
    ("2030-01-07", "2030-01-07T18:00:00+00:00"),
    ("2030-01-07T18:00", "2030-01-07T18:00:00+00:00"),
    (20, "20.00"),
    ("45", 45.0),
    (45, "£45"),
    ("+44 7700 900555", "07700 900555"),
    (True, "true"),
    (None, None),
    ({"changes": {"phone": "+447700900555"}}, {"member": "x", "changes": {"phone":
                                                                          "+44 7700 900555"}}),
    ({"member": "Emily Chen"}, {"member_id": "mem_demo_008"}),
    ({"from": "2030-01-01"}, {"from_": "2030-01-01"}),
    ([{"amount": 10}], [{"description": "fee", "amount": 5}, {"description": "x", "amount": 10}]),
    ("Jane Smith", ["mem_demo_002", "mem_demo_001"]),
])
def test_what_matches(expected: Any, actual: Any) -> None:
    assert matches(expected, actual, DEMO_ALIASES)


@pytest.mark.parametrize(("expected", "actual"), [
    ("Jane Smith", "Jayne Smith"),
    ("Jane Smith", "mem_demo_002"),
    ("2030-01-07", "2030-01-08T00:30:00+00:00"),
    ("2030-01-07T18:00", "2030-01-07T19:00:00+00:00"),
    (20, "20.01"),
    ("+44 7700 900555", "+44 7700 900556"),
    ({"member": "Jane Smith"}, {"resource": "mem_demo_001"}),
    ({"changes": {"phone": "x"}}, "not a dict"),
    ([1, 1], [1]),
    (None, "something"),
])
def test_what_does_not_match(expected: Any, actual: Any) -> None:
    assert not matches(expected, actual, DEMO_ALIASES)


def test_aliases_learn_pairs_from_tool_results_and_summaries() -> None:
    learned = Aliases().merged([
        '{"members": [{"id": "mem_demo_044", "name": "Priya Patel", "email": "p@x.org"}]}',
        "Update Raj Mehta (mem_demo_007): phone '1' → '2'"])
    assert learned.same("Priya Patel", "mem_demo_044")
    assert learned.same("raj mehta", "mem_demo_007")
    assert not learned.same("Priya Patel", "mem_demo_007")


def test_claims_read_each_kind_once() -> None:
    text = ("Call +44 7700 900101 or mail jane.smith@example.com. Court 1 is free on "
            "7 January 2030 at 6pm and 18:30 for £45.00 (15% off); INV-1042 totals 1,200.50. "
            "Ref mem_demo_008, 3 bookings, the 2nd of them.")
    got = [(c.kind, c.text) for c in claims(text)]
    assert got == [("email", "jane.smith@example.com"), ("phone", "+44 7700 900101"),
                   ("date", "7 January 2030"), ("time", "18:30"), ("time", "6pm"),
                   ("money", "£45.00"), ("number", "15%"), ("number", "1042"),
                   ("number", "1,200.50")]


def test_words_that_start_like_months_are_not_dates() -> None:
    assert claims("the junior 12 plan; decide 3 things") == [
        claims("12")[0]]  # only the bare number 12


def test_evidence_backs_claims_in_their_normal_form() -> None:
    evidence = Evidence()
    evidence.add('{"start": "2030-01-07T18:00:00+00:00", "total": 1200.5, "rate": 0.15, '
                 '"phone": "+44 7700 900101", "email": "Jane.Smith@example.com"}')
    for text in ("Monday 7 Jan", "January 7th", "2030-01-07", "6 pm", "18:00", "£1,200.50",
                 "15%", "07700 900101", "jane.smith@example.com"):
        assert all(evidence.backs(c) for c in claims(text)), text
    for text in ("8 Jan", "7pm", "£1,200.00", "+44 7700 900102", "bob@example.com", "2031-01-07"):
        assert not any(evidence.backs(c) for c in claims(text)), text
