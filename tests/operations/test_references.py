"""Human references resolve to ids: unique, ambiguous (with candidates) or unknown."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import AmbiguousReference, Forbidden, NotFound
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.references import resolve_args, resolve_reference
from opsgraph.principal import Role

from .support import call, context, person

Document = dict[str, Any]


def resolve(db: Database[Document], collection: str, value: str, tenant: str = "demo") -> str:
    return str(resolve_reference(context(db, tenant=tenant), collection, value, "field")["_id"])


@pytest.mark.parametrize(("collection", "value", "expected"), [
    ("members", "Jane Smithson", "mem_demo_003"),
    ("members", "  jane   SMITHSON ", "mem_demo_003"),
    ("members", "JAYNE.SMITH82@example.net", "mem_demo_002"),
    ("members", "Jane Smith", "mem_demo_001"),
    ("members", "Jayne Smith", "mem_demo_002"),
    ("members", "mem_demo_001", "mem_demo_001"),
    ("members", "Siobhan O'Connor", "mem_demo_006"),
    ("members", "smithson", "mem_demo_003"),
    ("resources", "court 1", "res_demo_court1"),
    ("resources", "Court1", "res_demo_court1"),
    ("resources", "court_1", "res_demo_court1"),  # a model's identifier-style name
    ("members", "emily_chen", "mem_demo_008"),
    ("resources", "SQ", "res_demo_squash"),
    ("staff", "daniel kim", "stf_demo_02"),
    ("events", "Junior Tennis Clinic", "evt_demo_04"),
    ("invoices", "inv-1042", "inv_demo_1042"),
    ("knowledge", "refund policy", "kb_demo_refund-policy"),
    ("knowledge", "faq", "kb_demo_faq"),
])
def test_a_unique_reference_resolves(shared_db: Database[Document], collection: str,
                                     value: str, expected: str) -> None:
    assert resolve(shared_db, collection, value) == expected


def test_two_tom_bakers_are_ambiguous_and_told_apart_by_email(
        shared_db: Database[Document]) -> None:
    with pytest.raises(AmbiguousReference) as err:
        resolve(shared_db, "members", "tom baker")
    cands = err.value.candidates
    assert [c["id"] for c in cands] == ["mem_demo_004", "mem_demo_005"]
    assert {c["email"] for c in cands} == {"tom.baker@example.com", "tbaker@mail.example"}
    assert "tbaker@mail.example" in err.value.message
    assert err.value.status == 400


def test_a_word_prefix_matching_several_names_is_ambiguous(
        shared_db: Database[Document]) -> None:
    with pytest.raises(AmbiguousReference) as err:
        resolve(shared_db, "members", "ja smi")  # Jane Smith, Jayne Smith, Jane Smithson
    assert len(err.value.candidates) == 3


def test_a_repeated_event_title_lists_the_dates(shared_db: Database[Document]) -> None:
    with pytest.raises(AmbiguousReference) as err:
        resolve(shared_db, "events", "morning yoga")
    assert [c["start"][:10] for c in err.value.candidates] == [
        "2030-01-08", "2030-01-10", "2030-01-15"]


def test_an_unknown_name_names_the_field_and_suggests_close_ones(
        shared_db: Database[Document]) -> None:
    with pytest.raises(NotFound) as err:
        resolve_reference(context(shared_db), "members", "Jane Smtih", "member")
    assert err.value.message.startswith("member: no member matches 'Jane Smtih'")
    assert "mem_demo_001" in [c["id"] for c in err.value.detail["candidates"]]


def test_an_unknown_booking_id_says_where_to_look(shared_db: Database[Document]) -> None:
    with pytest.raises(NotFound, match=r"bookings\.list"):
        resolve(shared_db, "bookings", "Jane's booking")


def test_resolve_args_replaces_only_reference_fields(shared_db: Database[Document]) -> None:
    op = get_operation("bookings.create")
    args = op.input.model_validate({"member": "Jane Smithson", "resource": "Studio A",
                                    "start": "2030-01-10T09:00", "end": "2030-01-10T10:00"})
    out = resolve_args(context(shared_db), op, args).model_dump()
    assert (out["member"], out["resource"]) == ("mem_demo_003", "res_demo_studio_a")
    assert out["start"] == args.model_dump()["start"]
    listing = get_operation("bookings.list")
    empty = listing.input.model_validate({})
    assert resolve_args(context(shared_db), listing, empty) == empty


def test_acme_resolves_its_own_jane_smith_only(shared_db: Database[Document]) -> None:
    # A Jane Smith in each tenant: acme's lookup never sees demo's records.
    assert resolve(shared_db, "members", "Jane Smith", tenant="acme") == "mem_acme_001"


@pytest.mark.parametrize("value", ["Jane Smithson", "mem_demo_003", "jane.smith@example.com"])
def test_acme_cannot_resolve_demo_records(shared_db: Database[Document], value: str) -> None:
    with pytest.raises(NotFound):
        resolve(shared_db, "members", value, tenant="acme")


def test_acme_cannot_read_a_demo_record_by_id(shared_db: Database[Document]) -> None:
    from opsgraph.principal import Principal

    acme_staff = Principal("acme", "u-acme", frozenset({Role.STAFF}))
    with pytest.raises(NotFound):
        call(shared_db, acme_staff, "members.get", {"member": "mem_demo_001"})
    found = call(shared_db, acme_staff, "members.search", {"query": "Jane"})
    assert [m["id"] for m in found["result"]["matches"]] == ["mem_acme_001"]


TOM = person(Role.MEMBER, user="tom.baker@example.com")  # mem_demo_004
JANE = person(Role.MEMBER, user="jane.smith@example.com")  # mem_demo_001
OTHER_TOM = ("mem_demo_005", "tbaker@mail.example", "+44 7700 900455")


def _shown(err: AmbiguousReference | NotFound) -> str:
    return f"{err.message} {err.detail}"


def test_a_member_naming_themselves_by_a_shared_name_gets_their_own_record(
        shared_db: Database[Document]) -> None:
    # Two Tom Bakers exist, but a member can only mean themselves.
    out = call(shared_db, TOM, "members.get", {"member": "Tom Baker"})
    assert out["result"]["id"] == "mem_demo_004"


REFUSED = "member: members may refer only to their own member records"


@pytest.mark.parametrize("name", ["Tom Baker", "Emily Chen", "Nobody Atall", "Jane Smtih",
                                  "mem_demo_004", "tbaker@mail.example", "mem_demo_999"])
def test_a_member_naming_anyone_else_gets_the_same_refusal(
        shared_db: Database[Document], name: str) -> None:
    # Existing, ambiguous, unknown, misspelt (even their own name) or an id: one answer.
    with pytest.raises(Forbidden) as err:
        call(shared_db, JANE, "members.get", {"member": name})
    assert (err.value.message, err.value.detail) == (REFUSED, {})


def test_a_member_names_only_their_own_invoices(shared_db: Database[Document]) -> None:
    assert call(shared_db, JANE, "invoices.get", {"invoice": "inv-1001"})["result"]["id"] == (
        "inv_demo_1001")
    answers = set()
    for other in ("INV-1002", "INV-99999", "inv_demo_1002"):
        with pytest.raises(Forbidden) as err:
            call(shared_db, JANE, "invoices.get", {"invoice": other})
        answers.add(err.value.message)
    assert answers == {"invoice: members may refer only to their own invoice records"}


@pytest.mark.parametrize("who", [person(Role.VISITOR, user=""), TOM])
def test_staff_names_and_emails_stay_hidden_from_members_and_visitors(
        shared_db: Database[Document], who: Any) -> None:
    with pytest.raises(NotFound) as err:
        resolve_reference(context(shared_db, who), "staff", "Daniel Kym", "staff")
    assert err.value.detail["candidates"] == []
    assert "daniel.kim" not in err.value.message and "stf_demo_02" not in err.value.message


def test_public_records_keep_their_candidates_for_members(
        shared_db: Database[Document]) -> None:
    with pytest.raises(AmbiguousReference) as err:
        resolve_reference(context(shared_db, TOM), "events", "morning yoga", "event")
    assert [c["start"][:10] for c in err.value.candidates] == [
        "2030-01-08", "2030-01-10", "2030-01-15"]


@pytest.mark.parametrize("role", [Role.STAFF, Role.MANAGER, Role.ADMIN])
def test_staff_see_every_candidate_with_details(shared_db: Database[Document],
                                                role: Role) -> None:
    with pytest.raises(AmbiguousReference) as err:
        call(shared_db, role, "members.get", {"member": "Tom Baker"})
    assert [(c["id"], c["email"]) for c in err.value.candidates] == [
        ("mem_demo_004", "tom.baker@example.com"), ("mem_demo_005", "tbaker@mail.example")]


def test_the_full_candidate_listing_is_logged(shared_db: Database[Document],
                                              caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="opsgraph.operations.references"), \
            pytest.raises(AmbiguousReference):
        resolve_reference(context(shared_db, TOM), "events", "morning yoga", "event")
    assert "evt_demo_01" in caplog.text and "Studio A" in caplog.text
    with caplog.at_level(logging.INFO, logger="opsgraph.operations.references"), \
            pytest.raises(AmbiguousReference):
        call(shared_db, Role.STAFF, "members.get", {"member": "Tom Baker"})
    assert "tbaker@mail.example" in caplog.text and "tom.baker@example.com" in caplog.text
