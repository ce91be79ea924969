"""Direct calls: permissions first, then arguments, then the operation; writes are audited."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import BadInput, Forbidden, NotFound, Unprocessable
from opsgraph.operations.direct import call_operation
from opsgraph.principal import Channel, Principal, Role

from .support import NOW, TOMORROW, call, person, snapshot

Document = dict[str, Any]
EMAIL = {"to": "jane.smith@example.com", "subject": "Hi", "body": "Hello"}


def test_a_read_returns_result_and_sources(shared_db: Database[Document]) -> None:
    out = call(shared_db, Role.STAFF, "members.get", {"member": "mem_demo_001"})
    assert set(out) == {"result", "sources"}


def test_a_write_applies_at_once_and_is_audited(seeded: Database[Document]) -> None:
    out = call(seeded, person(Role.STAFF, user="staff-liam"), "communications.send_email",
               EMAIL)
    assert out["applied"] is True
    assert re.fullmatch(r"chg_[0-9a-f]{16}", out["change_id"])  # as pending changes' ids
    assert out["summary"] == "Email Jane Smith <jane.smith@example.com>: 'Hi'"
    assert out["old"] == {} and out["new"]["to"] == "jane.smith@example.com"
    assert out["result"]["email"]["status"] == "queued"
    rows = list(seeded["audit"].find({"change_id": out["change_id"]}, {"_id": 0}))
    # One row, in the shape of every audit row (approval transitions alike).
    assert rows == [{
        "tenant_id": "demo", "change_id": out["change_id"],
        "operation": "communications.send_email", "from": None, "to": "applied",
        "actor": "staff-liam", "thread_id": None, "at": NOW,
        "detail": {"via": "direct", "summary": out["summary"], "args": EMAIL}}]


@pytest.mark.parametrize("who", [
    Principal.visitor("demo"),
    person(Role.STAFF, channel=Channel.EMAIL),
    person(Role.ADMIN, channel=Channel.EMAIL),
])
def test_visitors_and_the_email_channel_never_write(shared_db: Database[Document],
                                                    who: Principal) -> None:
    before = snapshot(shared_db)
    with pytest.raises(Forbidden):
        call(shared_db, who, "communications.send_email", EMAIL)
    assert snapshot(shared_db) == before


def test_the_email_channel_may_still_read(shared_db: Database[Document]) -> None:
    who = person(Role.STAFF, channel=Channel.EMAIL)
    assert call(shared_db, who, "knowledge.read", {"document": "faq"})["sources"]


@pytest.mark.parametrize(("role", "op_id", "args"), [
    (Role.VISITOR, "members.search", {"query": "jane"}),
    (Role.MEMBER, "members.search", {"query": "jane"}),
    (Role.MEMBER, "communications.inbox", {}),
    (Role.STAFF, "invoices.refund", {"invoice": "INV-1001", "amount": 1, "reason": "x" * 3}),
])
def test_a_missing_role_is_forbidden(shared_db: Database[Document], role: Role, op_id: str,
                                     args: Document) -> None:
    with pytest.raises(Forbidden, match="needs one of"):
        call(shared_db, role, op_id, args)


def test_the_tenant_plan_gates_features(shared_db: Database[Document]) -> None:
    acme_manager = person(Role.MANAGER, tenant="acme")
    with pytest.raises(Forbidden, match="'events' feature"):
        call(shared_db, acme_manager, "events.list", {})
    assert call(shared_db, acme_manager, "bookings.availability",
                {"resource": "Meeting Room A", "date": TOMORROW.isoformat()})["result"]


@pytest.mark.parametrize(("op_id", "args", "fields"), [
    ("members.update", {"changes": {"phone": "+44 7700 900123"}}, ["member"]),
    ("members.update", {"member": "x", "changes": {"colour": "red"}}, ["changes.colour"]),
    ("members.update", {"member": "x", "changes": {}}, ["changes"]),
    ("bookings.availability", {"resource": "Court 1", "date": "tomorrow"}, ["date"]),
    ("events.list", {"from": "soon"}, ["from"]),
    ("invoices.refund", {"invoice": "INV-1001", "amount": -5, "reason": "no"},
     ["amount", "reason"]),
    ("invoices.issue", {"member": "x", "lines": [{"amount": 5}]}, ["lines.0.description"]),
])
def test_bad_arguments_are_unprocessable_and_name_the_fields(
        shared_db: Database[Document], op_id: str, args: Document, fields: list[str]) -> None:
    with pytest.raises(Unprocessable) as err:
        call(shared_db, Role.ADMIN, op_id, args)
    assert [e["field"] for e in err.value.detail["errors"]] == fields
    for field in fields:
        assert f"{field}:" in err.value.message
    assert err.value.status == 422


@pytest.mark.parametrize("args", [["member"], "member=Jane", None])
def test_arguments_must_be_an_object(shared_db: Database[Document], args: Any) -> None:
    with pytest.raises(BadInput, match="expected a JSON object"):
        call(shared_db, Role.STAFF, "members.get", args)


def test_an_unknown_operation_is_not_found(shared_db: Database[Document]) -> None:
    with pytest.raises(NotFound, match=r"known: bookings\.availability"):
        call(shared_db, Role.STAFF, "members.delete", {})


def test_references_are_resolved_before_the_operation(shared_db: Database[Document]) -> None:
    out = call_operation(person(Role.STAFF), "invoices.get", {"invoice": " inv-1001 "},
                         db=shared_db, now=NOW)
    assert out["result"]["id"] == "inv_demo_1001"
