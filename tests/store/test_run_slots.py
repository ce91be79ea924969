"""Runs in flight counted in the store: a slot per run (a lease per user slot and tenant
slot), never more holders than slots however many take at once, given back at the end,
renewed while held, and a dead holder's slots free once their lease lapses."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from opsgraph.errors import TooManyRequests
from opsgraph.settings import get_settings
from opsgraph.store.run_slots import RUN_SLOTS_COLLECTION, RunSlot, RunSlots, take_slot
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import person


@pytest.fixture
def limits(demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPSGRAPH_USER_RUNS", "2")
    monkeypatch.setenv("OPSGRAPH_TENANT_RUNS", "3")
    monkeypatch.setenv("OPSGRAPH_RUN_SLOT_LEASE_S", "1")
    get_settings.cache_clear()
    return demo_db


def live(db: Any, tenant: str = "demo") -> list[str]:
    """The slots held by a live lease, as the store has them."""
    return sorted(d["slot"] for d in db[RUN_SLOTS_COLLECTION].find(
        {"tenant_id": tenant, "until": {"$gte": datetime.now(UTC)}}))


def test_a_user_and_a_tenant_hold_no_more_runs_than_their_slots(limits: Any) -> None:
    slots = RunSlots()
    ana, ben, cal = person(user="ana"), person(user="ben"), person(user="cal")
    slots.take(ana)
    slots.take(ana)
    with pytest.raises(TooManyRequests, match="you have 2 runs in flight") as refused:
        slots.take(ana)
    assert refused.value.retry_after_s > 0
    slots.take(ben)  # the tenant's third
    with pytest.raises(TooManyRequests, match="tenant 'demo' has 3 runs in flight"):
        slots.take(cal)
    # the refused take left nothing behind: cal holds no user slot
    assert [s for s in live(limits) if s.startswith("user:cal:")] == []
    slots.take(person(user="ana", tenant="acme"))  # another tenant counts apart
    slots.give_back(ana)
    slots.take(cal)
    assert len([s for s in live(limits) if s.startswith("tenant:")]) == 3
    for who in (ana, ben, cal, person(user="ana", tenant="acme")):
        slots.give_back(who)
    assert live(limits) == live(limits, "acme") == []


def test_concurrent_takers_never_exceed_the_limit(limits: Any) -> None:
    ana = person(user="ana")
    won: list[RunSlot] = []
    refused: list[TooManyRequests] = []
    start = threading.Barrier(12)

    def take() -> None:
        start.wait()
        try:
            won.append(take_slot(ana))
        except TooManyRequests as exc:
            refused.append(exc)

    takers = [threading.Thread(target=take) for _ in range(12)]
    for t in takers:
        t.start()
    for t in takers:
        t.join(30)
    assert len(won) == 2 and len(refused) == 10
    assert [s for s in live(limits) if s.startswith("user:ana:")] == ["user:ana:0",
                                                                     "user:ana:1"]
    for slot in won:
        slot.release()


def test_held_slots_are_renewed_and_given_back(limits: Any) -> None:
    slots = RunSlots()
    ana = person(user="ana")
    slots.take(ana)
    time.sleep(1.6)  # longer than the 1 s lease: only renewal keeps it
    assert len(live(limits)) == 2  # ana's user slot and a tenant slot
    slots.give_back(ana)
    assert limits[RUN_SLOTS_COLLECTION].count_documents({"tenant_id": "demo"}) == 0


def test_a_dead_holders_slots_free_once_their_lease_lapses(limits: Any) -> None:
    scope = TenantScope(limits, "demo")
    # a process that died holding both of ana's slots: nobody renews them
    for k in (0, 1):
        scope[RUN_SLOTS_COLLECTION].insert_one({
            "slot": f"user:ana:{k}", "owner": "dead-process", "user_id": "ana",
            "until": datetime.now(UTC) + timedelta(seconds=60)})
    with pytest.raises(TooManyRequests, match="you have 2 runs in flight"):
        take_slot(person(user="ana"))
    # their lease lapses (set in the past rather than slept through: under load a
    # half-second lease had lapsed before the refusal was even asked for)
    scope[RUN_SLOTS_COLLECTION].update_many(
        {"owner": "dead-process"}, {"$set": {"until": datetime.now(UTC) - timedelta(seconds=1)}})
    slot = take_slot(person(user="ana"))
    assert any(d["owner"] != "dead-process" for d in scope[RUN_SLOTS_COLLECTION].find(
        {"slot": {"$in": ["user:ana:0", "user:ana:1"]}}))
    slot.release()
