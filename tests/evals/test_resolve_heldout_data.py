"""The resolver's held-out request set (evals/datasets/resolve/heldout.yaml): its shape, and
that every record it names exists in the seeded demo store and fits the words around it."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from opsgraph.principal import Role

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "evals" / "datasets" / "resolve" / "heldout.yaml"

RECORD_KINDS = {"member": "members", "staff": "staff", "resource": "resources",
                "event": "events", "booking": "bookings", "invoice": "invoices"}
"""Mention kind whose value is a record id → the collection that holds it."""
KINDS = {*RECORD_KINDS, "datetime", "date", "money", "email", "phone"}
DATETIME = re.compile(r"^[+-]\d{1,2}d (?:[01]\d|2[0-3]):[0-5]\d$")
DATE = re.compile(r"^[+-]\d{1,2}d$")
MONEY = re.compile(r"^\d+\.\d{2}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]+$")
PHONE = re.compile(r"^\+44\d{10}$")  # the demo club is in the UK: E.164, +44 and ten digits


def load() -> dict[str, Any]:
    """The held-out file as YAML."""
    data: dict[str, Any] = yaml.safe_load(HELDOUT.read_text(encoding="utf-8"))
    return data


def minutes(offset: str) -> int:
    """An offset "+Nd HH:MM" or "+Nd" as minutes from the anchor."""
    day, _, clock = offset.partition(" ")
    hours, _, mins = (clock or "00:00").partition(":")
    return int(day[:-1]) * 1440 + int(hours) * 60 + int(mins)


def check_mention(case_id: str, mention: dict[str, Any]) -> None:
    """One mention: a known kind, a value or candidates (never both), a well-formed value."""
    kind = mention.get("kind")
    assert kind in KINDS, (case_id, mention)
    assert set(mention) <= {"kind", "value", "candidates", "end"}, (case_id, mention)
    assert ("value" in mention) != ("candidates" in mention), (case_id, mention)
    if "candidates" in mention:
        candidates = mention["candidates"]
        assert kind in RECORD_KINDS and len(set(candidates)) == len(candidates) >= 2, case_id
        return
    value = mention["value"]
    assert isinstance(value, str), (case_id, mention)
    pattern = {"datetime": DATETIME, "date": DATE, "money": MONEY, "email": EMAIL,
               "phone": PHONE}.get(kind)
    assert pattern is None or pattern.match(value), (case_id, mention)
    if "end" in mention:
        assert kind in ("datetime", "date") and pattern is not None, (case_id, mention)
        assert pattern.match(mention["end"]), (case_id, mention)
        assert minutes(mention["end"]) > minutes(value), (case_id, mention)


def test_the_set_is_well_formed_and_covers_every_kind() -> None:
    data = load()
    assert data["tenant"] == "demo" and set(data) == {"tenant", "cases"}
    cases = data["cases"]
    assert len(cases) >= 60
    ids = [case["id"] for case in cases]
    assert len(set(ids)) == len(ids), [i for i, n in Counter(ids).items() if n > 1]
    kinds: Counter[str] = Counter()
    for case in cases:
        assert set(case) <= {"id", "now", "role", "history", "text", "mentions"}, case["id"]
        assert DATETIME.match(case["now"]), case["id"]
        assert Role(case.get("role", "staff")), case["id"]
        assert all(isinstance(turn, str) and turn for turn in case.get("history", []))
        assert isinstance(case["text"], str) and case["text"].strip(), case["id"]
        for mention in case["mentions"]:
            check_mention(case["id"], mention)
            kinds[mention["kind"]] += 1
    assert set(kinds) == KINDS, kinds
    # the clock varies: "tomorrow" and "thurs" are asked on several weekdays and hours
    assert len({minutes(c["now"]) // 1440 % 7 for c in cases}) == 7
    assert len({c["now"].split(" ")[1][:2] for c in cases}) >= 8
    # some requests name nothing that exists, some need earlier turns
    assert sum(1 for c in cases if not c["mentions"]) >= 3
    assert sum(1 for c in cases if c.get("history")) >= 5


def test_every_record_named_exists_in_the_seeded_demo_store(demo_db) -> None:  # type: ignore[no-untyped-def]
    named: dict[str, set[str]] = {kind: set() for kind in RECORD_KINDS}
    for case in load()["cases"]:
        for mention in case["mentions"]:
            if mention["kind"] in RECORD_KINDS:
                named[mention["kind"]].update(mention.get("candidates") or [mention["value"]])
    for kind, ids in named.items():
        found = {d["_id"] for d in demo_db[RECORD_KINDS[kind]].find(
            {"tenant_id": "demo", "_id": {"$in": sorted(ids)}}, {"_id": 1})}
        assert found == ids, (kind, sorted(ids - found))


def test_bookings_and_events_fit_the_people_places_and_days_beside_them(demo_db) -> None:  # type: ignore[no-untyped-def]
    anchor = demo_db["tenants"].find_one({"_id": "demo"})["seed_anchor"].replace(tzinfo=UTC)

    def offset(at: datetime) -> int:
        return round((at.replace(tzinfo=UTC) - anchor).total_seconds() // 60)

    for case in load()["cases"]:
        values = {m["kind"]: m["value"] for m in case["mentions"] if "value" in m}
        days = [minutes(m["value"]) // 1440 for m in case["mentions"]
                if m["kind"] in ("date", "datetime") and "end" not in m]
        if "booking" in values:
            booking = demo_db["bookings"].find_one({"_id": values["booking"]})
            assert values.get("member", booking["member_id"]) == booking["member_id"], case
            assert values.get("resource", booking["resource_id"]) == booking["resource_id"]
            assert all(day == offset(booking["start"]) // 1440 for day in days), case["id"]
            if "datetime" in values:
                assert minutes(values["datetime"]) == offset(booking["start"]), case["id"]
        if "event" in values:
            event = demo_db["events"].find_one({"_id": values["event"]})
            assert all(day == offset(event["start"]) // 1440 for day in days), case["id"]
