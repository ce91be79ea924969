"""The nightly waitlist share-out on the real embedded store: who gets a freed place, the
audit row of each promotion, notifications queued as pending changes (never sent), the
same result from the same data, nothing more the second time; run from the CLI and from
a schedule's event."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.api.lambda_events import handle_event
from opsgraph.cli import main
from opsgraph.jobs.waitlist import ACTOR, JOB, VIA, share_out
from opsgraph.store.scope import Document, TenantScope

NOW = datetime(2030, 5, 1, 3, 30, tzinfo=UTC)
PEOPLE = {"ann": "Ann Archer", "bob": "Bob Baker", "cat": "Cat Cole", "dan": "Dan Dale",
          "eve": "Eve Evans", "fay": "Fay Frost"}


@pytest.fixture
def club(db: Database[Document]) -> Database[Document]:
    """Two tenants holding the same club (every id ends with the tenant's name): an upcoming
    event of 3 places, three registered (one has since cancelled), three waitlisted (ann,
    then bob, then cat); bob was left on the waitlist of last week's event, cat got in."""
    from opsgraph.bootstrap import prepare_store

    prepare_store(db)
    for tenant in ("club", "copy"):
        fill(db, tenant)
    return db


def fill(db: Database[Document], tenant: str) -> None:
    db["tenants"].insert_one({"_id": tenant, "name": tenant, "plan": "pro"})
    scope = TenantScope(db, tenant)
    scope["members"].insert_many([
        {"_id": f"mem_{key}{tenant}", "name": name, "email": f"{key}@example.com",
         "status": "active"}
        for key, name in PEOPLE.items()])
    scope["events"].insert_many([
        {"_id": f"evt_last{tenant}", "title": "Last week's social",
         "start": NOW - timedelta(days=7),
         "end": NOW - timedelta(days=7, hours=-2), "capacity": 1, "status": "scheduled"},
        {"_id": f"evt_next{tenant}", "title": "Summer social",
         "start": NOW + timedelta(days=3),
         "end": NOW + timedelta(days=3, hours=2), "capacity": 3, "status": "scheduled"},
        {"_id": f"evt_full{tenant}", "title": "Full quiz",
         "start": NOW + timedelta(days=4),
         "end": NOW + timedelta(days=4, hours=2), "capacity": 1, "status": "scheduled"}])
    t0 = NOW - timedelta(days=20)

    def reg(event: str, member: str, status: str, minutes: int) -> Document:
        return {"_id": f"reg_{event}_{member}{tenant}", "event_id": event + tenant,
                "member_id": f"mem_{member}{tenant}",
                "status": status, "at": t0 + timedelta(minutes=minutes)}

    scope["registrations"].insert_many([
        reg("evt_last", "cat", "registered", 1), reg("evt_last", "bob", "waitlisted", 2),
        reg("evt_next", "dan", "cancelled", 1), reg("evt_next", "eve", "registered", 2),
        reg("evt_next", "fay", "registered", 3),
        reg("evt_next", "ann", "waitlisted", 4), reg("evt_next", "bob", "waitlisted", 5),
        reg("evt_next", "cat", "waitlisted", 6),
        reg("evt_full", "fay", "registered", 1), reg("evt_full", "ann", "waitlisted", 2)])


def statuses(db: Database[Document], tenant: str) -> dict[str, str]:
    """Registration (its id without the tenant's suffix) → status."""
    return {r["_id"].removesuffix(tenant): r["status"]
            for r in db["registrations"].find({"tenant_id": tenant})}


def outcome(db: Database[Document], tenant: str) -> dict[str, Any]:
    """What a run leaves, without the ids that are new on every run (change ids)."""
    audit = [{k: row[k] for k in ("from", "to", "actor", "operation", "detail")}
             for row in db["audit"].find({"tenant_id": tenant, "detail.via": VIA},
                                         sort=[("at", 1), ("_id", 1)])]
    notices = [{k: c[k] for k in ("operation", "args", "status", "thread_id", "summary")}
               for c in db["pending_changes"].find({"tenant_id": tenant},
                                                   sort=[("thread_id", 1)])]
    found = {"registrations": statuses(db, tenant), "audit": audit, "notices": notices}
    return dict(json.loads(json.dumps(found, default=str).replace(tenant, "")))


def test_freed_places_go_to_who_missed_out_last_time_then_in_waitlist_order(
        club: Database[Document]) -> None:
    report = share_out(TenantScope(club, "club"), NOW)

    assert report == {"events": 1, "promoted": 1, "notices": 1}
    after = statuses(club, "club")
    # one place came free: bob missed out last week, so it is his although ann queued first
    assert after["reg_evt_next_bob"] == "registered"
    assert after["reg_evt_next_ann"] == after["reg_evt_next_cat"] == "waitlisted"
    assert after["reg_evt_full_ann"] == "waitlisted"  # a full event gives nothing
    rows = list(club["audit"].find({"tenant_id": "club", "detail.via": VIA},
                                   sort=[("at", 1), ("_id", 1)]))
    assert [(r["detail"]["member_id"], r["detail"]["waitlist_position"],
             r["detail"]["missed_out_last_time"]) for r in rows] == [
        ("mem_bobclub", 2, True)]
    assert {(r["from"], r["to"], r["actor"], r["operation"]) for r in rows} == {
        (None, "applied", ACTOR, "events.register")}
    notices = list(club["pending_changes"].find({"tenant_id": "club"}))
    assert [n["args"]["to"] for n in notices] == ["bob@example.com"]
    assert {(n["operation"], n["status"]) for n in notices} == {
        ("communications.send_email", "pending")}
    assert all("Summer social" in n["args"]["body"] for n in notices)
    assert club["outbox"].count_documents({}) == 0  # queued for review, never sent
    assert statuses(club, "copy")["reg_evt_next_bob"] == "waitlisted"  # one tenant only


def test_the_same_data_gives_the_same_result_and_a_second_run_changes_nothing(
        club: Database[Document]) -> None:
    first = share_out(TenantScope(club, "club"), NOW)
    second = share_out(TenantScope(club, "copy"), NOW)
    assert first == second
    assert outcome(club, "club") == outcome(club, "copy")

    before = outcome(club, "club")
    again = share_out(TenantScope(club, "club"), NOW + timedelta(minutes=5))
    assert again == {"events": 0, "promoted": 0, "notices": 0}
    assert outcome(club, "club") == before


def test_a_promotion_left_without_its_notice_gets_it_on_the_next_run(
        club: Database[Document]) -> None:
    scope = TenantScope(club, "club")
    share_out(scope, NOW)
    # as if the run had stopped between bob's promotion and his notice
    club["pending_changes"].delete_many({"tenant_id": "club", "args.to": "bob@example.com"})
    scope["registrations"].update_one({"_id": "reg_evt_next_bobclub"},
                                      {"$unset": {"notice_queued": ""}})
    assert share_out(scope, NOW) == {"events": 0, "promoted": 0, "notices": 1}
    assert club["pending_changes"].count_documents(
        {"tenant_id": "club", "args.to": "bob@example.com"}) == 1
    assert share_out(scope, NOW)["notices"] == 0


def test_the_cli_runs_it_for_one_tenant_or_every_tenant(club: Database[Document],
                                                         capsys: pytest.CaptureFixture[str],
                                                         ) -> None:
    club["events"].update_many({}, {"$set": {"start": datetime.now(UTC) + timedelta(days=3)}})
    club["events"].update_one({"_id": "evt_lastclub"},
                              {"$set": {"start": datetime.now(UTC) - timedelta(days=7)}})
    assert main(["jobs", "run", "share_out_waitlists", "--tenant", "club", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"job": JOB, "tenants": {"club": {"events": 1, "promoted": 1,
                                                       "notices": 1}}}
    assert statuses(club, "copy")["reg_evt_next_ann"] == "waitlisted"

    assert main(["jobs", "run", "share_out_waitlists", "--json"]) == 0  # the contract's name
    report = json.loads(capsys.readouterr().out)
    assert report["tenants"]["club"]["promoted"] == 0
    assert report["tenants"]["copy"]["promoted"] == 1
    # the copy's last event is not over yet: nobody missed out, ann's turn by order
    assert statuses(club, "copy")["reg_evt_next_ann"] == "registered"


def test_the_cli_names_what_is_wrong(club: Database[Document],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "run", "share_out_everything"]) == 2
    assert "unknown job 'share_out_everything'" in capsys.readouterr().err
    assert main(["jobs", "run", "share_out_waitlists", "--tenant", "nobody"]) == 2
    assert "tenant 'nobody' not found" in capsys.readouterr().err
    assert main(["jobs", "run", "expire_approvals", "--tenant", "club"]) == 2
    assert "every tenant" in capsys.readouterr().err


def test_a_schedule_event_runs_it_for_every_tenant(club: Database[Document]) -> None:
    club["events"].update_many({"_id": {"$nin": ["evt_lastclub", "evt_lastcopy"]}},
                               {"$set": {"start": datetime.now(UTC) + timedelta(days=3)}})
    reply = handle_event({"job": "share_out_waitlists"})
    assert reply["ok"] is True and reply["job"] == JOB
    assert {t: r["promoted"] for t, r in reply["tenants"].items()} == {"club": 1, "copy": 1}
