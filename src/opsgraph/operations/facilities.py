"""Facilities: the state of each resource and issue reports (tickets).

Document `tickets`: {_id, resource_id, description, status: open|closed, reported_by,
reported_at, change_id?}. A resource's own `status` (open|maintenance) lives on `resources`.
"""

from __future__ import annotations

from pydantic import Field

from opsgraph.errors import Conflict
from opsgraph.operations.access import MEMBERS_UP
from opsgraph.operations.base import Context, Operation, OpInput, Preview, Result
from opsgraph.operations.fields import Description, Reference
from opsgraph.operations.ranking import normalise
from opsgraph.operations.records import (
    Document,
    derived_id,
    insert_once,
    record_json,
    require,
    to_json,
)


class FacilityStatus(OpInput):
    resource: Reference | None = Field(None, description="Only this resource: id or name; "
                                                         "default: all of them.")


class IssueReport(OpInput):
    resource: Reference = Field(description="The resource: id or name (\"Court 2\").")
    description: Description = Field(description="What is wrong, in a sentence or two.")


def _status_row(ctx: Context, resource: Document) -> Document:
    rid = resource["_id"]
    tickets = ctx.scope["tickets"].find({"resource_id": rid, "status": "open"},
                                        sort=[("reported_at", 1), ("_id", 1)])
    in_use = ctx.scope["bookings"].find_one({"resource_id": rid, "status": "confirmed",
                                             "start": {"$lte": ctx.now},
                                             "end": {"$gt": ctx.now}})
    upcoming = next(ctx.scope["bookings"].find(
        {"resource_id": rid, "status": "confirmed", "start": {"$gt": ctx.now}},
        sort=[("start", 1)], limit=1), None)
    return {"id": rid, "name": resource["name"], "kind": resource["kind"],
            "status": resource.get("status", "open"), "in_use_now": in_use is not None,
            "next_booking": to_json(upcoming["start"]) if upcoming else None,
            "open_issues": [{"id": t["_id"], "description": t["description"],
                             "reported_at": to_json(t["reported_at"])} for t in tickets]}


def facility_status(ctx: Context, args: FacilityStatus) -> Result:
    """Each resource's state: open or in maintenance, in use now, open issues."""
    if args.resource is not None:
        resources = [require(ctx, "resources", args.resource, "resource")]
    else:
        resources = list(ctx.scope["resources"].find({}, sort=[("name", 1), ("_id", 1)]))
    return Result({"resources": [_status_row(ctx, r) for r in resources]})


def _check_report(ctx: Context, args: IssueReport, ticket_id: str) -> Document:
    resource = require(ctx, "resources", args.resource, "resource")
    wanted = normalise(args.description)
    for ticket in ctx.scope["tickets"].find({"resource_id": args.resource, "status": "open"}):
        if ticket["_id"] != ticket_id and normalise(ticket["description"]) == wanted:
            raise Conflict(f"description: already reported for {resource['name']} "
                           f"({ticket['_id']})")
    return resource


def preview_report(ctx: Context, args: IssueReport) -> Preview:
    """Refuse a duplicate of an open report; show the ticket."""
    resource = _check_report(ctx, args, "")
    return Preview(f"Report an issue on {resource['name']}: {args.description}", {},
                   {"resource_id": args.resource, "description": args.description,
                    "status": "open"})


def apply_report(ctx: Context, args: IssueReport, change_id: str) -> Document:
    """Open the ticket once, under an id derived from the change."""
    ticket_id = derived_id(ctx, "tkt", change_id)
    _check_report(ctx, args, ticket_id)
    doc = insert_once(ctx.scope["tickets"], {
        "_id": ticket_id, "resource_id": args.resource, "description": args.description,
        "status": "open", "reported_by": ctx.principal.user_id, "reported_at": ctx.now,
        "change_id": change_id})
    return {"ticket": record_json(doc)}


OPERATIONS: tuple[Operation, ...] = (
    Operation("facilities.status", "read", "check", FacilityStatus,
              "Whether courts, studios and rooms are open, in use or have open issues.",
              MEMBERS_UP, "facilities", {"resource": "resources"}, run=facility_status),
    Operation("facilities.report_issue", "write", "create", IssueReport,
              "Report a problem with a resource (opens a maintenance ticket).",
              MEMBERS_UP, "facilities", {"resource": "resources"},
              preview=preview_report, apply=apply_report),
)
