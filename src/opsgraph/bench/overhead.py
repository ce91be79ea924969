"""Case 3: harness CPU per request at 0 ms model latency vs a plain-asyncio floor.

The floor makes the same calls with the same scripted model instance: the plan through
structured output, each task's two turns with the tool bound, the tool through the
operations catalogue (validate, run), the synthesis streamed — and nothing else: no graph,
no checkpoints, no gates, no ranking, no lease. CPU is `time.process_time()` (every thread
of this process; the store's server process is not counted) over N requests after warm-up,
the two sides taking turns in rounds, each block starting from a full collection so that
neither pays for the other's garbage.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from opsgraph.bench.drive import request_text, timed_run
from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row
from opsgraph.bench.scripts import fanout_script, model_calls
from opsgraph.engine.plan import TaskPlan
from opsgraph.models.factory import get_chat_model
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.registry.loader import get_registry
from opsgraph.registry.prompt import system_prompt
from opsgraph.store.scope import TenantScope

TARGET = 3.0
WARMUP = 2
ROUNDS = 5


@dataclass
class CpuPerRequest:
    """CPU and wall seconds per request, harness and floor."""

    harness_cpu_s: float
    harness_wall_s: float
    floor_cpu_s: float
    floor_wall_s: float
    tool_cpu_s: float
    requests: int
    rounds: int
    ratio: float
    """The median of the rounds' harness / floor CPU ratios."""

    @property
    def ratio_without_tools(self) -> float:
        """The ratio once the tools' own CPU (the same on both sides) is taken out."""
        return (self.harness_cpu_s - self.tool_cpu_s) / (self.floor_cpu_s - self.tool_cpu_s)


def _meta(stage: str, task_id: str | None = None) -> Any:
    return {"metadata": {"opsgraph_stage": stage, "task_id": task_id}}


class AsyncioFloor:
    """The 8-task request written by hand with asyncio: model and tool calls only."""

    def __init__(self, env: BenchEnv, spec: str) -> None:
        self.model = get_chat_model(spec)
        self.reader = Context(TenantScope.of(env.principal).reader(), env.principal)
        agent = get_registry().get("members.lookup")
        self.system = system_prompt(agent)
        self.tools = [self._schema(op_id) for op_id in agent.tools]

    @staticmethod
    def _schema(op_id: str) -> dict[str, Any]:
        op = get_operation(op_id)
        params = op.input.model_json_schema()
        return {"name": op.tool_name, "description": op.description, "parameters": params}

    def _tool(self, call: dict[str, Any]) -> str:
        op = get_operation(call["name"].replace("_", ".", 1))
        assert op.run is not None
        result = op.run(self.reader, op.input.model_validate(call["args"]))
        return json.dumps({"ok": True, "data": result.data}, default=str)

    async def _task(self, bound: Any, task: Any) -> str:
        messages: list[BaseMessage] = [SystemMessage(self.system),
                                       HumanMessage(task.instruction)]
        # one turn, as our query agents: the calls' results are the task's result
        reply = await bound.ainvoke(messages, config=_meta("task", task.id))
        if not reply.tool_calls:
            return str(reply.text)
        return json.dumps([self._tool(call) for call in reply.tool_calls])

    async def request(self, text: str) -> str:
        """One request: plan, every task concurrently, the streamed synthesis."""
        plan = await self.model.with_structured_output(TaskPlan).ainvoke(
            [SystemMessage("Plan the request."), HumanMessage(text)], config=_meta("decompose"))
        assert isinstance(plan, TaskPlan)
        bound = self.model.bind_tools(self.tools)
        results = await asyncio.gather(*(self._task(bound, t) for t in plan.tasks))
        prompt = [SystemMessage("Answer from the results."), HumanMessage(json.dumps(results))]
        parts = [str(chunk.text) async for chunk in
                 self.model.astream(prompt, config=_meta("synthesise"))]
        return "".join(parts)

    async def many(self, n: int) -> None:
        """`n` requests, one after the other, on one event loop."""
        for _ in range(n):
            await self.request(request_text("Find these members"))

    def tools_only(self, script: dict[str, Any], n: int) -> float:
        """CPU seconds per request of the request's tool calls alone (`n` rounds)."""
        calls = [call for turns in script["turns"].values() for turn in turns
                 for call in turn.get("tool_calls", [])]
        cpu = time.process_time()
        for _ in range(n):
            for call in calls:
                self._tool(call)
        return (time.process_time() - cpu) / n


def measure_cpu(env: BenchEnv, requests: int) -> CpuPerRequest:
    """CPU per request of the harness and of the floor, after warm-up. The sides take turns
    in `ROUNDS` rounds (fewer for fewer requests; harness, then floor, each block from a full
    collection), so that a change in the machine's load falls on both: on 2 shared vCPUs one
    block per side gave ratios from 3.6 to 6.6 for the same code. Each figure is the median
    over the rounds; the ratio is the median of the rounds' ratios."""
    script = fanout_script(8, 0)
    spec = env.write_script("fanout-0ms", script)
    floor = AsyncioFloor(env, spec)
    loop = asyncio.new_event_loop()
    try:
        warmup = min(WARMUP, requests)
        for _ in range(warmup):
            timed_run(env, spec)
        loop.run_until_complete(floor.many(warmup))
        rounds = min(ROUNDS, requests)
        each = requests // rounds
        harness, floors = [], []
        for _ in range(rounds):
            harness.append(_per_request(lambda: [timed_run(env, spec) for _ in range(each)],
                                        each))
            floors.append(_per_request(lambda: loop.run_until_complete(floor.many(each)),
                                       each))
    finally:
        loop.close()
    return CpuPerRequest(
        statistics.median(cpu for cpu, _ in harness), statistics.median(w for _, w in harness),
        statistics.median(cpu for cpu, _ in floors), statistics.median(w for _, w in floors),
        floor.tools_only(script, requests), each * rounds, rounds,
        statistics.median(h[0] / f[0] for h, f in zip(harness, floors, strict=True)))


def _per_request(block: Callable[[], object], n: int) -> tuple[float, float]:
    """CPU and wall seconds per request of `block` (`n` requests), from a full collection."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    block()
    return (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n


def cpu_row(result: CpuPerRequest) -> Row:
    """Case 3's row."""
    calls = model_calls(fanout_script(8, 0))
    return Row(
        case="3", name="harness CPU per request at 0 ms vs asyncio floor",
        measured={"harness_cpu_ms": round(result.harness_cpu_s * 1000, 2),
                  "floor_cpu_ms": round(result.floor_cpu_s * 1000, 2),
                  "tool_cpu_ms": round(result.tool_cpu_s * 1000, 2),
                  "ratio_without_tools": round(result.ratio_without_tools, 3),
                  "harness_wall_ms": round(result.harness_wall_s * 1000, 2),
                  "floor_wall_ms": round(result.floor_wall_s * 1000, 2),
                  "requests": result.requests, "rounds": result.rounds,
                  "model_calls_per_request": calls},
        summary=(f"{result.harness_cpu_s * 1000:.1f} ms vs {result.floor_cpu_s * 1000:.1f} ms "
                 "CPU"),
        ratio=result.ratio, limit=TARGET, target=f"≤ {TARGET:g}",
        note=(f"8-task request ({calls} model calls, 8 members_search calls), {result.requests}"
              f" after warm-up, harness and floor taking turns in {result.rounds} rounds; medians "
              "over the rounds (the ratio: of the rounds' ratios). The tools alone take "
              f"{result.tool_cpu_s * 1000:.1f} ms of both; without them the ratio is "
              f"{result.ratio_without_tools:.2f}. Wall per request at 0 ms: harness "
              f"{result.harness_wall_s * 1000:.0f} ms, floor {result.floor_wall_s * 1000:.0f} ms"))
