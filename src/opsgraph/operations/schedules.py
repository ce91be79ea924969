"""Staff schedules: list shifts and assign a staff member to an open shift.

Documents: `staff` {_id, name, email, phone, position, skills: [role...]};
`shifts` {_id, staff_id: str | None, date (YYYY-MM-DD), start, end, role, location,
assign_change_id?}. A shift with `staff_id` None is open.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from opsgraph.errors import BadInput, Conflict
from opsgraph.operations.access import MANAGERS, STAFF_UP
from opsgraph.operations.base import Context, Day, Operation, OpInput, Preview, Result
from opsgraph.operations.fields import Reference
from opsgraph.operations.reads import by_ids, first_in_windows, time_windows
from opsgraph.operations.records import (
    Document,
    as_utc,
    day_bounds,
    not_in_past,
    require,
    to_json,
)

_DEFAULT_DAYS = 7
_LIST_LIMIT = 100


class ShiftList(OpInput):
    staff: Reference | None = Field(None, description="Only this staff member's shifts: id, "
                                                      "name or email.")
    date: Day | None = Field(None, description="Only shifts on this day, YYYY-MM-DD; "
                                                "default: the next 7 days.")


class ShiftAssign(OpInput):
    staff: Reference = Field(description="Who takes the shift: id, name or email.")
    shift: Reference = Field(description="The open shift's id (see schedules.shifts).")


def _rows(ctx: Context, shifts: list[Document]) -> list[Document]:
    ids = sorted({s["staff_id"] for s in shifts if s.get("staff_id")})
    names = {key: d["name"] for key, d in by_ids(ctx.scope["staff"], ids, {"name": 1}).items()}
    return [{"id": s["_id"], "date": s["date"], "start": to_json(s["start"]),
             "end": to_json(s["end"]), "role": s["role"], "location": s.get("location"),
             "staff": ({"id": s["staff_id"], "name": names.get(s["staff_id"])}
                       if s.get("staff_id") else None),
             "open": not s.get("staff_id")} for s in shifts]


def list_shifts(ctx: Context, args: ShiftList) -> Result:
    """Shifts of one day (or the next 7 days), optionally of one staff member: the first
    100 by start, read in growing windows of time (operations.reads) on (tenant, staff,
    start) or (tenant, start)."""
    if args.date is not None:
        first = last = args.date
    else:
        first = ctx.now.date()
        last = first + timedelta(days=_DEFAULT_DAYS - 1)
    flt: Document = {} if args.staff is None else {"staff_id": args.staff}
    windows = time_windows(day_bounds(first)[0], day_bounds(last)[1], timedelta(hours=6))
    shifts = first_in_windows(ctx.scope["shifts"], flt, "start", windows, _LIST_LIMIT,
                              order=lambda s: (s["start"], s["_id"]))
    rows = _rows(ctx, shifts)
    return Result({"from": first.isoformat(), "to": last.isoformat(), "shifts": rows,
                   "open": sum(1 for r in rows if r["open"])})


def check_assignment(ctx: Context, args: ShiftAssign) -> tuple[Document, Document]:
    """Every rule an assignment must meet; returns (staff, shift)."""
    staff = require(ctx, "staff", args.staff, "staff")
    shift = require(ctx, "shifts", args.shift, "shift")
    if shift.get("staff_id"):
        holder = ctx.scope["staff"].find_one({"_id": shift["staff_id"]}) or {}
        raise Conflict(f"shift: {shift['_id']} is already assigned to "
                       f"{holder.get('name', shift['staff_id'])}")
    not_in_past(ctx, shift["start"], "shift")
    if shift["role"] not in staff.get("skills", []):
        raise BadInput(f"staff: {staff['name']} is not trained for {shift['role']} shifts "
                       f"(skills: {', '.join(staff.get('skills', [])) or 'none'})")
    clash = ctx.scope["shifts"].find_one({
        "staff_id": args.staff, "_id": {"$ne": args.shift},
        "start": {"$lt": shift["end"]}, "end": {"$gt": shift["start"]}})
    if clash is not None:
        raise Conflict(f"staff: {staff['name']} already works {clash['_id']} "
                       f"({as_utc(clash['start']):%a %H:%M}–{as_utc(clash['end']):%H:%M})")
    return staff, shift


def preview_assign(ctx: Context, args: ShiftAssign) -> Preview:
    """Check the shift is open and the person fits; show the assignment."""
    staff, shift = check_assignment(ctx, args)
    summary = (f"Assign {staff['name']} to the {shift['role']} shift on "
               f"{as_utc(shift['start']):%a %d %b %H:%M}–{as_utc(shift['end']):%H:%M}")
    return Preview(summary, {"staff_id": None}, {"staff_id": args.staff})


def apply_assign(ctx: Context, args: ShiftAssign, change_id: str) -> Document:
    """Assign once: only an open shift is taken, and a retry finds it done."""
    shift = require(ctx, "shifts", args.shift, "shift")
    if shift.get("assign_change_id") != change_id:
        check_assignment(ctx, args)
        done = ctx.scope["shifts"].update_one(
            {"_id": args.shift, "staff_id": None},
            {"$set": {"staff_id": args.staff, "assign_change_id": change_id}})
        if done.modified_count != 1:
            raise Conflict(f"shift: {args.shift} was taken while assigning it")
    return {"shift": _rows(ctx, [require(ctx, "shifts", args.shift, "shift")])[0]}


OPERATIONS: tuple[Operation, ...] = (
    Operation("schedules.shifts", "read", "list", ShiftList,
              "Staff shifts of a day (default: the next 7 days), open ones included.",
              STAFF_UP, "schedules", {"staff": "staff"}, run=list_shifts),
    Operation("schedules.assign", "write", "assign", ShiftAssign,
              "Give an open shift to a staff member trained for it who is free then.",
              MANAGERS, "schedules", {"staff": "staff", "shift": "shifts"},
              preview=preview_assign, apply=apply_assign),
)
