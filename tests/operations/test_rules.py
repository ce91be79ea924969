"""Business rules refuse a write with a clear error, in preview and again at apply."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.errors import BadInput, Conflict, Forbidden, NotFound
from opsgraph.operations.catalogue import get_operation
from opsgraph.principal import Role

from .support import NOW, TOMORROW, call, context, free_slot, idle_member, person, preview

Document = dict[str, Any]
T = TOMORROW.isoformat()


def _a_booking(db: Database[Document], resource: str = "res_demo_court1") -> Document:
    doc = db["bookings"].find_one({"tenant_id": "demo", "resource_id": resource,
                                   "status": "confirmed", "start": {"$gt": NOW}},
                                  sort=[("start", 1)])
    assert doc is not None
    return doc


# --- bookings ---------------------------------------------------------------------------

def test_a_taken_slot_is_a_conflict(shared_db: Database[Document]) -> None:
    taken = _a_booking(shared_db)
    member = idle_member(shared_db, taken["start"], taken["end"])
    with pytest.raises(Conflict, match="Court 1 is already booked"):
        preview(shared_db, "bookings.create", {
            "member": member, "resource": "Court 1", "start": taken["start"].isoformat(),
            "end": taken["end"].isoformat()})


@pytest.mark.parametrize(("start", "end", "error", "words"), [
    (f"{T}T05:00:00", f"{T}T06:00:00", BadInput, "is open 07:00–22:00"),
    (f"{T}T10:00:00", f"{T}T09:00:00", BadInput, "end: must be after start"),
    (f"{T}T08:00:00", f"{T}T12:00:00", BadInput, "between 15 minutes and 3 hours"),
    ("2030-01-08T10:00:00", "2030-01-08T11:00:00", BadInput, "is in the past"),
])
def test_booking_times_are_checked(shared_db: Database[Document], start: str, end: str,
                                   error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        preview(shared_db, "bookings.create", {"member": "mem_demo_001", "resource": "Studio A",
                                              "start": start, "end": end})


def test_a_closed_resource_cannot_be_booked(shared_db: Database[Document]) -> None:
    with pytest.raises(Conflict, match="maintenance"):
        preview(shared_db, "bookings.create", {"member": "mem_demo_001", "resource": "SQ",
                                              "start": f"{T}T10:00", "end": f"{T}T11:00"})


def test_a_paused_member_cannot_book(shared_db: Database[Document]) -> None:
    start, end = free_slot(shared_db, "res_demo_studio_a")
    with pytest.raises(BadInput, match="Raj Mehta is paused"):
        preview(shared_db, "bookings.create", {"member": "Raj Mehta", "resource": "Studio A",
                                              "start": start.isoformat(),
                                              "end": end.isoformat()})


def test_a_member_cannot_hold_two_overlapping_bookings(shared_db: Database[Document]) -> None:
    taken = _a_booking(shared_db)
    free = call(shared_db, Role.STAFF, "bookings.availability",
                {"resource": "Meeting Room", "date": taken["start"].date().isoformat()})
    same_time = [s for s in free["result"]["free"]
                 if s["start"] == taken["start"].isoformat()]
    assert same_time, "the seeded meeting room is free when Court 1's first booking starts"
    with pytest.raises(Conflict, match="already has a booking"):
        preview(shared_db, "bookings.create", {
            "member": taken["member_id"], "resource": "Meeting Room",
            "start": same_time[0]["start"], "end": same_time[0]["end"]})


def test_apply_checks_again_after_the_slot_was_taken(seeded: Database[Document]) -> None:
    start, end = free_slot(seeded, "res_demo_court2")
    op = get_operation("bookings.create")
    ctx = context(seeded)
    first = op.input.model_validate({"member": "mem_demo_001", "resource": "res_demo_court2",
                                     "start": start, "end": end})
    other = idle_member(seeded, start, end)
    second = first.model_copy(update={"member": other})
    assert op.preview is not None and op.apply is not None
    op.preview(ctx, second)  # fine while the slot is free
    op.apply(ctx, first, "chg_first")
    with pytest.raises(Conflict, match="already booked"):
        op.apply(ctx, second, "chg_second")


def test_cancelling_twice_or_a_past_booking_is_refused(seeded: Database[Document]) -> None:
    booking = _a_booking(seeded)["_id"]
    call(seeded, Role.STAFF, "bookings.cancel", {"booking": booking})
    with pytest.raises(Conflict, match="already cancelled"):
        call(seeded, Role.STAFF, "bookings.cancel", {"booking": booking})
    past = seeded["bookings"].find_one({"tenant_id": "demo", "status": "confirmed",
                                        "start": {"$lt": NOW}})
    assert past is not None
    with pytest.raises(BadInput, match="already started"):
        call(seeded, Role.STAFF, "bookings.cancel", {"booking": past["_id"]})


def test_an_event_is_cancelled_once_by_staff_and_never_after_it_started(
        seeded: Database[Document]) -> None:
    preview = call(seeded, Role.STAFF, "events.cancel", {"event": "Wine & Tennis Evening"})
    assert preview is not None
    with pytest.raises(Conflict, match="already cancelled"):
        call(seeded, Role.STAFF, "events.cancel", {"event": "Wine & Tennis Evening"})
    with pytest.raises(BadInput, match="event"):
        call(seeded, Role.STAFF, "events.cancel", {"event": "Nutrition Talk"})
    with pytest.raises(Forbidden):
        call(seeded, Role.MEMBER, "events.cancel", {"event": "Members' Social Night"})
    with pytest.raises(Conflict, match="cancelled"):
        call(seeded, Role.STAFF, "events.register", {"member": "Jane Smith",
                                                     "event": "Wine & Tennis Evening"})


def test_a_member_books_and_cancels_only_for_themselves(seeded: Database[Document]) -> None:
    start, end = free_slot(seeded, "res_demo_studio_b")
    me = idle_member(seeded, start, end)
    member = person(Role.MEMBER, user=me)
    slot = {"resource": "Studio B", "start": start.isoformat(), "end": end.isoformat()}
    someone_else = "mem_demo_002" if me != "mem_demo_002" else "mem_demo_001"
    with pytest.raises(Forbidden, match="only to their own member records"):
        call(seeded, member, "bookings.create", {**slot, "member": someone_else})
    out = call(seeded, member, "bookings.create", {**slot, "member": me})
    booking = out["result"]["booking"]["id"]
    other = _a_booking(seeded, "res_demo_court1")
    assert other["member_id"] != me
    with pytest.raises(Forbidden):
        call(seeded, member, "bookings.cancel", {"booking": other["_id"]})
    assert call(seeded, member, "bookings.cancel", {"booking": booking})["applied"]


# --- schedules --------------------------------------------------------------------------

def test_an_assigned_shift_cannot_be_assigned_again(shared_db: Database[Document]) -> None:
    shift = shared_db["shifts"].find_one({"tenant_id": "demo", "staff_id": {"$ne": None},
                                          "start": {"$gt": NOW}})
    assert shift is not None
    with pytest.raises(Conflict, match="already assigned"):
        preview(shared_db, "schedules.assign", {"staff": "Sarah Okafor", "shift": shift["_id"]})


def test_untrained_staff_are_refused(shared_db: Database[Document]) -> None:
    shift = shared_db["shifts"].find_one({"tenant_id": "demo", "staff_id": None,
                                          "role": {"$ne": "maintenance"},
                                          "start": {"$gt": NOW}})
    assert shift is not None
    with pytest.raises(BadInput, match="not trained"):
        preview(shared_db, "schedules.assign", {"staff": "Ben Adeyemi", "shift": shift["_id"]})


def test_staff_already_working_then_are_refused(shared_db: Database[Document]) -> None:
    skills = {s["_id"]: s["skills"] for s in shared_db["staff"].find({"tenant_id": "demo"})}
    shifts = list(shared_db["shifts"].find({"tenant_id": "demo", "start": {"$gt": NOW}}))
    pairs = [(o["_id"], w["staff_id"]) for o in shifts if o["staff_id"] is None
             for w in shifts if w["staff_id"] and o["role"] in skills[w["staff_id"]]
             and w["start"] < o["end"] and w["end"] > o["start"]]
    assert pairs, "the seed has a trained person busy during an open shift"
    open_id, busy_staff = pairs[0]
    with pytest.raises(Conflict, match="already works"):
        preview(shared_db, "schedules.assign", {"staff": busy_staff, "shift": open_id})


def test_only_managers_assign_shifts(shared_db: Database[Document]) -> None:
    with pytest.raises(Forbidden, match="manager"):
        call(shared_db, Role.STAFF, "schedules.assign", {"staff": "Liam Murphy",
                                                        "shift": "shf_demo_13_0"})


# --- events -----------------------------------------------------------------------------

def test_a_full_event_puts_the_member_on_the_waitlist(seeded: Database[Document]) -> None:
    taken = {r["member_id"] for r in seeded["registrations"].find({"event_id": "evt_demo_09"})}
    member = next(m["_id"] for m in seeded["members"].find(
        {"tenant_id": "demo", "status": "active"}, sort=[("_id", 1)]) if m["_id"] not in taken)
    args = {"member": member, "event": "First Aid Workshop"}
    assert "waitlist position 6" in preview(seeded, "events.register", args).summary
    out = call(seeded, Role.STAFF, "events.register", args)
    assert out["result"]["registration"]["status"] == "waitlisted"
    waitlist = call(seeded, Role.STAFF, "events.waitlist", {"event": "evt_demo_09"})
    assert waitlist["result"]["waitlist"][-1]["member"]["id"] == member


def test_registering_twice_or_for_a_past_event_is_refused(
        shared_db: Database[Document]) -> None:
    reg = shared_db["registrations"].find_one({"event_id": "evt_demo_08"})
    assert reg is not None
    with pytest.raises(Conflict, match="already registered"):
        preview(shared_db, "events.register", {"member": reg["member_id"],
                                               "event": "evt_demo_08"})
    with pytest.raises(BadInput, match="in the past"):
        preview(shared_db, "events.register", {"member": "mem_demo_001",
                                               "event": "Nutrition Talk"})


def test_an_event_must_end_after_it_starts(shared_db: Database[Document]) -> None:
    with pytest.raises(BadInput, match="end: must be after start"):
        preview(shared_db, "events.create", {"title": "Odd", "start": f"{T}T12:00",
                                             "end": f"{T}T11:00", "capacity": 5})


# --- invoices ---------------------------------------------------------------------------

def test_a_refund_cannot_exceed_what_was_paid(seeded: Database[Document]) -> None:
    with pytest.raises(BadInput, match=r"more than the 75\.00"):
        call(seeded, Role.MANAGER, "invoices.refund",
             {"invoice": "INV-1001", "amount": 80, "reason": "Too much"})
    call(seeded, Role.MANAGER, "invoices.refund",
         {"invoice": "INV-1001", "amount": 50, "reason": "Court closed"})
    with pytest.raises(BadInput, match=r"more than the 25\.00"):
        call(seeded, Role.MANAGER, "invoices.refund",
             {"invoice": "INV-1001", "amount": 30, "reason": "Again"})
    out = call(seeded, Role.MANAGER, "invoices.refund",
               {"invoice": "INV-1001", "amount": 25, "reason": "The rest"})
    assert out["result"]["invoice"]["status"] == "refunded"
    assert out["old"] == {"refunded": 50.0, "status": "partially_refunded"}


def test_an_unpaid_invoice_cannot_be_refunded(shared_db: Database[Document]) -> None:
    unpaid = shared_db["invoices"].find_one({"tenant_id": "demo", "status": "open"})
    assert unpaid is not None
    with pytest.raises(Conflict, match="has not been paid"):
        preview(shared_db, "invoices.refund", {"invoice": unpaid["number"], "amount": 1,
                                               "reason": "Test"})


def test_refunds_above_500_need_an_admin(seeded: Database[Document]) -> None:
    big = seeded["invoices"].find_one({"tenant_id": "demo", "total": 1200.0})
    assert big is not None
    args = {"invoice": big["number"], "amount": 600, "reason": "Relocation"}
    with pytest.raises(Forbidden, match="above 500 need an admin"):
        call(seeded, Role.MANAGER, "invoices.refund", args)
    assert call(seeded, Role.ADMIN, "invoices.refund", args)["applied"]


def test_an_invoice_total_must_be_positive(shared_db: Database[Document]) -> None:
    with pytest.raises(BadInput, match="above zero"):
        preview(shared_db, "invoices.issue", {"member": "mem_demo_001", "lines": [
            {"description": "Fee", "amount": 10}, {"description": "Discount", "amount": -10}]})


# --- members ----------------------------------------------------------------------------

def test_member_email_must_stay_unique(shared_db: Database[Document]) -> None:
    with pytest.raises(Conflict, match="already belongs to Jane Smith"):
        preview(shared_db, "members.update", {"member": "Jane Smithson",
                                              "changes": {"email": "Jane.Smith@example.com"}})
    with pytest.raises(Conflict, match="already belongs"):
        preview(shared_db, "members.create", {"name": "Copy", "email": "tbaker@mail.example"})


def test_a_change_that_changes_nothing_is_refused(shared_db: Database[Document]) -> None:
    with pytest.raises(BadInput, match="already has these values"):
        preview(shared_db, "members.update", {"member": "mem_demo_003",
                                              "changes": {"membership": "standard"}})


@pytest.mark.parametrize("changes", [{"status": "cancelled"}, {"membership": "premium"}])
def test_status_and_membership_changes_need_a_manager(seeded: Database[Document],
                                                      changes: Document) -> None:
    args = {"member": "Jane Smithson", "changes": changes}
    with pytest.raises(Forbidden, match="needs a manager"):
        call(seeded, Role.STAFF, "members.update", args)
    out = call(seeded, Role.MANAGER, "members.update", args)
    assert out["new"] == changes
    assert {k: out["result"]["member"][k] for k in changes} == changes
    contact = call(seeded, Role.STAFF, "members.update",
                   {"member": "Jane Smithson", "changes": {"phone": "+44 7700 900234"}})
    assert contact["old"] == {"phone": "+44 7700 900233"}


# --- communications and facilities ------------------------------------------------------

def test_email_needs_a_valid_address_or_a_known_member(shared_db: Database[Document]) -> None:
    with pytest.raises(BadInput, match="not a valid email address"):
        preview(shared_db, "communications.send_email", {"to": "bob@", "subject": "Hi",
                                                         "body": "Hello"})
    with pytest.raises(NotFound, match="to: no member matches"):
        preview(shared_db, "communications.send_email", {"to": "Zed Nobody", "subject": "Hi",
                                                         "body": "Hello"})
    out = preview(shared_db, "communications.send_email", {
        "to": "someone@else.example", "subject": "Hi", "body": "Hello"})
    assert out.new["to"] == "someone@else.example" and out.new["member_id"] is None


def test_a_duplicate_issue_report_is_refused(shared_db: Database[Document]) -> None:
    with pytest.raises(Conflict, match="already reported"):
        preview(shared_db, "facilities.report_issue", {
            "resource": "Court 2",
            "description": "Net winder is stiff and the net sags on the north side."})

