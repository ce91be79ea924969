"""Bookings of resources (courts, studios, rooms): availability, list, create, cancel.

Documents: `resources` {_id, name, code, kind, capacity, hours: {weekday: [open, close],
weekend: [open, close]}, slot_minutes, status: open|maintenance, location};
`bookings` {_id, member_id, resource_id, start, end, status: confirmed|cancelled,
created_at, change_id?, cancelled_at?, cancel_change_id?}.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from pydantic import Field

from opsgraph.errors import BadInput, Conflict
from opsgraph.operations.access import (
    ANYONE,
    MEMBERS_UP,
    member_filter,
    require_self,
)
from opsgraph.operations.base import Context, Day, Operation, OpInput, Preview, Result
from opsgraph.operations.fields import Moment, Reference
from opsgraph.operations.reads import by_ids, first_in_windows, time_windows
from opsgraph.operations.records import (
    Document,
    as_utc,
    at_time,
    day_bounds,
    derived_id,
    insert_once,
    not_in_past,
    require,
    short_when,
    to_json,
)

MIN_BOOKING = timedelta(minutes=15)
MAX_BOOKING = timedelta(hours=3)
_LIST_LIMIT = 100


class Availability(OpInput):
    resource: Reference = Field(description="The resource: id or name (\"Court 1\").")
    date: Day = Field(description="The day to check, YYYY-MM-DD.")


class BookingList(OpInput):
    member: Reference | None = Field(None, description="Only this member's bookings: id, name "
                                                       "or email.")
    date: Day | None = Field(None, description="Only bookings on this day, YYYY-MM-DD; "
                                                "default: the next 14 days.")


class BookingNew(OpInput):
    member: Reference = Field(description="Who the booking is for: id, name or email.")
    resource: Reference = Field(description="What to book: id or name (\"Court 1\").")
    start: Moment = Field(description="Start, ISO 8601 (no offset means UTC).")
    end: Moment = Field(description="End, ISO 8601, after start and on the same day.")


class BookingCancel(OpInput):
    booking: Reference = Field(description="The booking id (see bookings.list).")


def opening_hours(resource: Document, day: date) -> tuple[datetime, datetime]:
    """When `resource` opens and closes on `day`."""
    hours = resource.get("hours") or {}
    opens, closes = hours.get("weekend" if day.weekday() >= 5 else "weekday", ["07:00", "22:00"])
    return at_time(day, opens), at_time(day, closes)


def _overlapping(ctx: Context, flt: Document, start: datetime,
                 end: datetime) -> list[Document]:
    """Confirmed bookings matching `flt` (a member or a resource) that overlap [start,
    end), earliest first. A booking lasts at most MAX_BOOKING, so one that overlaps starts
    in [start - MAX_BOOKING, end): the store walks that stretch of its index on
    (tenant, member or resource, status, start) and the end is checked here."""
    docs = ctx.scope["bookings"].find(
        {**flt, "status": "confirmed", "start": {"$gt": start - MAX_BOOKING, "$lt": end}})
    return sorted((d for d in docs if as_utc(d["end"]) > start),
                  key=lambda d: (d["start"], d["_id"]))


def confirmed_between(ctx: Context, resource_id: str, start: datetime,
                      end: datetime) -> list[Document]:
    """Confirmed bookings of a resource overlapping [start, end), earliest first."""
    return _overlapping(ctx, {"resource_id": resource_id}, start, end)


def _free_slots(ctx: Context, resource: Document, day: date,
                booked: list[Document]) -> list[dict[str, str]]:
    opens, closes = opening_hours(resource, day)
    step = timedelta(minutes=int(resource.get("slot_minutes", 60)))
    free: list[dict[str, str]] = []
    slot = opens
    while slot + step <= closes:
        clash = any(as_utc(b["start"]) < slot + step and as_utc(b["end"]) > slot for b in booked)
        if not clash and slot >= ctx.now:
            free.append({"start": slot.isoformat(), "end": (slot + step).isoformat()})
        slot += step
    return free


def check_availability(ctx: Context, args: Availability) -> Result:
    """Free and booked slots of one resource on one day (no member details: visitors ask)."""
    resource = require(ctx, "resources", args.resource, "resource")
    opens, closes = opening_hours(resource, args.date)
    booked = confirmed_between(ctx, args.resource, *day_bounds(args.date))
    open_now = resource.get("status", "open") == "open"
    data: Document = {
        "resource": {"id": resource["_id"], "name": resource["name"], "kind": resource["kind"]},
        "date": args.date.isoformat(), "status": resource.get("status", "open"),
        "opens": opens.isoformat(), "closes": closes.isoformat(),
        "free": _free_slots(ctx, resource, args.date, booked) if open_now else [],
        "booked": [{"start": to_json(b["start"]), "end": to_json(b["end"])} for b in booked],
    }
    if not open_now:
        data["note"] = f"{resource['name']} is closed for maintenance"
    return Result(data)


def _names(ctx: Context, collection: str, ids: set[str], field: str) -> dict[str, str]:
    found = by_ids(ctx.scope[collection], ids, projection={field: 1})
    return {key: str(d.get(field, "")) for key, d in found.items()}


def booking_rows(ctx: Context, docs: list[Document]) -> list[Document]:
    """Bookings with member and resource names, as lists show them."""
    members = _names(ctx, "members", {d["member_id"] for d in docs}, "name")
    resources = _names(ctx, "resources", {d["resource_id"] for d in docs}, "name")
    return [{"id": d["_id"], "status": d["status"],
             "member": {"id": d["member_id"], "name": members.get(d["member_id"])},
             "resource": {"id": d["resource_id"], "name": resources.get(d["resource_id"])},
             "start": to_json(d["start"]), "end": to_json(d["end"])} for d in docs]


def list_bookings(ctx: Context, args: BookingList) -> Result:
    """Confirmed bookings, filtered by member and day; a member sees only their own. The
    first 100, read in growing windows of time (operations.reads)."""
    flt: Document = {**member_filter(ctx, args.member, "list bookings"), "status": "confirmed"}
    if args.date is not None:
        start, end = day_bounds(args.date)
    else:
        start = day_bounds(ctx.now.date())[0]
        end = day_bounds(ctx.now.date() + timedelta(days=14))[1]
    docs = first_in_windows(ctx.scope["bookings"], flt, "start",
                            time_windows(start, end, timedelta(hours=2)), _LIST_LIMIT,
                            order=lambda d: (d["start"], d["_id"]))
    return Result({"from": start.isoformat(), "to": end.isoformat(),
                   "bookings": booking_rows(ctx, docs)})


def _check_times(ctx: Context, args: BookingNew, resource: Document) -> None:
    start, end = as_utc(args.start), as_utc(args.end)
    if end <= start:
        raise BadInput("end: must be after start")
    if not MIN_BOOKING <= end - start <= MAX_BOOKING:
        raise BadInput("end: a booking lasts between 15 minutes and 3 hours")
    not_in_past(ctx, start, "start")
    opens, closes = opening_hours(resource, start.date())
    if start < opens or end > closes:
        raise BadInput(f"start: {resource['name']} is open {opens:%H:%M}–{closes:%H:%M} "
                       f"on {start:%a %d %b}")


def check_booking(ctx: Context, args: BookingNew, booking_id: str) -> tuple[Document, Document]:
    """Every rule a new booking must meet; returns (member, resource)."""
    member = require(ctx, "members", args.member, "member")
    resource = require(ctx, "resources", args.resource, "resource")
    if member.get("status") != "active":
        raise BadInput(f"member: {member['name']} is {member.get('status')} and cannot book")
    if resource.get("status", "open") != "open":
        raise Conflict(f"resource: {resource['name']} is closed for maintenance")
    _check_times(ctx, args, resource)
    start, end = as_utc(args.start), as_utc(args.end)
    for clash in confirmed_between(ctx, args.resource, start, end):
        if clash["_id"] != booking_id:
            raise Conflict(f"{resource['name']} is already booked {short_when(clash['start'])}–"
                           f"{as_utc(clash['end']):%H:%M} ({clash['_id']})")
    overlapping = next((b for b in _overlapping(ctx, {"member_id": args.member}, start, end)
                        if b["_id"] != booking_id), None)
    if overlapping is not None:
        raise Conflict(f"member: {member['name']} already has a booking at that time "
                       f"({overlapping['_id']})")
    return member, resource


def preview_create(ctx: Context, args: BookingNew) -> Preview:
    """Check the slot is free and the member may book; show the booking."""
    member, resource = check_booking(ctx, args, "")
    # the names for the manager's diff; the ids for what applies (the page hides `*_id`)
    new = {"member": member["name"], "resource": resource["name"],
           "member_id": args.member, "resource_id": args.resource,
           "start": to_json(as_utc(args.start)), "end": to_json(as_utc(args.end)),
           "status": "confirmed"}
    summary = (f"Book {resource['name']} for {member['name']} on {short_when(args.start)}–"
               f"{as_utc(args.end):%H:%M}")
    return Preview(summary, {}, new)


def apply_create(ctx: Context, args: BookingNew, change_id: str) -> Document:
    """Insert the booking once, under an id derived from the change."""
    booking_id = derived_id(ctx, "bkg", change_id)
    coll = ctx.scope["bookings"]
    if coll.find_one({"_id": booking_id}) is None:
        check_booking(ctx, args, booking_id)
    doc = insert_once(coll, {
        "_id": booking_id, "member_id": args.member, "resource_id": args.resource,
        "start": as_utc(args.start), "end": as_utc(args.end), "status": "confirmed",
        "created_at": ctx.now, "change_id": change_id})
    return {"booking": booking_rows(ctx, [doc])[0]}


def authorize_create(ctx: Context, args: BookingNew) -> None:
    """A member books only for themselves."""
    require_self(ctx, args.member, "make bookings")


def _cancellable(ctx: Context, booking: Document) -> None:
    if booking["status"] != "confirmed":
        raise Conflict(f"booking: {booking['_id']} is already {booking['status']}")
    if as_utc(booking["start"]) <= ctx.now:
        raise BadInput(f"booking: {booking['_id']} has already started")


def preview_cancel(ctx: Context, args: BookingCancel) -> Preview:
    """Check the booking is confirmed and still ahead."""
    booking = require(ctx, "bookings", args.booking, "booking")
    _cancellable(ctx, booking)
    row = booking_rows(ctx, [booking])[0]
    summary = (f"Cancel {row['resource']['name']} booking of {row['member']['name']} on "
               f"{short_when(booking['start'])} ({booking['_id']})")
    return Preview(summary, {"status": "confirmed"}, {"status": "cancelled"})


def apply_cancel(ctx: Context, args: BookingCancel, change_id: str) -> Document:
    """Cancel once; a retry of the same change finds it done."""
    coll = ctx.scope["bookings"]
    booking = require(ctx, "bookings", args.booking, "booking")
    if booking.get("cancel_change_id") != change_id:
        _cancellable(ctx, booking)
        done = coll.update_one({"_id": args.booking, "status": "confirmed"}, {"$set": {
            "status": "cancelled", "cancelled_at": ctx.now, "cancel_change_id": change_id}})
        if done.modified_count != 1:
            raise Conflict(f"booking: {args.booking} changed while cancelling it")
    return {"booking": booking_rows(ctx, [require(ctx, "bookings", args.booking, "booking")])[0]}


def authorize_cancel(ctx: Context, args: BookingCancel) -> None:
    """A member cancels only their own bookings."""
    booking: Any = ctx.scope["bookings"].find_one({"_id": args.booking}) or {}
    require_self(ctx, booking.get("member_id"), "cancel bookings")


OPERATIONS: tuple[Operation, ...] = (
    Operation("bookings.availability", "read", "check", Availability,
              "Free and booked slots of a court, studio or room on one day.",
              ANYONE, "bookings", {"resource": "resources"}, run=check_availability),
    Operation("bookings.list", "read", "list", BookingList,
              "Confirmed bookings, optionally for one member and/or one day.",
              MEMBERS_UP, "bookings", {"member": "members"}, run=list_bookings),
    Operation("bookings.create", "write", "create", BookingNew,
              "Book a resource for a member (slot free, within opening hours, ≤ 3 hours).",
              MEMBERS_UP, "bookings", {"member": "members", "resource": "resources"},
              preview=preview_create, apply=apply_create, authorize=authorize_create),
    Operation("bookings.cancel", "write", "cancel", BookingCancel,
              "Cancel a confirmed booking that has not started.",
              MEMBERS_UP, "bookings", {"booking": "bookings"},
              preview=preview_cancel, apply=apply_cancel, authorize=authorize_cancel),
)
