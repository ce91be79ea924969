"""Drive one real request through `stream_run` and time its events.

A request that does not complete, or any of whose tasks does not complete, is an error:
a fast failure must never pass for a fast run.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from opsgraph.bench.environment import BenchEnv
from opsgraph.errors import OpsgraphError

_sequence = itertools.count(1)


class BenchFailure(OpsgraphError):
    """A measurement could not be made (a run failed, a library is missing)."""

    code = "bench_failed"


@dataclass
class RunTiming:
    """One request: seconds to each first occurrence of an event, and in total."""

    wall_s: float
    marks: dict[str, float] = field(default_factory=dict)
    model_calls: int = 0


def request_text(label: str) -> str:
    """A request message that differs on every call (so no cache answers for it)."""
    n = next(_sequence)
    return f"{label} (bench request {n})"


def timed_run(env: BenchEnv, spec: str, label: str = "Find these members") -> RunTiming:
    """Run one request on a new thread; raise BenchFailure unless it and its tasks complete."""
    from opsgraph.engine.runner import stream_run

    thread_id = f"bench-{next(_sequence)}"
    start = time.perf_counter()
    marks: dict[str, float] = {}
    finished: dict[str, object] = {}
    failed: list[str] = []
    for event in stream_run(env.principal, request_text(label), thread_id=thread_id,
                            model=spec):
        marks.setdefault(event.event, time.perf_counter() - start)
        if event.event == "task_finished" and event.data.get("status") != "completed":
            failed.append(f"{event.data.get('task_id')}: {event.data.get('status')}")
        elif event.event == "error":
            failed.append(str(event.data.get("message")))
        elif event.event == "run_finished":
            finished = event.data
    wall = time.perf_counter() - start
    if finished.get("status") != "completed" or failed:
        raise BenchFailure(f"run {thread_id} with {spec} did not complete: "
                           f"{finished.get('status')}; {'; '.join(failed) or 'no detail'}")
    usage = finished.get("usage")
    calls = int(usage.get("model_calls", 0)) if isinstance(usage, dict) else 0
    return RunTiming(wall, marks, calls)


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
