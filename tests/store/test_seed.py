"""The demo data set: deterministic, idempotent, realistic, and two isolated tenants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pymongo.database import Database

from opsgraph.store.seed import DATA_DIR, SEEDED, anchor_monday, seed, seed_all

Document = dict[str, Any]
NOW = datetime(2030, 1, 9, 10, 0, tzinfo=UTC)


def _all(db: Database[Document]) -> dict[str, list[Document]]:
    return {name: list(db[name].find({}, sort=[("_id", 1)])) for name in (*SEEDED, "tenants")}


def test_seeding_twice_changes_nothing(db: Database[Document]) -> None:
    first = seed_all(db, now=NOW)
    state = _all(db)
    # A week later: the stored anchor is reused, so nothing moves.
    assert seed_all(db, now=NOW + timedelta(days=7)) == first
    assert _all(db) == state


def _phone(db: Database[Document], member_id: str) -> Any:
    doc = db["members"].find_one({"_id": member_id})
    return doc["phone"] if doc else None


def test_a_reseed_keeps_changes_and_reset_restores_the_same_data(
        db: Database[Document]) -> None:
    seed(db, "demo", now=NOW)
    pristine = _all(db)
    db["members"].update_one({"_id": "mem_demo_001"}, {"$set": {"phone": "changed"}})
    db["outbox"].insert_one({"_id": "out_x", "tenant_id": "demo"})
    seed(db, "demo", now=NOW)
    assert _phone(db, "mem_demo_001") == "changed"
    seed(db, "demo", now=NOW, reset=True)
    assert _all(db) == pristine  # deterministic: the same ids, dates and values
    assert db["outbox"].count_documents({}) == 0


def test_the_demo_club_feels_real(db: Database[Document]) -> None:
    counts = seed(db, "demo", now=NOW)
    assert counts["tenant"] == "demo" and counts["plan"] == "pro"
    assert counts["members"] >= 60 and counts["staff"] == 8
    assert counts["resources"] == 6 and counts["events"] == 12
    tenant = db["tenants"].find_one({"_id": "demo"})
    assert tenant is not None
    assert (tenant["capability_mode"], tenant["approval_ttl_s"]) == ("observe", 3600)
    # Exactly one Jane Smith (the contract's example script names her); two Tom Bakers keep
    # name disambiguation exercised.
    assert [j["_id"] for j in db["members"].find({"name": "Jane Smith"})] == ["mem_demo_001"]
    toms = list(db["members"].find({"name": "Tom Baker"}))
    assert len({t["email"] for t in toms}) == 2
    assert db["shifts"].count_documents({"staff_id": None}) > 0
    days = {s["date"] for s in db["shifts"].find()}
    assert len(days) == 14
    assert db["registrations"].count_documents({"status": "waitlisted"}) > 0
    statuses = set(db["invoices"].distinct("status"))
    assert {"paid", "open", "refunded"} <= statuses
    overdue = db["invoices"].count_documents({"status": "open",
                                              "due": {"$lt": NOW.date().isoformat()}})
    assert overdue > 0
    hostile = db["inbox"].find_one({"body": {"$regex": "ignore previous instructions",
                                             "$options": "i"}})
    assert hostile is not None
    files = sorted((DATA_DIR / "knowledge").glob("*.md"))
    assert counts["knowledge"] == len(files) >= 8


def test_bookings_sit_around_now(db: Database[Document]) -> None:
    now = datetime.now(UTC)
    seed(db, "demo")
    anchor = anchor_monday(now)
    assert anchor.weekday() == 0 and anchor <= now < anchor + timedelta(days=7)
    ahead = db["bookings"].count_documents({"start": {"$gt": now,
                                                      "$lt": now + timedelta(days=7)}})
    behind = db["bookings"].count_documents({"start": {"$lt": now}})
    assert ahead > 0 and behind > 0
    inbox = db["inbox"].find({}, {"received_at": 1})
    assert all(m["received_at"] <= now for m in inbox)


def test_acme_is_smaller_and_separate(db: Database[Document]) -> None:
    out = seed_all(db, now=NOW)
    assert out["acme"]["plan"] == "basic"
    assert 0 < out["acme"]["members"] < out["demo"]["members"]
    for name in SEEDED:
        for doc in db[name].find({"tenant_id": "acme"}):
            assert "demo" not in str(doc["_id"]), (name, doc["_id"])
    acme_files = sorted(Path(DATA_DIR / "acme" / "knowledge").glob("*.md"))
    assert out["acme"]["knowledge"] == len(acme_files)
