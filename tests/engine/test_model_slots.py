"""Runs under overload: model calls are served in the order their runs started, and a run
waiting for a slot says so (`progress`) instead of going silent."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from opsgraph.engine.events import Event
from opsgraph.engine.runner import stream_run
from opsgraph.models.limits import (
    model_call_slot,
    model_calls_waiting,
    reset_model_call_slots,
    run_ticket,
)
from tests.engine.helpers import person, wait_until
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")


@pytest.fixture
def one_model_slot(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPSGRAPH_MODEL_CONCURRENCY", "1")
    reset_model_call_slots()
    yield
    monkeypatch.delenv("OPSGRAPH_MODEL_CONCURRENCY")
    reset_model_call_slots()


class Run:
    """A run started now (its first event read here), driven on in a thread of its own."""

    def __init__(self, message: str, model: str) -> None:
        self.events = stream_run(person("staff"), message, model=model)
        self.seen = [next(self.events)]  # run_started: the run's start, and its ticket
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._drive)

    def _drive(self) -> None:
        for event in self.events:
            self._queue.put(event)
        self._queue.put(None)

    def go(self) -> Run:
        self._thread.start()
        return self

    def until(self, name: str) -> dict[str, Any]:
        """Read events until one called `name`; its data."""
        while True:
            event = self._queue.get(timeout=60)
            assert event is not None, f"the run ended before {name}: {self.names}"
            self.seen.append(event)
            if event.event == name:
                return event.data

    def drain(self) -> list[str]:
        """Read what has arrived so far, without waiting; the names of every event seen."""
        while not self._queue.empty():
            event = self._queue.get()
            if event is None:  # the run ended: leave the end for `finish`
                self._queue.put(None)
                break
            self.seen.append(event)
        return self.names

    def finish(self) -> None:
        while (event := self._queue.get(timeout=60)) is not None:
            self.seen.append(event)
        self._thread.join(60)

    @property
    def names(self) -> list[str]:
        return [e.event for e in self.seen]


def test_the_run_that_started_first_gets_the_next_slot_though_it_asked_last(
        script: Any, one_model_slot: None) -> None:
    """A run asks for its planner's slot as it starts (its graph starts before its
    `run_started` is stored); a run that started earlier and asks later, as its tasks'
    calls do after its plan, goes ahead of it. `earliest` is the ticket of such a run."""
    model = script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen")]},
        "turns": {"t1": [{**call("members_get", member="Emily Chen"), "delay_ms": 50}]},
        "synthesis": "Emily Chen is a member.", "plan_delay_ms": 50})
    gate = threading.Event()
    holding = threading.Event()

    def hold(ticket: int) -> None:  # a call of the run that started first, asking last
        with model_call_slot(ticket):
            holding.set()
            gate.wait(60)

    with model_call_slot():  # the process's one slot is busy
        earliest = threading.Thread(target=hold, args=(run_ticket(),))
        late = Run("who is Emily Chen?", model)
        assert late.go().until("progress") == {"stage": "waiting_for_model", "position": 1,
                                               "step": "decompose"}
        later = Run("who is Emily Chen?", model)
        assert later.go().until("progress")["position"] == 2  # behind the run before it
        earliest.start()
        wait_until(lambda: model_calls_waiting() == 3, "three queued model calls")
    # the slot passed to the call of the run that started first, which holds it: neither
    # later run has been served
    assert holding.wait(60)
    assert late.drain() == ["run_started", "progress"]
    assert later.drain() == ["run_started", "progress"]
    gate.set()
    earliest.join(60)
    assert late.until("plan")["tasks"][0]["id"] == "t1"
    for run in (late, later):
        run.finish()
        assert run.names[-1] == "run_finished"
        assert run.seen[-1].data["status"] == "completed"
