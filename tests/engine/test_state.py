"""The typed thread state: plain data in the checkpoint, models in the nodes, versions that
either load or say clearly why they cannot."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener

from opsgraph.engine.runner import graph_thread_id, stream_run, thread_state
from opsgraph.engine.state import SCHEMA_VERSION, RunState, StateUnreadable, TaskResult
from tests.engine.helpers import chat, finished, of, person, statuses
from tests.engine.test_approval_resume import decide, update_turns
from tests.engine.test_supervisor import call, task

pytestmark = pytest.mark.usefixtures("demo_db")


@pytest.fixture
def serde_events() -> Iterator[list[SerdeEvent]]:
    """What LangGraph's serializer reported while the test ran (unregistered or blocked
    types: each is a warning in a log, or a value silently left as a dict)."""
    seen: list[SerdeEvent] = []
    unregister = register_serde_event_listener(seen.append)
    yield seen
    unregister()


def query_script(script: Any) -> str:
    return script({
        "plan": {"tasks": [task("t1", "knowledge", "search", "Opening hours")]},
        "turns": {"t1": [call("knowledge_search", query="opening hours"),
                         {"content": "We open at 6am."}]},
        "synthesis": "We open at 6am.",
    })


def rewrite_checkpoint(db: Any, thread_key: str, change: Callable[[dict[str, Any]], None]
                       ) -> None:
    """Edit the channel values of a thread's latest checkpoint in the store, encoded by
    the saver's own serializer (an older or newer opsgraph's checkpoint)."""
    from opsgraph.engine.graph import get_graph

    serde = get_graph().checkpointer.serde  # type: ignore[union-attr]
    doc = db["checkpoints"].find_one({"thread_id": thread_key, "checkpoint_ns": ""},
                                     sort=[("checkpoint_id", -1)])
    checkpoint = serde.loads_typed((doc["type"], doc["checkpoint"]))
    change(checkpoint["channel_values"])
    kind, blob = serde.dumps_typed(checkpoint)
    db["checkpoints"].update_one({"_id": doc["_id"]}, {"$set": {"type": kind,
                                                                  "checkpoint": blob}})


def test_the_state_is_checkpointed_as_plain_data_and_read_as_models(
        script: Any, serde_events: list[SerdeEvent]) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "knowledge", "search", "Opening hours"),
                           task("t2", "members", "update", "Change Emily Chen's phone")]},
        "turns": {"t1": [call("knowledge_search", query="opening hours"),
                         {"content": "We open at 6am."}],
                  "t2": [*update_turns("+44 7700 900999"), {"content": "Phone updated."}]},
        "synthesis": "We open at 6am.",
    })
    staff = person("staff")
    events = chat(staff, "update Emily's phone and tell me the hours", model,
                  thread="th-typed")
    # the plan clients see keeps its shape
    assert [sorted(t) for t in of(events, "plan")[0]["tasks"]] == [
        ["agent", "depends_on", "domain", "id", "instruction", "operation"]] * 2
    [card] = of(events, "approval_required")[0]["changes"]
    resumed = decide(card["change_id"], "approve")  # loads the paused checkpoint
    assert finished(resumed)["status"] == "completed"

    from opsgraph.engine.graph import get_graph

    raw = get_graph().get_state({"configurable": {
        "thread_id": graph_thread_id(staff, "th-typed")}}).values
    assert raw["schema_version"] == SCHEMA_VERSION
    assert all(type(t) is dict for t in raw["plan"])
    assert all(type(r) is dict for r in raw["results"].values())
    assert type(raw["answer"]) is dict and type(raw["requester"]) is dict
    _, state = thread_state(staff, "th-typed")
    assert state is not None and state.requester is not None
    assert state.requester.user_id == "alex"
    assert isinstance(state.results["t2"], TaskResult)
    assert state.results["t2"].status == "completed"
    assert [c["tool"] for c in state.results["t2"].calls][-1] == "members_update"
    assert state.answer is not None and state.answer.text.startswith("We open at 6am.")
    assert serde_events == []  # nothing the serializer had to guess about


def test_a_checkpoint_written_before_schema_version_loads_and_continues(
        script: Any, demo_db: Any) -> None:
    staff = person("staff")
    model = query_script(script)
    assert finished(chat(staff, "when do you open?", model, thread="th-old"))[
        "status"] == "completed"

    def to_version_1(values: dict[str, Any]) -> None:
        """The untyped shape: no schema_version, results without the fields added since."""
        del values["schema_version"]
        for result in values["results"].values():
            for added in ("error", "gate", "cap"):
                del result[added]

    rewrite_checkpoint(demo_db, graph_thread_id(staff, "th-old"), to_version_1)
    _, old = thread_state(staff, "th-old")
    assert old is not None and old.schema_version == 1
    assert old.results["t1"].status == "completed"

    again = chat(staff, "and on Sundays?", model, thread="th-old")
    assert finished(again)["status"] == "completed"
    _, state = thread_state(staff, "th-old")
    assert state is not None and state.schema_version == SCHEMA_VERSION
    assert [t["content"] for t in state.history if t["role"] == "user"] == [
        "when do you open?", "and on Sundays?"]


@pytest.mark.parametrize(("change", "says"), [
    (lambda v: v.update(schema_version=SCHEMA_VERSION + 1),
     f"schema_version {SCHEMA_VERSION + 1}, written by a newer opsgraph"),
    (lambda v: v["results"]["t1"].update(status="exploded"),
     "cannot be read: results.t1.status: Input should be"),
    (lambda v: v["plan"][0].pop("id"), "cannot be read: plan.0.id: Field required"),
])
def test_a_checkpoint_this_version_cannot_read_stops_with_a_clear_error(
        script: Any, demo_db: Any, change: Callable[[dict[str, Any]], None],
        says: str) -> None:
    staff = person("staff")
    model = query_script(script)
    chat(staff, "when do you open?", model, thread="th-bad")
    rewrite_checkpoint(demo_db, graph_thread_id(staff, "th-bad"), change)
    with pytest.raises(StateUnreadable, match=re.escape(says)) as err:
        list(stream_run(staff, "and on Sundays?", thread_id="th-bad", model=model))
    assert err.value.code == "state_unreadable"


def test_a_node_reads_a_validated_state() -> None:
    state = RunState(**{"request": "x", "plan": [{"id": "t1", "domain": "members",
                                                  "operation": "get", "instruction": "find",
                                                  "depends_on": [], "agent": None}],
                        "results": {}})
    assert state.plan[0].writes is False and state.schema_version == 1
    with pytest.raises(StateUnreadable, match=r"history\.0\.role"):
        RunState(**{"history": [{"role": "robot", "content": "hi"}]})


def test_a_task_result_keeps_the_shape_clients_read(script: Any) -> None:
    events = chat(person("staff"), "when do you open?", query_script(script), thread="th-s")
    assert statuses(events) == {"t1": "completed"}
    _, state = thread_state(person("staff"), "th-s")
    assert state is not None
    assert set(state.results["t1"].model_dump()) == {
        "task_id", "agent", "status", "instruction", "writes", "content", "sources",
        "tool_calls", "calls", "findings", "error", "gate", "cap", "asking"}
