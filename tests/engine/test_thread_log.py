"""The thread log on the real embedded store: numbers 1..n with no gap or repeat however
many writers race, client-safe storage, the summary's latest-run status, and names."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from opsgraph.engine.thread_log import (
    ThreadLog,
    events_after,
    run_active,
    settle_lapsed,
    summary,
)
from opsgraph.principal import Principal, Role
from opsgraph.store.people import display_name, display_names
from opsgraph.store.scope import TenantScope

STAFF = Principal("demo", "lee", frozenset({Role.STAFF}))


def test_racing_writers_number_the_events_one_to_n(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    writers, each = 4, 15
    start = threading.Barrier(writers)

    def write(n: int) -> None:
        log = ThreadLog(scope, "th-race")  # each its own writer, as two runs would be
        start.wait()
        for i in range(each):
            log.append(f"run_{n}", "token", {"text": f"{n}.{i}"})

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = events_after(scope, "th-race")
    assert [int(e.id) for _, e in stored] == list(range(1, writers * each + 1))
    for n in range(writers):  # each writer's events in the order it wrote them
        mine = [e.data["text"] for run, e in stored if run == f"run_{n}"]
        assert mine == [f"{n}.{i}" for i in range(each)]
    assert [int(e.id) for _, e in events_after(scope, "th-race", after=57)] == [58, 59, 60]


def test_racing_batches_number_the_events_one_to_n_in_each_writers_order(
        demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    writers, batches, size = 3, 6, 3
    start = threading.Barrier(writers)

    def write(n: int) -> None:
        log = ThreadLog(scope, "th-batches")
        start.wait()
        for b in range(batches):
            sent = log.append_many(f"run_{n}", [("task_started", {"text": f"{n}.{b}.{i}"})
                                                for i in range(size)])
            assert [e.data["text"] for e in sent] == [f"{n}.{b}.{i}" for i in range(size)]

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = events_after(scope, "th-batches")
    assert [int(e.id) for _, e in stored] == list(range(1, writers * batches * size + 1))
    for n in range(writers):
        mine = [e.data["text"] for run, e in stored if run == f"run_{n}"]
        assert mine == [f"{n}.{b}.{i}" for b in range(batches) for i in range(size)]


def test_a_new_threads_log_starts_at_one_and_stores_client_safe_batches(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    log = ThreadLog(scope, "th-new-batch")
    log.expect_empty()
    sent = log.append_many("run_n", [
        ("plan", {"tasks": []}), ("error", {"code": "internal", "message": "0xff broke"})])
    assert [e.id for e in sent] == ["1", "2"] and "0xff" not in sent[1].data["message"]
    assert [e.data for _, e in events_after(scope, "th-new-batch")] == [e.data for e in sent]


def test_an_internal_error_is_stored_without_its_words(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    event = ThreadLog(scope, "th-fault").append(
        "run_x", "error", {"code": "internal", "message": "codec can't decode byte 0xff"})
    assert "0xff" not in event.data["message"] and "run_x" in event.data["message"]
    doc = demo_db["thread_events"].find_one({"thread_id": "th-fault"})
    assert doc["data"] == event.data and doc["tenant_id"] == "demo"
    kept = ThreadLog(scope, "th-fault").append("run_x", "error",
                                               {"code": "bad_input", "message": "member: ?"})
    assert kept.data == {"code": "bad_input", "message": "member: ?"} and kept.id == "2"
    assert json.loads(kept.to_json_line()) == {"id": "2", "event": "error", "data": kept.data}


def test_the_summary_follows_the_latest_run_only(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    log = ThreadLog(scope, "th-sum")
    log.open("run_1", STAFF, "  Book   court 1\n" + "x" * 200)
    first = summary(scope, "th-sum")
    assert first is not None and first["status"] == "running"
    assert first["title"].startswith("Book court 1 x") and len(first["title"]) == 80
    assert first["requester"] == {"user_id": "lee", "name": "lee", "roles": ["staff"]}
    log.open("run_2", STAFF, "another message")  # a newer run began meanwhile
    log.append("run_1", "run_finished", {"status": "completed"})
    assert summary(scope, "th-sum")["status"] == "running"  # not the older run's
    assert not run_active(scope, "th-sum")  # no run holds the thread: nothing to follow
    log.append("run_2", "approval_required", {"changes": [{"change_id": "chg_1"}]})
    log.append("run_2", "run_finished", {"status": "awaiting_approval"})
    done = summary(scope, "th-sum")
    assert done["status"] == "awaiting_approval" and done["title"].startswith("Book")
    assert done["change_ids"] == ["chg_1"] and done["has_changes"] is True


def test_names_come_from_staff_and_member_records(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    staff = demo_db["staff"].find_one({"tenant_id": "demo"})
    member = demo_db["members"].find_one({"tenant_id": "demo"})
    assert display_name(scope, staff["_id"]) == staff["name"]
    assert display_name(scope, member["_id"]) == member["name"]
    assert display_name(scope, "someone-else") == "someone-else"
    assert display_names(scope, [staff["_id"], member["_id"], "someone-else"]) == {
        staff["_id"]: staff["name"], member["_id"]: member["name"],
        "someone-else": "someone-else"}  # a list's deciders in one read per collection


def test_a_run_without_a_live_lease_is_settled_failed_once_and_a_newer_run_is_not(
        demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    log = ThreadLog(scope, "th-dead")
    log.open("run_dead", STAFF, "Refund it")
    log.append("run_dead", "run_started", {"thread_id": "th-dead", "run_id": "run_dead"})
    lapsed = datetime.now(UTC) - timedelta(seconds=1)
    scope["thread_leases"].insert_one({"thread_id": "th-dead", "owner": "x", "until": lapsed})

    readers = [threading.Thread(target=run_active, args=(scope, "th-dead")) for _ in range(4)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    events = [(e.event, e.data) for _, e in events_after(scope, "th-dead")]
    assert [name for name, _ in events] == ["run_started", "error", "run_finished"]
    assert events[-1][1] == {"thread_id": "th-dead", "status": "failed", "interrupted": True}
    assert (summary(scope, "th-dead") or {})["status"] == "failed"

    # a live lease: the run is in flight, whatever its summary says
    ThreadLog(scope, "th-live").open("run_live", STAFF, "Hours?")
    scope["thread_leases"].insert_one({"thread_id": "th-live", "owner": "y",
                                       "until": datetime.now(UTC) + timedelta(seconds=30)})
    assert run_active(scope, "th-live")
    # the summary moved on to a newer run: the old one's settlement writes nothing
    stale = dict(summary(scope, "th-live") or {}, run_id="run_old")
    scope["thread_leases"].delete_one({"thread_id": "th-live"})
    settle_lapsed(scope, [stale])
    assert (summary(scope, "th-live") or {})["status"] == "running"
    assert events_after(scope, "th-live") == []


def test_a_run_on_a_thread_with_events_but_no_checkpoint_numbers_its_events_after_them(
        demo_db: Any, script: Any) -> None:
    from tests.engine.helpers import chat

    # a run that died before its checkpoint: its events are stored and settled, and no
    # checkpoint says a run of the thread ever ended, so the next run's log starts at 1
    # unread and collides
    scope = TenantScope(demo_db, "demo")
    log = ThreadLog(scope, "th-died")
    log.open("run_died", STAFF, "Refund it")
    log.append("run_died", "run_started", {"thread_id": "th-died", "run_id": "run_died"})
    scope["thread_leases"].insert_one({"thread_id": "th-died", "owner": "gone",
                                       "until": datetime.now(UTC) - timedelta(seconds=1)})
    run_active(scope, "th-died")  # settles it: an error and run_finished, numbers 2 and 3

    events = chat(STAFF, "what do you think of the weather?", script({"plan": {"tasks": []}}),
                  thread="th-died")
    assert events[-1].data["status"] == "completed"
    assert [e.id for e in events] == [str(n) for n in range(4, len(events) + 4)]
    stored = [(run_id, e.id) for run_id, e in events_after(scope, "th-died")]
    assert [seq for _, seq in stored] == [str(n) for n in range(1, len(events) + 4)]
    assert [run_id for run_id, _ in stored[:3]] == ["run_died"] * 3
