"""The scripted model answers by stage and task from its file, statelessly."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from opsgraph.errors import BadInput
from opsgraph.models import ScriptedChatModel, ScriptedModelError, scripted, usage_of
from opsgraph.models.script import load_script

SCRIPT = """
plan:
  tasks:
    - id: t1
      domain: members
      operation: update
      instruction: Change Jane Smith's email to jane@new.example
      depends_on: []
turns:
  t1:
    - tool_calls:
        - {name: members_update, args: {member: Jane Smith, changes: {email: jane@new.example}}}
    - content: I proposed the change.
  t2:
    - content: Looking it up.
      tool_calls:
        - {name: members_search, args: {query: Jane}}
        - {name: members_search, args: {query: Smith}}
      delay_ms: 150
synthesis: Jane Smith's email change is waiting for approval.
"""


class PlannedTask(BaseModel):
    id: str
    domain: str
    operation: str
    instruction: str
    depends_on: list[str]


class TaskPlan(BaseModel):
    tasks: list[PlannedTask]


def _cfg(stage: str, task_id: str | None = None) -> Any:
    return {"metadata": {"opsgraph_stage": stage, "task_id": task_id}}


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(SCRIPT)
    return path


@pytest.fixture
def model(script: Path) -> ScriptedChatModel:
    return ScriptedChatModel(path=str(script))


def test_decompose_returns_the_plan_through_structured_output(model: ScriptedChatModel) -> None:
    plan = model.with_structured_output(TaskPlan).invoke("change it", config=_cfg("decompose"))
    assert isinstance(plan, TaskPlan)
    assert [t.id for t in plan.tasks] == ["t1"]
    assert plan.tasks[0].operation == "update"

    raw = model.with_structured_output(TaskPlan, include_raw=True).invoke(
        "change it", config=_cfg("decompose"))
    assert isinstance(raw, dict)
    assert raw["parsing_error"] is None and raw["parsed"] == plan
    assert raw["raw"].tool_calls[0]["name"] == "TaskPlan"


def test_decompose_async(model: ScriptedChatModel) -> None:
    plan = asyncio.run(model.with_structured_output(TaskPlan).ainvoke(
        "x", config=_cfg("decompose")))
    assert isinstance(plan, TaskPlan) and plan.tasks[0].id == "t1"


def test_task_turns_follow_the_assistant_message_count(model: ScriptedChatModel) -> None:
    bound = model.bind_tools([TaskPlan])
    first = bound.invoke([HumanMessage("change Jane's email")], config=_cfg("task", "t1"))
    assert first.tool_calls == [{
        "name": "members_update", "type": "tool_call", "id": "call_t1_0_0",
        "args": {"member": "Jane Smith", "changes": {"email": "jane@new.example"}},
    }]
    history: list[BaseMessage] = [HumanMessage("change Jane's email"), first,
                                  ToolMessage("previewed", tool_call_id="call_t1_0_0")]
    second = bound.invoke(history, config=_cfg("task", "t1"))
    assert second.content == "I proposed the change." and not second.tool_calls

    # A resumed thread (a fresh instance, as in a new process) continues where it stopped.
    again = ScriptedChatModel(path=model.path).invoke(history, config=_cfg("task", "t1"))
    assert again.content == second.content


def test_tool_call_ids_are_deterministic_and_unique(model: ScriptedChatModel) -> None:
    reply = model.invoke("find Jane", config=_cfg("task", "t2"))
    ids = [tc["id"] for tc in reply.tool_calls]
    assert ids == ["call_t2_0_0", "call_t2_0_1"]
    assert reply.content == "Looking it up."
    assert [tc["args"] for tc in reply.tool_calls] == [{"query": "Jane"}, {"query": "Smith"}]


def test_missing_turn_names_stage_task_and_file(model: ScriptedChatModel) -> None:
    history: list[BaseMessage] = [HumanMessage("x"), AIMessage("a"), AIMessage("b")]
    with pytest.raises(ScriptedModelError) as err:
        model.invoke(history, config=_cfg("task", "t1"))
    message = str(err.value)
    assert "stage task" in message and "'t1'" in message and model.path in message
    assert "no turn left" in message

    with pytest.raises(ScriptedModelError, match=r"task 'zz'.*scripted tasks: t1, t2"):
        model.invoke("x", config=_cfg("task", "zz"))
    with pytest.raises(ScriptedModelError, match="opsgraph_stage=None"):
        model.invoke("x")


def test_stage_without_an_entry_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "bare.json"
    path.write_text(json.dumps({"turns": {"t1": [{"content": "ok"}]}}))
    bare = ScriptedChatModel(path=str(path))
    with pytest.raises(ScriptedModelError, match=r"stage decompose.*no `plan`"):
        bare.with_structured_output(TaskPlan).invoke("x", config=_cfg("decompose"))
    with pytest.raises(ScriptedModelError, match=r"stage synthesise.*no `synthesis`"):
        bare.invoke("x", config=_cfg("synthesise"))
    assert bare.invoke("x", config=_cfg("task", "t1")).content == "ok"


def test_synthesis_streams_in_several_chunks(model: ScriptedChatModel) -> None:
    chunks = [c.content for c in model.stream("sum up", config=_cfg("synthesise"))]
    text = "Jane Smith's email change is waiting for approval."
    assert len([c for c in chunks if c]) >= 5
    assert "".join(str(c) for c in chunks) == text
    assert model.invoke("sum up", config=_cfg("synthesise")).content == text


def test_synthesis_astreams_in_several_chunks(model: ScriptedChatModel) -> None:
    async def collect() -> tuple[list[Any], list[Any]]:
        chunks = [c.content async for c in model.astream("x", config=_cfg("synthesise"))]
        events = [e async for e in model.astream_events("x", config=_cfg("synthesise"))
                  if e["event"] == "on_chat_model_stream"]
        return chunks, events

    chunks, events = asyncio.run(collect())
    assert len([c for c in chunks if c]) >= 5
    assert len(events) >= 5


class _State(TypedDict):
    answer: str


def test_tokens_stream_out_of_a_graph_node(model: ScriptedChatModel) -> None:
    # In messages mode langchain calls _stream without the run manager; the stage must
    # still reach the model.
    def synthesise(state: _State) -> _State:
        reply = model.invoke("sum up", config=_cfg("synthesise"))
        return {"answer": str(reply.content)}

    graph = StateGraph(_State)
    graph.add_node("synthesise", synthesise)
    graph.add_edge(START, "synthesise")
    graph.add_edge("synthesise", END)
    app = graph.compile()
    tokens = [chunk.content for chunk, _meta in  # type: ignore[union-attr]
              app.stream({"answer": ""}, stream_mode="messages")
              if chunk.content]  # type: ignore[union-attr]
    assert len(tokens) >= 5
    assert "".join(str(t) for t in tokens).startswith("Jane Smith's")


def test_generate_reads_metadata_from_the_run(model: ScriptedChatModel) -> None:
    result = model.generate([[HumanMessage("x")]],
                            metadata={"opsgraph_stage": "task", "task_id": "t2"})
    message = result.generations[0][0].message  # type: ignore[union-attr]
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 2


def test_streamed_tool_calls_arrive_whole(model: ScriptedChatModel) -> None:
    merged = None
    for chunk in model.stream("find", config=_cfg("task", "t2")):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    assert [tc["id"] for tc in merged.tool_calls] == ["call_t2_0_0", "call_t2_0_1"]
    assert merged.tool_calls[1]["args"] == {"query": "Smith"}


def test_turn_delay_is_honoured(model: ScriptedChatModel) -> None:
    start = time.perf_counter()
    model.invoke("find", config=_cfg("task", "t2"))
    assert time.perf_counter() - start >= 0.15


def test_async_delay_waits_without_blocking_the_loop(model: ScriptedChatModel) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def call() -> float:
        task = asyncio.create_task(ticker())
        start = time.perf_counter()
        await model.ainvoke("find", config=_cfg("task", "t2"))
        elapsed = time.perf_counter() - start
        task.cancel()
        return elapsed

    assert asyncio.run(call()) >= 0.15
    assert ticks >= 3  # the loop kept running while the model "thought"


def test_plan_and_synthesis_delays(tmp_path: Path) -> None:
    path = tmp_path / "slow.yaml"
    path.write_text("plan: {tasks: []}\nplan_delay_ms: 120\n"
                    "synthesis: done and dusted\nsynthesis_delay_ms: 120\n")
    slow = ScriptedChatModel(path=str(path))
    start = time.perf_counter()
    slow.with_structured_output(TaskPlan).invoke("x", config=_cfg("decompose"))
    assert time.perf_counter() - start >= 0.12
    start = time.perf_counter()
    assert len(list(slow.stream("x", config=_cfg("synthesise")))) >= 3
    assert time.perf_counter() - start >= 0.12


def test_a_streamed_reply_arrives_evenly_over_its_delay(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "slow.yaml"
    path.write_text("plan: {tasks: []}\nsynthesis: done and dusted\nsynthesis_delay_ms: 300\n")
    clock = [0.0]
    monkeypatch.setattr(scripted, "time", SimpleNamespace(
        monotonic=lambda: clock[0], sleep=lambda s: clock.__setitem__(0, clock[0] + s)))
    arrived = [(round(clock[0], 3), c.content) for c in ScriptedChatModel(path=str(path)).stream(
        "x", config=_cfg("synthesise"))]
    assert arrived == [(0.1, "done "), (0.2, "and "), (0.3, "dusted"), (0.3, "")]


def test_reports_usage(model: ScriptedChatModel) -> None:
    reply = model.invoke("find Jane please", config=_cfg("task", "t2"))
    usage = usage_of(reply)
    assert set(usage) == {"input", "output", "cache_read", "cache_write"}
    assert usage["output"] > 0 and usage["input"] > 0
    streamed = list(model.stream("x", config=_cfg("synthesise")))
    assert sum(usage_of(c)["output"] for c in streamed) > 0


@pytest.mark.parametrize(("body", "field"), [
    ("turns:\n  t1:\n    - contnt: hi\n", "turns.t1.0.contnt"),
    ("turns:\n  t1:\n    - tool_calls: [{name: x, args: [1, 2]}]\n",
     "turns.t1.0.tool_calls.0.args"),
    ("turns:\n  t1:\n    - tool_calls: [{name: x, argz: {}}]\n", "turns.t1.0.tool_calls.0.argz"),
    ("turns:\n  t1:\n    - delay_ms: 5\n", "turns.t1.0"),
    ("synthesis: hi\nsynthesis_delay_ms: -1\n", "synthesis_delay_ms"),
    ("plans: {}\n", "plans"),
])
def test_bad_file_names_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body)
    with pytest.raises(BadInput) as err:
        ScriptedChatModel(path=str(path)).invoke("x", config=_cfg("task", "t1"))
    assert str(path) in err.value.message
    assert field in err.value.message


@pytest.mark.parametrize("body", [
    "turns:\n  t1:\n    - {content: hi, delay_ms: 60001}\n",
    "plan: {tasks: []}\nplan_delay_ms: 3600000\n",
    "synthesis: hi\nsynthesis_delay_ms: 100000000\n",
])
def test_a_delay_over_a_minute_is_refused_when_the_file_loads(tmp_path: Path,
                                                               body: str) -> None:
    path = tmp_path / "slow.yaml"
    path.write_text(body)
    with pytest.raises(BadInput) as err:
        load_script(path)
    assert "delay_ms: Input should be less than or equal to 60000" in err.value.message


@pytest.mark.parametrize(("name", "body", "needle"), [
    ("broken.yaml", "turns: [\n", "not valid YAML"),
    ("broken.json", "{", "not valid JSON"),
    ("list.yaml", "- a\n- b\n", "top level must be a mapping"),
])
def test_unreadable_file(tmp_path: Path, name: str, body: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(body)
    with pytest.raises(BadInput, match=needle):
        load_script(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "gone.yaml"
    with pytest.raises(BadInput, match=r"gone\.yaml.*does not exist"):
        ScriptedChatModel(path=str(missing)).invoke("x", config=_cfg("synthesise"))


def test_file_is_parsed_once_until_it_changes(script: Path) -> None:
    first = load_script(script)
    assert load_script(script) is first
    script.write_text("synthesis: a different answer\n")
    stat = script.stat()
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    changed = load_script(script)
    assert changed is not first and changed.synthesis == "a different answer"
