"""Events (classes, socials, tournaments): list, create, cancel, register, waitlist.

Documents: `events` {_id, title, start, end, capacity, location, description, status:
scheduled|cancelled}; `registrations` {_id, event_id, member_id, status:
registered|waitlisted, at, change_id?}. One registration per member and event (a unique
index; a new one's id is derived from both); past capacity a registration joins the
waitlist, first come first served.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from pydantic import Field

from opsgraph.errors import BadInput, Conflict
from opsgraph.operations.access import ANYONE, MEMBERS_UP, STAFF_UP, require_self
from opsgraph.operations.base import Context, Day, Operation, OpInput, Preview, Result
from opsgraph.operations.fields import Moment, Name, Reference
from opsgraph.operations.reads import by_ids, first_in_windows, time_windows, where_in
from opsgraph.operations.records import (
    Document,
    as_utc,
    day_bounds,
    derived_id,
    insert_once,
    not_in_past,
    record_json,
    require,
    short_when,
    stable_id,
    to_json,
)
from opsgraph.store.search_keys import with_keys

_DEFAULT_DAYS = 60
_LIST_LIMIT = 50


class EventList(OpInput):
    from_: Day | None = Field(None, alias="from",
                              description="First day, YYYY-MM-DD; default: today.")
    to: Day | None = Field(None, description="Last day, YYYY-MM-DD; default: 60 days on.")


class EventNew(OpInput):
    title: Name = Field(description="Event title.")
    start: Moment = Field(description="Start, ISO 8601 (no offset means UTC).")
    end: Moment = Field(description="End, ISO 8601, after start.")
    capacity: int = Field(ge=1, le=1000, description="Places available before the waitlist.")
    location: Name | None = Field(None, description="Where it happens.")


class EventRegister(OpInput):
    member: Reference = Field(description="Who registers: id, name or email.")
    event: Reference = Field(description="The event: id or title.")


class EventCancel(OpInput):
    event: Reference = Field(description="The event to call off: id or title.")
    reason: Name | None = Field(None, description="Why it is called off (shown to staff).")


class EventWaitlist(OpInput):
    event: Reference = Field(description="The event: id or title.")


def headcounts(ctx: Context, event_ids: list[str]) -> Counter[tuple[str, str]]:
    """(event id, registration status) → count."""
    regs = where_in(ctx.scope["registrations"], "event_id", event_ids,
                    projection={"event_id": 1, "status": 1})
    return Counter((r["event_id"], r["status"]) for r in regs)


def event_row(event: Document, counts: Counter[tuple[str, str]]) -> Document:
    """An event with its registered and waitlisted counts and places left."""
    registered = counts[(event["_id"], "registered")]
    return {"id": event["_id"], "title": event["title"], "start": to_json(event["start"]),
            "end": to_json(event["end"]), "location": event.get("location"),
            "status": event.get("status", "scheduled"), "capacity": event["capacity"],
            "registered": registered, "waitlisted": counts[(event["_id"], "waitlisted")],
            "places_left": max(0, event["capacity"] - registered)}


def list_events(ctx: Context, args: EventList) -> Result:
    """Scheduled events between two days (default: the next 60 days), the first 50."""
    first = args.from_ or ctx.now.date()
    last = args.to or first + timedelta(days=_DEFAULT_DAYS)
    if last < first:
        raise BadInput("to: must not be before from")
    start, end = day_bounds(first)[0], day_bounds(last)[1]
    events = first_in_windows(ctx.scope["events"], {}, "start",
                              time_windows(start, end, timedelta(days=7)), _LIST_LIMIT,
                              order=lambda e: (e["start"], e["_id"]),
                              keep=lambda e: e.get("status") != "cancelled")
    counts = headcounts(ctx, [e["_id"] for e in events])
    return Result({"from": first.isoformat(), "to": last.isoformat(),
                   "events": [event_row(e, counts) for e in events]})


def preview_create(ctx: Context, args: EventNew) -> Preview:
    """Check the times; show the event."""
    start, end = as_utc(args.start), as_utc(args.end)
    if end <= start:
        raise BadInput("end: must be after start")
    not_in_past(ctx, start, "start")
    new = {"title": args.title, "start": to_json(start), "end": to_json(end),
           "capacity": args.capacity, "location": args.location}
    where = f" at {args.location}" if args.location else ""
    return Preview(f"Create event {args.title!r} on {short_when(start)}{where}, "
                   f"{args.capacity} places", {}, new)


def apply_create(ctx: Context, args: EventNew, change_id: str) -> Document:
    """Insert the event once, under an id derived from the change."""
    event_id = derived_id(ctx, "evt", change_id)
    if ctx.scope["events"].find_one({"_id": event_id}) is None:
        preview_create(ctx, args)
    doc = insert_once(ctx.scope["events"], with_keys("events", {
        "_id": event_id, "title": args.title, "start": as_utc(args.start),
        "end": as_utc(args.end), "capacity": args.capacity, "location": args.location,
        "description": "", "status": "scheduled", "change_id": change_id}))
    return {"event": record_json(doc)}


def preview_cancel(ctx: Context, args: EventCancel) -> Preview:
    """Check the event is scheduled and still ahead; say who is booked on it."""
    event = require(ctx, "events", args.event, "event")
    if event.get("status") == "cancelled":
        raise Conflict(f"event: {event['title']} is already cancelled")
    not_in_past(ctx, event["start"], "event")
    counts = headcounts(ctx, [args.event])
    booked = counts[(args.event, "registered")] + counts[(args.event, "waitlisted")]
    why = f" ({args.reason})" if args.reason else ""
    summary = (f"Cancel {event['title']} on {short_when(event['start'])}{why}; "
               f"{booked} registered or waitlisted member(s) to tell")
    new = {"status": "cancelled", **({"cancel_reason": args.reason} if args.reason else {})}
    return Preview(summary, {"status": event.get("status", "scheduled")}, new)


def apply_cancel(ctx: Context, args: EventCancel, change_id: str) -> Document:
    """Cancel once; a retry of the same change finds it done."""
    coll = ctx.scope["events"]
    event = require(ctx, "events", args.event, "event")
    if event.get("cancel_change_id") != change_id:
        preview_cancel(ctx, args)
        done = coll.update_one({"_id": args.event, "status": {"$ne": "cancelled"}}, {"$set": {
            "status": "cancelled", "cancelled_at": ctx.now, "cancel_change_id": change_id,
            "cancel_reason": args.reason}})
        if done.modified_count != 1:
            raise Conflict(f"event: {args.event} changed while cancelling it")
    return {"event": record_json(require(ctx, "events", args.event, "event"))}


def _registration_status(ctx: Context, args: EventRegister) -> tuple[str, str]:
    """Checks the rules; returns (status the member would get, one-line summary)."""
    event = require(ctx, "events", args.event, "event")
    member = require(ctx, "members", args.member, "member")
    if event.get("status") == "cancelled":
        raise Conflict(f"event: {event['title']} is cancelled")
    not_in_past(ctx, event["start"], "event")
    if member.get("status") != "active":
        raise BadInput(f"member: {member['name']} is {member.get('status')} and cannot register")
    existing = ctx.scope["registrations"].find_one(
        {"event_id": args.event, "member_id": args.member})
    if existing is not None:
        raise Conflict(f"member: {member['name']} is already {existing['status']} for "
                       f"{event['title']}")
    counts = headcounts(ctx, [args.event])
    registered = counts[(args.event, "registered")]
    label = f"{member['name']} for {event['title']} on {short_when(event['start'])}"
    if registered < event["capacity"]:
        left = event["capacity"] - registered - 1
        return "registered", f"Register {label} ({left} places left after this)"
    position = counts[(args.event, "waitlisted")] + 1
    return "waitlisted", f"Waitlist {label}: the event is full, waitlist position {position}"


def preview_register(ctx: Context, args: EventRegister) -> Preview:
    """Register, or waitlist when the event is full."""
    status, summary = _registration_status(ctx, args)
    return Preview(summary, {}, {"event_id": args.event, "member_id": args.member,
                                 "status": status})


def apply_register(ctx: Context, args: EventRegister, change_id: str) -> Document:
    """Insert the registration once; capacity is counted again at apply time."""
    reg_id = stable_id(ctx, "reg", args.event, args.member)
    coll = ctx.scope["registrations"]
    existing = coll.find_one({"_id": reg_id})
    if existing is not None and existing.get("change_id") != change_id:
        raise Conflict(f"member: already {existing['status']} for this event ({reg_id})")
    if existing is None:
        status, _ = _registration_status(ctx, args)
        existing = insert_once(coll, {"_id": reg_id, "event_id": args.event,
                                      "member_id": args.member, "status": status,
                                      "at": ctx.now, "change_id": change_id})
    return {"registration": record_json(existing)}


def authorize_register(ctx: Context, args: EventRegister) -> None:
    """A member registers only themselves."""
    require_self(ctx, args.member, "register for events")


def list_waitlist(ctx: Context, args: EventWaitlist) -> Result:
    """Who waits for a place, in order."""
    event = require(ctx, "events", args.event, "event")
    waiting = list(ctx.scope["registrations"].find(
        {"event_id": args.event, "status": "waitlisted"}, sort=[("at", 1), ("_id", 1)]))
    ids = [w["member_id"] for w in waiting]
    members = by_ids(ctx.scope["members"], ids, projection={"name": 1, "email": 1})
    rows = [{"position": n, "member": {"id": w["member_id"],
                                       "name": members.get(w["member_id"], {}).get("name"),
                                       "email": members.get(w["member_id"], {}).get("email")},
             "since": to_json(w["at"])} for n, w in enumerate(waiting, start=1)]
    return Result({"event": event_row(event, headcounts(ctx, [args.event])), "waitlist": rows})


OPERATIONS: tuple[Operation, ...] = (
    Operation("events.list", "read", "list", EventList,
              "Upcoming events with places left and waitlist sizes (the first 50).",
              ANYONE, "events", run=list_events),
    Operation("events.create", "write", "create", EventNew,
              "Schedule a new event with a capacity.",
              STAFF_UP, "events", preview=preview_create, apply=apply_create),
    Operation("events.cancel", "write", "cancel", EventCancel,
              "Call off a scheduled event that has not started.",
              STAFF_UP, "events", {"event": "events"},
              preview=preview_cancel, apply=apply_cancel),
    Operation("events.register", "write", "register", EventRegister,
              "Register a member for an event; when it is full they join the waitlist.",
              MEMBERS_UP, "events", {"member": "members", "event": "events"},
              preview=preview_register, apply=apply_register, authorize=authorize_register),
    Operation("events.waitlist", "read", "list", EventWaitlist,
              "The waitlist of one event, in order.",
              STAFF_UP, "events", {"event": "events"}, run=list_waitlist),
)
