"""A run's graph starts planning while the run's start is stored (the thread's record and
its `run_started` event, ~5 ms of store writes on the way to the plan event); the stored
events keep their order, and a client that goes away at `run_started` stops the graph."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from opsgraph.engine import decompose
from opsgraph.engine.runner import stream_run
from opsgraph.engine.stream_pump import Pumped
from opsgraph.engine.thread_log import ThreadLog, events_after
from opsgraph.store.scope import TenantScope
from tests.engine.helpers import chat, finished, person
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")

SCRIPT = {"plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen")]},
          "turns": {"t1": [call("members_get", member="Emily Chen")]},
          "synthesis": "Emily Chen is a member."}


def pumping() -> bool:
    """Whether some thread is pumping a graph's stream (inside `Pumped._pump`)."""
    for frame in sys._current_frames().values():
        at: Any = frame
        while at is not None:
            if at.f_code is Pumped._pump.__code__:
                return True
            at = at.f_back
    return False


def test_the_graph_plans_while_the_runs_start_is_stored(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    planning = threading.Event()
    plan = decompose.make_plan

    def make_plan(*args: Any, **kwargs: Any) -> Any:
        planning.set()
        return plan(*args, **kwargs)

    monkeypatch.setattr(decompose, "make_plan", make_plan)
    opened = ThreadLog.open
    overlapped: list[bool] = []

    def open_(self: ThreadLog, *args: Any, **kwargs: Any) -> None:
        overlapped.append(planning.wait(10))  # the graph has begun before this write ends
        opened(self, *args, **kwargs)

    monkeypatch.setattr(ThreadLog, "open", open_)
    staff = person("staff")
    events = chat(staff, "who is Emily Chen?", script(SCRIPT), thread="th-start")
    assert overlapped == [True]
    assert finished(events)["status"] == "completed"
    stored = [event for _, event in events_after(TenantScope.of(staff), "th-start")]
    names = [e.event for e in stored]
    assert names[0] == "run_started" and "plan" in names and names[-1] == "run_finished"
    assert [(e.id, e.event) for e in events] == [(e.id, e.event) for e in stored]  # as stored


def test_a_client_gone_at_run_started_stops_the_graph(script: Any) -> None:
    staff = person("staff")
    model = script(SCRIPT)
    run = stream_run(staff, "who is Emily Chen?", thread_id="th-gone", model=model)
    assert next(run).event == "run_started"
    run.close()  # the graph stops after its current step; the thread is free again
    assert not pumping()
    again = chat(staff, "who is Emily Chen?", script(SCRIPT), thread="th-gone")
    assert finished(again)["status"] == "completed"
