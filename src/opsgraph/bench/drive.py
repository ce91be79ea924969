"""Drive one real request through `stream_run` and time its events.

A request that does not complete, any of whose tasks does not complete, or that does not run
the tasks its script plans, is an error: a fast failure, or a request planned some other way
(code plans a single lookup with no planner call), must never pass for a fast run.
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from starlette.concurrency import iterate_in_threadpool, run_in_threadpool

from opsgraph.bench.environment import BenchEnv
from opsgraph.engine.events import Event
from opsgraph.errors import OpsgraphError

_sequence = itertools.count(1)
REQUEST = "Find these members and tell me about each of them"
"""The bench's request: several people, so the planner plans it (a single lookup such as
"Find these members" is planned by code, with no planner call, as one task)."""


class BenchFailure(OpsgraphError):
    """A measurement could not be made (a run failed, a library is missing)."""

    code = "bench_failed"


@dataclass
class RunTiming:
    """One request: seconds to each first occurrence of an event, and in total."""

    wall_s: float
    marks: dict[str, float] = field(default_factory=dict)
    model_calls: int = 0
    tokens: int = 0
    """Input plus output tokens of the run's model calls (as the model reported them)."""
    started: float = 0.0
    """`time.perf_counter()` when the run was asked for (its marks count from there)."""


def request_text(label: str) -> str:
    """A request message that differs on every call (so no cache answers for it)."""
    n = next(_sequence)
    return f"{label} (bench request {n})"


class _Recorder:
    """Marks each first event, collects failures, checks the run completed."""

    def __init__(self, thread_id: str, spec: str) -> None:
        self.thread_id, self.spec = thread_id, spec
        self.planned = planned_tasks(spec)
        self.started: set[str] = set()
        self.start = time.perf_counter()
        self.marks: dict[str, float] = {}
        self.failed: list[str] = []
        self.finished: dict[str, object] = {}

    def see(self, event: Event) -> None:
        """Note one event of the run."""
        self.marks.setdefault(event.event, time.perf_counter() - self.start)
        if event.event == "task_started":
            self.started.add(str(event.data.get("task_id")))
        elif event.event == "task_finished" and event.data.get("status") != "completed":
            self.failed.append(f"{event.data.get('task_id')}: {event.data.get('status')}")
        elif event.event == "error":
            self.failed.append(str(event.data.get("message")))
        elif event.event == "run_finished":
            self.finished = event.data

    def timing(self) -> RunTiming:
        """The run's timing; BenchFailure unless it and every task completed."""
        wall = time.perf_counter() - self.start
        if self.finished.get("status") != "completed" or self.failed:
            raise BenchFailure(f"run {self.thread_id} with {self.spec} did not complete: "
                               f"{self.finished.get('status')}; "
                               f"{'; '.join(self.failed) or 'no detail'}")
        if self.started != self.planned:
            raise BenchFailure(f"run {self.thread_id} with {self.spec} ran tasks "
                               f"{sorted(self.started)}, not the script's {sorted(self.planned)}")
        usage = self.finished.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return RunTiming(wall, self.marks, int(usage.get("model_calls", 0)),
                         int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0)),
                         self.start)


def planned_tasks(spec: str) -> set[str]:
    """The task ids of a `scripted:` spec's plan."""
    script = json.loads(Path(spec.removeprefix("scripted:")).read_text(encoding="utf-8"))
    return {str(task["id"]) for task in script["plan"]["tasks"]}


def _start(env: BenchEnv, spec: str, label: str) -> tuple[_Recorder, Iterator[Event]]:
    from opsgraph.engine.runner import stream_run  # heavy: langgraph (cold start)

    thread_id = f"bench-{next(_sequence)}"
    recorder = _Recorder(thread_id, spec)
    return recorder, stream_run(env.principal, request_text(label), thread_id=thread_id,
                                model=spec)


def timed_run(env: BenchEnv, spec: str, label: str = REQUEST) -> RunTiming:
    """Run one request on a new thread; raise BenchFailure unless it and its tasks complete."""
    recorder, events = _start(env, spec, label)
    for event in events:
        recorder.see(event)
    return recorder.timing()


async def timed_async_run(env: BenchEnv, spec: str,
                          label: str = REQUEST) -> RunTiming:
    """`timed_run` from an event loop, driven as the HTTP API drives it (a thread per step)."""
    recorder, events = _start(env, spec, label)
    recorder.see(await run_in_threadpool(next, events))
    async for event in iterate_in_threadpool(events):
        recorder.see(event)
    return recorder.timing()


def repeat(runs: int, once: Callable[[], RunTiming]) -> list[RunTiming]:
    """Run `once` `runs` times; the timings, fastest first."""
    return sorted((once() for _ in range(runs)), key=lambda t: t.wall_s)


def median_wall(timings: list[RunTiming]) -> float:
    """The median wall time in seconds."""
    return median([t.wall_s for t in timings])


def median_mark(timings: list[RunTiming], event: str) -> float:
    """The median time in seconds to the first `event`."""
    return median([t.marks[event] for t in timings if event in t.marks])


def median(values: list[float]) -> float:
    """The median (0.0 for no values)."""
    return statistics.median(values) if values else 0.0


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (0.0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]
