"""Reports for managers (enterprise plan): bookings, revenue and event attendance.

Each report covers [from, to] (default: the 30 days before and after today) and names its
window in the result, so a reader knows what the numbers cover.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from datetime import timedelta
from decimal import Decimal

from pydantic import Field

from opsgraph.errors import BadInput
from opsgraph.operations.access import MANAGERS
from opsgraph.operations.base import Context, Day, Operation, OpInput, Result
from opsgraph.operations.events import headcounts
from opsgraph.operations.fields import money_json, money_of
from opsgraph.operations.invoices import effective_status
from opsgraph.operations.records import Document, as_utc, day_bounds, to_json

_DEFAULT_SPAN = timedelta(days=30)
ZERO = Decimal("0.00")


class ReportWindow(OpInput):
    from_: Day | None = Field(None, alias="from",
                                  description="First day, YYYY-MM-DD; default: 30 days ago.")
    to: Day | None = Field(None, description="Last day, YYYY-MM-DD; default: 30 days on.")


def window(ctx: Context, args: ReportWindow) -> tuple[dt.date, dt.date]:
    """The [first, last] days a report covers."""
    today = ctx.now.date()
    first = args.from_ or today - _DEFAULT_SPAN
    last = args.to or today + _DEFAULT_SPAN
    if last < first:
        raise BadInput("to: must not be before from")
    return first, last


def bookings_report(ctx: Context, args: ReportWindow) -> Result:
    """Bookings and cancellations per resource and weekday, with hours booked."""
    first, last = window(ctx, args)
    start, end = day_bounds(first)[0], day_bounds(last)[1]
    docs = list(ctx.scope["bookings"].find({"start": {"$gte": start, "$lt": end}}))
    names = {r["_id"]: r["name"] for r in ctx.scope["resources"].find({})}
    per_resource: dict[str, Counter[str]] = defaultdict(Counter)
    hours: dict[str, float] = defaultdict(float)
    weekdays: Counter[str] = Counter()
    for b in docs:
        per_resource[b["resource_id"]][b["status"]] += 1
        if b["status"] == "confirmed":
            length = as_utc(b["end"]) - as_utc(b["start"])
            hours[b["resource_id"]] += length.total_seconds() / 3600
            weekdays[as_utc(b["start"]).strftime("%A")] += 1
    rows: list[Document] = [{"resource": {"id": rid, "name": names.get(rid)},
             "confirmed": c["confirmed"], "cancelled": c["cancelled"],
             "hours_booked": round(hours[rid], 2)} for rid, c in sorted(per_resource.items())]
    confirmed = sum(r["confirmed"] for r in rows)
    return Result({"from": first.isoformat(), "to": last.isoformat(), "confirmed": confirmed,
                   "cancelled": sum(r["cancelled"] for r in rows), "by_resource": rows,
                   "by_weekday": dict(sorted(weekdays.items()))})


def revenue_report(ctx: Context, args: ReportWindow) -> Result:
    """Invoiced, collected, refunded and outstanding amounts of invoices issued in the window."""
    first, last = window(ctx, args)
    today = ctx.now.date().isoformat()
    docs = list(ctx.scope["invoices"].find(
        {"issued": {"$gte": first.isoformat(),
                    "$lt": (last + timedelta(days=1)).isoformat()}}))
    by_month: dict[str, dict[str, Decimal]] = defaultdict(
        lambda: {"invoiced": ZERO, "collected": ZERO, "refunded": ZERO})
    for d in docs:
        month = by_month[d["issued"][:7]]
        month["invoiced"] += money_of(d["total"])
        month["collected"] += money_of(d["paid"])
        month["refunded"] += money_of(d["refunded"])
    overdue = [d for d in docs if effective_status(d, today) == "overdue"]
    totals = {k: sum((m[k] for m in by_month.values()), ZERO)
              for k in ("invoiced", "collected", "refunded")}

    def owed(rows: list[Document]) -> Decimal:
        return sum((money_of(d["total"]) - money_of(d["paid"]) for d in rows), ZERO)

    return Result({
        "from": first.isoformat(), "to": last.isoformat(), "invoices": len(docs),
        **{k: money_json(v) for k, v in totals.items()},
        "net": money_json(totals["collected"] - totals["refunded"]),
        "outstanding": money_json(owed([d for d in docs if d["status"] == "open"])),
        "overdue": {"count": len(overdue), "amount": money_json(owed(overdue))},
        "by_month": {m: {k: money_json(v) for k, v in c.items()}
                     for m, c in sorted(by_month.items())},
    })


def attendance_report(ctx: Context, args: ReportWindow) -> Result:
    """Per event: capacity, registrations, waitlist and fill rate."""
    first, last = window(ctx, args)
    start, end = day_bounds(first)[0], day_bounds(last)[1]
    events = list(ctx.scope["events"].find({"start": {"$gte": start, "$lt": end}},
                                           sort=[("start", 1), ("_id", 1)]))
    counts = headcounts(ctx, [e["_id"] for e in events])
    rows: list[Document] = []
    for e in events:
        registered = counts[(e["_id"], "registered")]
        rows.append({"id": e["_id"], "title": e["title"], "start": to_json(e["start"]),
                     "capacity": e["capacity"], "registered": registered,
                     "waitlisted": counts[(e["_id"], "waitlisted")],
                     "fill_rate": round(registered / e["capacity"], 3)})
    capacity = sum(r["capacity"] for r in rows)
    registered = sum(r["registered"] for r in rows)
    return Result({"from": first.isoformat(), "to": last.isoformat(), "events": rows,
                   "capacity": capacity, "registered": registered,
                   "waitlisted": sum(r["waitlisted"] for r in rows),
                   "fill_rate": round(registered / capacity, 3) if capacity else None,
                   "oversubscribed": [r["title"] for r in rows if r["waitlisted"]]})


class RevenueWindow(ReportWindow):
    """Window of the revenue report (invoices by issue date)."""


class AttendanceWindow(ReportWindow):
    """Window of the attendance report (events by start)."""


OPERATIONS: tuple[Operation, ...] = (
    Operation("reports.bookings", "read", "report", ReportWindow,
              "Bookings report: confirmed and cancelled per resource and weekday, hours booked.",
              MANAGERS, "reports", run=bookings_report),
    Operation("reports.revenue", "read", "report", RevenueWindow,
              "Revenue report: invoiced, collected, refunded, outstanding and overdue.",
              MANAGERS, "reports", run=revenue_report),
    Operation("reports.attendance", "read", "report", AttendanceWindow,
              "Attendance report: event registrations against capacity, waitlists.",
              MANAGERS, "reports", run=attendance_report),
)
