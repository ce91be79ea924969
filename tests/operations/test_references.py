"""Human references resolve to ids: unique, ambiguous (with candidates) or unknown."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import AmbiguousReference, NotFound
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.references import resolve_args, resolve_reference
from opsgraph.principal import Role

from .support import call, context

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
