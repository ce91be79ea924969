"""The large club, at a small scale factor: the counts it promises, realistic data, and
reads that the store serves from indexes with pages that stay bounded and in order.

Every query a read sends is captured (pymongo command monitoring) and explained by the
store itself: none may be a collection scan. No timing here; `opsgraph bench` measures.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from pymongo import MongoClient, monitoring
from pymongo.database import Database

from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.references import resolve_args
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import TenantScope
from opsgraph.store.search_keys import KEY_FIELDS, NAMED
from opsgraph.store.seed import Scale, seed

Document = dict[str, Any]
NOW = datetime(2030, 1, 9, 10, 0, tzinfo=UTC)
TOMORROW = (NOW + timedelta(days=1)).date().isoformat()
SMALL = Scale(members=300, bookings=4000, sites=2)
DOMAIN = {"members", "staff", "shifts", "resources", "bookings", "events", "registrations",
          "invoices", "knowledge"}


class Finds(monitoring.CommandListener):
    """The filters of the `find` commands sent to domain collections while recording."""

    def __init__(self) -> None:
        self.recording = False
        self.seen: list[tuple[str, Document]] = []
        self._lock = threading.Lock()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if self.recording and event.command_name == "find" and \
                event.command["find"] in DOMAIN:
            with self._lock:
                self.seen.append((event.command["find"], dict(event.command["filter"])))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        return None

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        return None


@pytest.fixture(scope="module")
def big(mongo_uri: str) -> Iterator[tuple[Database[Document], Finds]]:
    """`demo` and a large club `big` at a small scale, on a client whose finds we see."""
    finds = Finds()
    client: MongoClient[Document] = MongoClient(mongo_uri, tz_aware=True,
                                                event_listeners=[finds])
    db = client[f"scale_{uuid.uuid4().hex[:8]}"]
    seed(db, "demo", now=NOW)
    seed(db, "big", now=NOW, scale=SMALL)
    try:
        yield db, finds
    finally:
        client.drop_database(db.name)
        client.close()


def run(db: Database[Document], op_id: str, args: Document, role: Role = Role.STAFF,
        user: str = "u-1", tenant: str = "big") -> Any:
    principal = Principal(tenant, user, frozenset({role}))
    ctx = Context(TenantScope(db, tenant), principal, NOW)
    op = get_operation(op_id)
    assert op.run is not None
    return op.run(ctx, resolve_args(ctx, op, op.input.model_validate(args))).data


def test_the_large_club_has_the_counts_it_promises(
        big: tuple[Database[Document], Finds]) -> None:
    db, _ = big
    counts = seed(db, "big", now=NOW, scale=SMALL)  # again: idempotent, same counts
    assert (counts["members"], counts["bookings"]) == (300, 4000)
    assert (counts["staff"], counts["resources"], counts["events"]) == (16, 12, 24)
    assert 2 * 300 - 10 <= counts["invoices"] <= 2 * 300 + 5
    for name in ("members", "bookings", "invoices"):
        assert db[name].count_documents({"tenant_id": "big"}) == counts[name]
    members = list(db["members"].find({"tenant_id": "big"}))
    assert len({m["name"] for m in members}) > 290  # the two Tom Bakers stay ambiguous
    assert len({m["email"] for m in members}) == 300
    confirmed = list(db["bookings"].find({"tenant_id": "big", "status": "confirmed"}))
    per_member: dict[str, list[tuple[datetime, datetime]]] = {}
    for b in confirmed:
        per_member.setdefault(b["member_id"], []).append((b["start"], b["end"]))
    for spans in per_member.values():  # nobody is in two places at once
        spans.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(spans))


def test_every_named_record_carries_its_search_keys(
        big: tuple[Database[Document], Finds]) -> None:
    db, _ = big
    for collection in NAMED:
        missing = db[collection].count_documents({"tenant_id": "big",
                                                  "name_key": {"$exists": False}})
        assert missing == 0, collection
    jane = db["members"].find_one({"tenant_id": "big", "name": "Jane Smith"})
    assert jane is not None and set(KEY_FIELDS) <= set(jane)
    shown = run(db, "members.get", {"member": "Jane Smith"})
    assert not set(shown) & set(KEY_FIELDS)  # bookkeeping a reader never sees


READS: list[tuple[str, Document, Role, str]] = [
    ("members.search", {"query": "Jane Smith"}, Role.STAFF, "u-1"),
    ("members.search", {"query": "jane smth"}, Role.STAFF, "u-1"),
    ("members.search", {"query": "900233"}, Role.STAFF, "u-1"),
    ("members.get", {"member": "emily_chen"}, Role.STAFF, "u-1"),
    ("members.get", {"member": "smithson"}, Role.STAFF, "u-1"),
    ("members.get", {"member": "jane.smith@example.com"}, Role.MEMBER,
     "jane.smith@example.com"),
    ("bookings.list", {}, Role.STAFF, "u-1"),
    ("bookings.list", {"date": TOMORROW}, Role.STAFF, "u-1"),
    ("bookings.list", {"member": "Jane Smith"}, Role.STAFF, "u-1"),
    ("bookings.list", {}, Role.MEMBER, "mem_big_001"),
    ("bookings.availability", {"resource": "Court 1", "date": TOMORROW}, Role.VISITOR, ""),
    ("invoices.list", {}, Role.STAFF, "u-1"),
    ("invoices.list", {"status": "overdue"}, Role.STAFF, "u-1"),
    ("invoices.list", {"member": "Jane Smith", "status": "paid"}, Role.STAFF, "u-1"),
    ("invoices.get", {"invoice": "inv-1042"}, Role.STAFF, "u-1"),
    ("events.list", {}, Role.VISITOR, ""),
    ("events.waitlist", {"event": "First Aid Workshop"}, Role.STAFF, "u-1"),
    ("schedules.shifts", {}, Role.STAFF, "u-1"),
    ("schedules.shifts", {"staff": "Daniel Kim"}, Role.STAFF, "u-1"),
]


def _stages(plan: Any) -> Iterator[str]:
    if isinstance(plan, dict):
        if "stage" in plan:
            yield str(plan["stage"])
        for value in plan.values():
            yield from _stages(value)
    elif isinstance(plan, list):
        for value in plan:
            yield from _stages(value)


@pytest.mark.parametrize(("op_id", "args", "role", "user"), READS)
def test_every_query_of_a_read_is_served_by_an_index(
        big: tuple[Database[Document], Finds], op_id: str, args: Document, role: Role,
        user: str) -> None:
    db, finds = big
    finds.seen.clear()
    finds.recording = True
    try:
        run(db, op_id, args, role, user)
    finally:
        finds.recording = False
    assert finds.seen, "the read sent no find"
    for collection, flt in finds.seen:
        plan = db.command("explain", {"find": collection, "filter": flt})
        stages = set(_stages(plan["queryPlanner"]["winningPlan"]))
        assert "IXSCAN" in stages and "COLLSCAN" not in stages, (collection, flt, stages)


def test_a_members_search_is_one_query_whatever_the_query_names(
        big: tuple[Database[Document], Finds]) -> None:
    db, finds = big
    for query in ("Jane Smith", "jane smth", "jane.smith@example.com", "07700 900233"):
        finds.seen.clear()
        finds.recording = True
        try:
            found = run(db, "members.search", {"query": query})
        finally:
            finds.recording = False
        assert [collection for collection, _ in finds.seen] == ["members"], query
        assert found["matches"], query


def test_a_name_that_is_not_there_is_suggested_by_sound(
        big: tuple[Database[Document], Finds]) -> None:
    from opsgraph.errors import NotFound

    with pytest.raises(NotFound) as err:
        run(big[0], "members.get", {"member": "Jane Smtih"})
    assert "mem_big_001" in [c["id"] for c in err.value.detail["candidates"]]


def _all(db: Database[Document], collection: str, flt: Document) -> list[Document]:
    return list(db[collection].find({"tenant_id": "big", **flt}))


def test_pages_are_bounded_and_the_first_of_their_range(
        big: tuple[Database[Document], Finds]) -> None:
    db, _ = big
    start = datetime.combine(NOW.date(), datetime.min.time(), tzinfo=UTC)
    listed = run(db, "bookings.list", {})["bookings"]
    every = sorted(_all(db, "bookings", {"status": "confirmed", "start": {
        "$gte": start, "$lt": start + timedelta(days=15)}}), key=lambda b: (b["start"], b["_id"]))
    assert len(every) > 100
    assert [b["id"] for b in listed] == [b["_id"] for b in every[:100]]

    invoices = run(db, "invoices.list", {"status": "open"})["invoices"]
    every = sorted(_all(db, "invoices", {"status": "open"}), key=lambda i: -i["seq"])
    assert len(every) > 100
    assert [i["id"] for i in invoices] == [i["_id"] for i in every[:100]]

    shifts = run(db, "schedules.shifts", {})["shifts"]
    assert len(shifts) <= 100
    assert shifts == sorted(shifts, key=lambda s: (s["start"], s["id"]))
    events = run(db, "events.list", {"from": "2029-01-01", "to": "2031-01-01"})["events"]
    assert len(events) == 24 and events == sorted(events, key=lambda e: (e["start"], e["id"]))


def test_an_invoice_numbered_after_the_recorded_highest_still_comes_first(
        big: tuple[Database[Document], Finds]) -> None:
    db, _ = big
    top = db["tenants"].find_one({"_id": "big"})["invoice_seq"]  # type: ignore[index]
    newest = {**db["invoices"].find_one({"tenant_id": "big", "seq": top}),  # type: ignore[dict-item]
              "_id": "inv_big_newer", "seq": top + 1, "number": f"INV-{top + 1}"}
    db["invoices"].insert_one(newest)
    try:
        assert run(db, "invoices.list", {})["invoices"][0]["id"] == "inv_big_newer"
    finally:
        db["invoices"].delete_one({"_id": "inv_big_newer"})


def test_the_large_scale_needs_a_tenant_of_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    from opsgraph.cli import main

    assert main(["seed", "--scale", "large"]) == 2
    assert "--tenant" in capsys.readouterr().err
