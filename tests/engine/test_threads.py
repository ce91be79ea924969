"""The per-thread run lease: renewed while held, lapses after a crash, and a run that loses
it stops before writing anything more to the thread."""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pymongo import MongoClient

from opsgraph.bench.environment import CommandCounter
from opsgraph.engine.events import Event
from opsgraph.engine.threads import LeaseLost, _try_acquire, thread_lease
from opsgraph.errors import Conflict
from opsgraph.models.limits import model_call_slot, reset_model_call_slots
from opsgraph.settings import get_settings
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import wait_until


@pytest.fixture
def scope(demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> TenantScope:
    monkeypatch.setenv("OPSGRAPH_THREAD_LEASE_S", "1")
    get_settings.cache_clear()
    return TenantScope(demo_db, "demo")


def test_a_held_lease_is_renewed_past_its_length(scope: TenantScope) -> None:
    with thread_lease(scope, "th-long"):
        time.sleep(1.6)  # longer than the 1 s lease: only renewal keeps it
        assert not _try_acquire(scope, "th-long", "someone-else", 1.0)
        with pytest.raises(Conflict, match="busy"):
            with thread_lease(scope, "th-long", wait_s=0.2):
                pass
    with thread_lease(scope, "th-long", wait_s=0.2):
        pass  # released on exit


def test_a_crashed_holders_lease_lapses(scope: TenantScope) -> None:
    scope["thread_leases"].insert_one({"thread_id": "th-crash", "owner": "dead-process",
                                       "until": datetime.now(UTC) + timedelta(seconds=1)})
    started = time.monotonic()
    with thread_lease(scope, "th-crash", wait_s=5):
        assert time.monotonic() - started >= 0.5
    assert scope["thread_leases"].count({"thread_id": "th-crash"}) == 0


def test_leases_are_per_tenant(scope: TenantScope, demo_db: Any) -> None:
    acme = TenantScope(demo_db, "acme")
    with thread_lease(scope, "th-same"), thread_lease(acme, "th-same", wait_s=0.2):
        pass


def take_over(scope: TenantScope, thread_id: str, owner: str = "another-run") -> None:
    """Another process's run takes the thread: the holder's lease lapsed in the store (its
    renewals did not get there), and the other owner acquires it as any run would. The
    holder's renewer (every third of a second here) may renew between the lapse and the
    acquire, so the lapse is made again until the acquire wins."""
    for _ in range(50):
        scope["thread_leases"].update_one({"thread_id": thread_id},
                                          {"$set": {"until": datetime.now(UTC) - timedelta(1)}})
        if _try_acquire(scope, thread_id, owner, 60.0):
            return
    raise AssertionError(f"{owner} never acquired the lapsed lease of {thread_id}")


def test_a_lease_taken_by_another_owner_is_lost_and_not_deleted_on_exit(
        scope: TenantScope) -> None:
    with thread_lease(scope, "th-taken") as lease:
        lease.confirm()
        take_over(scope, "th-taken")
        with pytest.raises(LeaseLost, match="thread th-taken stopped at the step: another "
                                            "owner holds the lease"):
            lease.confirm("the step")
        wait_until(lambda: lease.lost, "the renewer to see the loss")
    assert scope["thread_leases"].find_one({"thread_id": "th-taken"})["owner"] == "another-run"


def test_the_first_step_takes_the_lease_s_taking_as_its_read_and_later_steps_read_it(
        scope: TenantScope, demo_db: Any, mongo_uri: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("opsgraph.engine.threads.ACQUIRED_FRESH_S", 60.0)  # however slow
    commands = CommandCounter()
    client: MongoClient[dict[str, Any]] = MongoClient(mongo_uri, event_listeners=[commands])
    own = TenantScope(client[demo_db.name], "demo")
    with thread_lease(own, "th-first") as lease, commands.counting() as sent:
        assert lease.confirm("the first step") is False  # just taken: no read
        assert sent["find thread_leases"] == 0
        take_over(scope, "th-first")
        with pytest.raises(LeaseLost, match="stopped at the second step: another owner"):
            lease.confirm("the second step")
        assert sent["find thread_leases"] == 1
    client.close()


def test_a_first_step_long_after_the_taking_reads_the_lease(
        scope: TenantScope, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("opsgraph.engine.threads.ACQUIRED_FRESH_S", 0.0)
    with thread_lease(scope, "th-late") as lease:
        take_over(scope, "th-late")
        with pytest.raises(LeaseLost, match="stopped at the first step"):
            lease.confirm("the first step")


def test_a_renewer_whose_store_stops_answering_loses_the_lease_once_it_lapses(
        scope: TenantScope, demo_db: Any, mongo_uri: str) -> None:
    # The holder talks to the store through a client of its own, which then goes away: its
    # renewals raise instead of answering, and the renewer keeps going until the lease ends.
    client: MongoClient[dict[str, Any]] = MongoClient(mongo_uri)
    own = TenantScope(client[demo_db.name], "demo")
    with thread_lease(own, "th-silent") as lease:
        lease.check()
        client.close()
        wait_until(lambda: lease.lost, "the lease to lapse")
        with pytest.raises(LeaseLost, match="lapsed at 1 s without a successful renewal"):
            lease.check("a model call")
    take_over(scope, "th-silent")  # the lapsed lease is free for another run


@pytest.fixture
def one_model_slot(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPSGRAPH_MODEL_CONCURRENCY", "1")
    reset_model_call_slots()
    yield
    monkeypatch.delenv("OPSGRAPH_MODEL_CONCURRENCY")
    reset_model_call_slots()


def test_a_run_that_loses_its_lease_stops_at_its_next_step_and_writes_nothing(
        scope: TenantScope, script: Any, one_model_slot: None) -> None:
    from opsgraph.engine.runner import stream_run, thread_state
    from tests.engine.helpers import person
    from tests.engine.test_supervisor import call, task

    model = script({
        "plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone")]},
        "turns": {"t1": [call("members_update", member="Emily Chen",
                              changes={"phone": "+44 7700 900999"})]},
        "synthesis": "unused"})
    manager = person("manager")
    events: queue.Queue[Event] = queue.Queue()

    def run() -> None:
        # a question first: the planner plans it (a single change would be planned by code,
        # and the first model call would be the agent's)
        for event in stream_run(manager, "is Emily Chen's phone right? change it",
                                thread_id="th-lost", model=model):
            events.put(event)

    seen: list[Event] = []

    def next_event() -> Event:
        seen.append(events.get(timeout=30))
        return seen[-1]

    runner = threading.Thread(target=run)
    with model_call_slot():  # the run's first model call waits behind this one
        runner.start()
        while next_event().event != "progress":
            pass
        take_over(scope, "th-lost")  # while the run waits for its planner call
    runner.join(30)
    while not events.empty():
        next_event()
    names = [e.event for e in seen]
    # the planner call that was under way finishes; the next step finds the lease gone
    assert names == ["run_started", "progress", "plan", "error", "run_finished"]
    error = seen[3].data
    assert error["code"] == "lease_lost"
    # whichever notices first names it: the step's own check ("holds") or the renewer
    # ("took"), when its renewal ran while the planner call finished
    assert re.search(r"thread th-lost stopped at execute: another owner (holds|took) the lease",
                     error["message"]), error["message"]
    assert seen[-1].data["status"] == "failed"
    # nothing written to the thread after the loss: no checkpoint, no pending change, and
    # the lease still belongs to the run that took it
    assert thread_state(manager, "th-lost") == ((), None)
    assert scope["pending_changes"].count({"thread_id": "th-lost"}) == 0
    assert scope["thread_leases"].find_one({"thread_id": "th-lost"})["owner"] == "another-run"


def test_a_continued_thread_is_read_once_for_the_check_and_the_graphs_start(
        script: Any, demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.engine.graph import get_graph
    from tests.engine.helpers import chat, of, person

    saver = get_graph().checkpointer
    reads: list[str] = []
    real = saver.get_tuple

    def counted(config: Any) -> Any:
        reads.append(config["configurable"]["thread_id"])
        return real(config)

    monkeypatch.setattr(saver, "get_tuple", counted)
    model = script({"plan": {"tasks": []}})
    staff = person()
    first = chat(staff, "what do you think of the weather?", model, thread="th-read-once")
    assert of(first, "run_finished")[0]["status"] == "completed"
    reads.clear()
    second = chat(staff, "and of the rain?", model, thread="th-read-once")
    assert of(second, "run_finished")[0]["status"] == "completed"
    # the run's check of the thread reads the checkpoint; the graph starts from that read
    assert reads == [reads[0]] and reads[0].endswith("th-read-once")
    assert len(of(second, "answer")) == 1


def test_a_threads_first_run_reads_neither_a_checkpoint_nor_an_event_number_it_knows(
        script: Any, demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.engine import thread_log
    from opsgraph.engine.graph import get_graph
    from tests.engine.helpers import chat, person

    saver = get_graph().checkpointer
    reads: list[str] = []
    real_tuple, real_last = saver.get_tuple, thread_log.last_seq
    monkeypatch.setattr(saver, "get_tuple",
                        lambda config: reads.append("checkpoint") or real_tuple(config))
    monkeypatch.setattr(thread_log, "last_seq",
                        lambda scope, thread_id: reads.append("last event") or
                        real_last(scope, thread_id))
    model = script({"plan": {"tasks": []}})
    staff = person()

    # a new thread (its id made by the run): nothing of it can be stored yet
    first = chat(staff, "what do you think of the weather?", model)
    assert reads == []
    assert [e.id for e in first] == [str(n) for n in range(1, len(first) + 1)]

    # an id the caller chose: the run's check reads its checkpoint, and finding none, the
    # log starts at 1 unread
    chosen = chat(staff, "what do you think of the weather?", model, thread="th-chosen")
    assert reads == ["checkpoint"]
    assert [e.id for e in chosen] == [str(n) for n in range(1, len(chosen) + 1)]

    # a thread a run ended on: its checkpoint, then where its log ends
    reads.clear()
    second = chat(staff, "and of the rain?", model, thread="th-chosen")
    assert reads == ["checkpoint", "last event"]
    assert [e.id for e in second] == [str(n) for n in range(len(chosen) + 1,
                                                           len(chosen) + len(second) + 1)]


def test_the_leased_savers_first_reader_gets_a_copy_and_the_next_the_read_once(
        script: Any, demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from opsgraph.engine.graph import get_graph
    from opsgraph.engine.runner import _config
    from opsgraph.engine.threads import LeasedSaver
    from tests.engine.helpers import chat, person

    staff = person()
    chat(staff, "what do you think of the weather?", script({"plan": {"tasks": []}}),
         thread="th-copy")
    saver = get_graph().checkpointer
    reads: list[str] = []
    real = saver.get_tuple
    monkeypatch.setattr(saver, "get_tuple", lambda config: reads.append("read") or real(config))
    config = _config(staff, "th-copy")
    with thread_lease(TenantScope.of(staff), "th-copy") as lease:
        leased = LeasedSaver(saver, lease)
        first = leased.get_tuple(config)
        assert first is not None and reads == ["read"]
        first.checkpoint["channel_versions"]["changed_by_the_reader"] = 1  # as the graph does
        second = leased.get_tuple(config)
        assert second is not None and reads == ["read"]  # from memory
        assert "changed_by_the_reader" not in second.checkpoint["channel_versions"]
        assert second.checkpoint["id"] == first.checkpoint["id"]
        assert leased.get_tuple(config) is not None and reads == ["read", "read"]  # once only
