"""Writes: a preview changes nothing, an apply happens once per change id."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import BadInput
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import CATALOGUE, get_operation
from opsgraph.operations.communications import EmailSend, preview_send
from opsgraph.operations.references import resolve_args
from opsgraph.principal import Role

from .support import NOW, context, free_slot, idle_member, open_shift, snapshot

Document = dict[str, Any]
ArgsOf = Callable[[Database[Document]], Document]


def _booking(db: Database[Document]) -> Document:
    start, end = free_slot(db, "res_demo_court2")
    return {"member": idle_member(db, start, end), "resource": "Court 2",
            "start": start.isoformat(), "end": end.isoformat()}


def _future_booking(db: Database[Document]) -> Document:
    doc = db["bookings"].find_one({"tenant_id": "demo", "status": "confirmed",
                                   "start": {"$gt": NOW}}, sort=[("start", 1)])
    assert doc is not None
    return {"booking": doc["_id"]}


def _registration(db: Database[Document]) -> Document:
    taken = {r["member_id"] for r in db["registrations"].find({"event_id": "evt_demo_08"})}
    member = next(m["_id"] for m in db["members"].find(
        {"tenant_id": "demo", "status": "active"}, sort=[("_id", 1)]) if m["_id"] not in taken)
    return {"member": member, "event": "Club Championship Finals"}


def _assignment(db: Database[Document]) -> Document:
    shift, staff = open_shift(db)
    return {"staff": staff, "shift": shift}


WRITES: dict[str, ArgsOf] = {
    "members.create": lambda db: {"name": "Nia Okoro", "email": "nia@example.com"},
    "members.update": lambda db: {"member": "Jane Smithson",
                                  "changes": {"phone": "+44 7700 900999"}},
    "bookings.create": _booking,
    "bookings.cancel": _future_booking,
    "schedules.assign": _assignment,
    "events.create": lambda db: {"title": "Padel Taster", "start": "2030-01-20T10:00:00Z",
                                 "end": "2030-01-20T12:00:00Z", "capacity": 8},
    "events.register": _registration,
    "events.cancel": lambda db: {"event": "Club Championship Finals",
                                 "reason": "Courts being resurfaced"},
    "invoices.issue": lambda db: {"member": "mem_demo_001", "lines": [
        {"description": "Ball machine hire", "amount": 15}]},
    "invoices.refund": lambda db: {"invoice": "INV-1001", "amount": 20, "reason": "Court closed"},
    "communications.send_email": lambda db: {"to": "Jane Smithson", "subject": "Your booking",
                                             "body": "See you on court!"},
    "facilities.report_issue": lambda db: {"resource": "Court 1",
                                           "description": "Bench by the gate is broken."},
}


def test_every_write_is_covered() -> None:
    assert set(WRITES) == {op.id for op in CATALOGUE.values() if op.kind == "write"}


def _prepare(db: Database[Document], op_id: str) -> tuple[Context, Any]:
    op = get_operation(op_id)
    ctx = context(db)
    return ctx, resolve_args(ctx, op, op.input.model_validate(WRITES[op_id](db)))


@pytest.mark.parametrize("op_id", sorted(WRITES))
def test_preview_changes_nothing(shared_db: Database[Document], op_id: str) -> None:
    op = get_operation(op_id)
    ctx, args = _prepare(shared_db, op_id)
    before = snapshot(shared_db)
    assert op.preview is not None
    # The full scope, not a reader: the preview itself must not write.
    preview = op.preview(ctx, args)
    assert preview.summary and "\n" not in preview.summary
    assert preview.new
    assert snapshot(shared_db) == before


@pytest.mark.parametrize("op_id", sorted(WRITES))
def test_apply_twice_with_one_change_id_has_one_effect(seeded: Database[Document],
                                                       op_id: str) -> None:
    op = get_operation(op_id)
    ctx, args = _prepare(seeded, op_id)
    assert op.apply is not None
    before = snapshot(seeded)
    first = op.apply(ctx, args, "chg_test_1")
    once = snapshot(seeded)
    assert once != before
    again = op.apply(ctx, args, "chg_test_1")
    assert snapshot(seeded) == once
    assert again == first
    json.dumps(first)  # results travel as JSON (SSE, REST, pending changes)


def test_two_change_ids_make_two_invoices_with_consecutive_numbers(
        seeded: Database[Document]) -> None:
    op = get_operation("invoices.issue")
    ctx, args = _prepare(seeded, "invoices.issue")
    assert op.apply is not None
    a = op.apply(ctx, args, "chg_a")["invoice"]
    b = op.apply(ctx, args, "chg_b")["invoice"]
    highest = seeded["invoices"].count_documents({"tenant_id": "demo"}) + 1000
    assert (a["number"], b["number"]) == (f"INV-{highest - 1}", f"INV-{highest}")
    assert a["status"] == "open" and a["due"] == "2030-01-23"


def test_applying_a_cancellation_reads_back_as_cancelled(seeded: Database[Document]) -> None:
    op = get_operation("bookings.cancel")
    ctx, args = _prepare(seeded, "bookings.cancel")
    assert op.apply is not None
    out = op.apply(ctx, args, "chg_c")
    assert out["booking"]["status"] == "cancelled"
    slot = seeded["bookings"].find_one({"_id": args.booking})
    assert slot is not None and slot["cancel_change_id"] == "chg_c"


@pytest.mark.parametrize("to", ["Jane Smith <jane.smith@example.com>",
                                "Jane Smith (Jane.Smith@example.com)",
                                "jane.smith@example.com (Jane Smith)"])
def test_an_address_written_with_its_name_is_the_address(shared_db: Database[Document],
                                                         to: str) -> None:
    # held-out communications-12: the model wrote the name and the address together
    args = EmailSend.model_validate({"to": to, "subject": "Locker key", "body": "At reception."})
    assert args.to.lower() == "jane.smith@example.com"
    preview = preview_send(context(shared_db, Role.STAFF), args)
    assert (preview.new["to"], preview.new["member_id"]) == ("jane.smith@example.com",
                                                             "mem_demo_001")


def test_a_message_goes_to_one_recipient(shared_db: Database[Document]) -> None:
    args = EmailSend.model_validate({"to": "jane.smith@example.com, raj@example.com",
                                     "subject": "Hi", "body": "Hello"})
    with pytest.raises(BadInput, match="names 2 addresses"):
        preview_send(context(shared_db, Role.STAFF), args)
