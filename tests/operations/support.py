"""Shared helpers of the operations tests: a fixed clock, principals, calls, snapshots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.database import Database

from opsgraph.operations.base import Context
from opsgraph.operations.direct import call_operation
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.scope import TenantScope
from opsgraph.store.seed import SEEDED

Document = dict[str, Any]

# A Wednesday; the seed anchors its dates on Monday 7 January 2030.
NOW = datetime(2030, 1, 9, 10, 0, tzinfo=UTC)
TOMORROW = (NOW + timedelta(days=1)).date()


def person(role: Role | str, user: str = "u-1", tenant: str = "demo",
           channel: Channel = Channel.DASHBOARD) -> Principal:
    """A principal of `tenant` with one role."""
    return Principal(tenant, user, frozenset({Role(role)}), channel)


def call(db: Database[Document], who: Principal | Role | str, op_id: str,
         args: Any) -> Document:
    """`call_operation` at the fixed clock."""
    principal = who if isinstance(who, Principal) else person(who)
    return call_operation(principal, op_id, args, db=db, now=NOW)


def context(db: Database[Document], who: Principal | Role | str = Role.ADMIN,
            tenant: str = "demo") -> Context:
    """A handler context at the fixed clock."""
    principal = who if isinstance(who, Principal) else person(who, tenant=tenant)
    return Context(TenantScope(db, principal.tenant_id), principal, NOW)


def snapshot(db: Database[Document]) -> dict[str, list[Document]]:
    """Every domain document, to prove a preview changed nothing."""
    return {name: list(db[name].find({}, sort=[("_id", 1)]))
            for name in (*SEEDED, "outbox", "audit", "tenants")}


def free_slot(db: Database[Document], resource_id: str) -> tuple[datetime, datetime]:
    """The first free hour of `resource_id` tomorrow, from the availability operation."""
    out = call(db, Role.STAFF, "bookings.availability",
               {"resource": resource_id, "date": TOMORROW.isoformat()})
    slot = out["result"]["free"][0]
    return datetime.fromisoformat(slot["start"]), datetime.fromisoformat(slot["end"])


def idle_member(db: Database[Document], start: datetime, end: datetime) -> str:
    """An active demo member with no booking overlapping [start, end)."""
    busy = {b["member_id"] for b in db["bookings"].find(
        {"tenant_id": "demo", "status": "confirmed", "start": {"$lt": end},
         "end": {"$gt": start}})}
    for m in db["members"].find({"tenant_id": "demo", "status": "active"}, sort=[("_id", 1)]):
        if m["_id"] not in busy:
            return str(m["_id"])
    raise AssertionError("no idle member")


def open_shift(db: Database[Document]) -> tuple[str, str]:
    """(shift id, staff id): an open future shift and someone trained and free for it."""
    for shift in db["shifts"].find({"tenant_id": "demo", "staff_id": None,
                                    "start": {"$gt": NOW}}, sort=[("start", 1)]):
        for staff in db["staff"].find({"tenant_id": "demo", "skills": shift["role"]},
                                      sort=[("_id", 1)]):
            clash = db["shifts"].find_one({"tenant_id": "demo", "staff_id": staff["_id"],
                                           "start": {"$lt": shift["end"]},
                                           "end": {"$gt": shift["start"]}})
            if clash is None:
                return str(shift["_id"]), str(staff["_id"])
    raise AssertionError("no open shift")


def preview(db: Database[Document], op_id: str, args: Document,
            who: Principal | Role | str = Role.ADMIN) -> Any:
    """Resolve, authorize and preview a write on a read-only scope (it cannot write)."""
    from opsgraph.operations.catalogue import get_operation
    from opsgraph.operations.references import resolve_args

    op = get_operation(op_id)
    full = context(db, who)
    ctx = Context(full.scope.reader(), full.principal, full.now)
    parsed = resolve_args(ctx, op, op.input.model_validate(args))
    if op.authorize is not None:
        op.authorize(ctx, parsed)
    assert op.preview is not None
    return op.preview(ctx, parsed)
