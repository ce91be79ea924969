"""A run's graph runs on the process's thread pool (`engine.graph_threads`): its nodes, its
sub-tasks and the pump of its stream, on threads the next run takes again; a sub-task's
failure is still the run's to report."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from opsgraph.engine import execute
from opsgraph.engine.graph_threads import THREAD_PREFIX
from tests.engine.helpers import chat, finished, person, statuses
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")

SCRIPT = {"plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen"),
                             task("t2", "members", "get", "Look up Raj Mehta")]},
          "turns": {"t1": [call("members_get", member="Emily Chen")],
                    "t2": [call("members_get", member="Raj Mehta")]},
          "synthesis": "Both are members."}
ASK = "Find these members and tell me about each of them"  # planned by the model, not code


def _threads_of_subtasks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    run_task = execute.run_task

    def spy(*args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return run_task(*args, **kwargs)

    monkeypatch.setattr(execute, "run_task", spy)
    return names


def _pool_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith(f"{THREAD_PREFIX}_")}


def test_runs_take_their_threads_from_the_pool_again(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    names = _threads_of_subtasks(monkeypatch)
    staff = person("staff")
    model = script(SCRIPT)
    assert finished(chat(staff, ASK, model))["status"] == "completed"
    before = _pool_threads()
    for _ in range(5):  # each holds 4 threads at once: its pump, `execute` and 2 sub-tasks
        assert finished(chat(staff, ASK, model))["status"] == "completed"
    assert len(names) == 12 and all(n.startswith(f"{THREAD_PREFIX}_") for n in names)
    assert len(_pool_threads() - before) < 10  # 20 or more with new threads for each run


def test_a_sub_task_that_breaks_is_reported_and_the_run_ends(
        script: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run_task = execute.run_task

    def broken(ctx: Any, planned: Any, *args: Any, **kwargs: Any) -> Any:
        if planned.id == "t2":
            raise RuntimeError("t2 broke")
        return run_task(ctx, planned, *args, **kwargs)

    monkeypatch.setattr(execute, "run_task", broken)
    events = chat(person("staff"), ASK, script(SCRIPT))
    assert finished(events)["status"] == "failed"
    assert statuses(events) == {"t1": "completed"}
    assert [e.data["code"] for e in events if e.event == "error"] == ["internal"]
