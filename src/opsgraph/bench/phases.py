"""Where the 8-task request's wall time goes, phase by phase (case 1 at cap 8).

Case 1 says how far the request is from its critical path (plan call, one task's call,
synthesis); this says where the difference lies, in the same runs (those at cap 8). For
those runs only, the engine's three model-call entries (`engine.model_calls.structured`,
`.invoke`, `.stream_text`) are wrapped (in this process, restored afterwards) to note when
each call begins and ends: a clock read and a lock per call, ~10 of them a run. A run splits
at those moments into the time before the plan call, the three calls (each beside the
script's latency) and the time between them. The phases do not overlap and add up to the
run's wall time; the report gives each one's median over the runs.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from opsgraph.bench.drive import BenchFailure, RunTiming
from opsgraph.bench.environment import CommandCounter
from opsgraph.bench.profiling import patched


@dataclass
class CallClock:
    """When each model call of the runs began and ended (`time.perf_counter()`), by entry."""

    calls: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, entry: str, began: float) -> None:
        """A call through `entry` that began at `began` has just ended."""
        with self._lock:
            self.calls.setdefault(entry, []).append((began, time.perf_counter()))

    def timed(self, entry: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, noting its calls."""
        def call(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.note(entry, began)
        return call

    def timed_stream(self, entry: str, fn: Callable[..., Iterator[Any]]
                     ) -> Callable[..., Iterator[Any]]:
        """A generator function, noting each stream from its first step to its last."""
        def call(*args: Any, **kwargs: Any) -> Iterator[Any]:
            began = time.perf_counter()
            try:
                yield from fn(*args, **kwargs)
            finally:
                self.note(entry, began)
        return call

    def take(self) -> dict[str, list[tuple[float, float]]]:
        """The calls noted so far (and forget them)."""
        with self._lock:
            taken, self.calls = self.calls, {}
        return taken


@contextmanager
def clocked_model_calls(clock: CallClock) -> Iterator[None]:
    """The engine's model-call entries noted on `clock` for the block."""
    from opsgraph.engine import model_calls  # heavy: langgraph (cold start)

    with ExitStack() as stack:
        for entry in ("structured", "invoke"):
            stack.enter_context(patched(model_calls, entry,
                                        clock.timed(entry, getattr(model_calls, entry))))
        stack.enter_context(patched(model_calls, "stream_text", clock.timed_stream(
            "stream_text", model_calls.stream_text)))
        yield


PHASES = (
    ("before the plan call", False),
    ("the plan call", True),
    ("plan call → the last task's call starts (launching the tasks)", False),
    ("the last task's call", True),
    ("its end → synthesis starts (the tasks' tools and results)", False),
    ("synthesis", True),
    ("after synthesis (answer, checkpoint, run record, run_finished, lease)", False),
)
"""Each phase, and whether it is a model call (on the critical path at the latency)."""


def _marks(start: float, wall_s: float, calls: dict[str, list[tuple[float, float]]]
           ) -> list[float]:
    """Where one run's phases begin, and its end (`time.perf_counter()`)."""
    plans, tasks, syntheses = (calls.get(k, []) for k in ("structured", "invoke",
                                                          "stream_text"))
    if len(plans) != 1 or not tasks or len(syntheses) != 1:
        raise BenchFailure(f"a timed run made {len(plans)} plan call(s), {len(tasks)} task "
                           f"call(s) and {len(syntheses)} synthesis call(s), not one plan "
                           "call, task calls and one synthesis")
    (plan_start, plan_end), (synth_start, synth_end) = plans[0], syntheses[0]
    last = max(tasks, key=lambda call: call[1])
    return [start, plan_start, plan_end, last[0], last[1], synth_start, synth_end,
            start + wall_s]


def split_run(start: float, wall_s: float, calls: dict[str, list[tuple[float, float]]]
              ) -> list[float]:
    """One run's phases (seconds, in `PHASES` order) from its start, wall time and calls."""
    return [after - before for before, after in
            itertools.pairwise(_marks(start, wall_s, calls))]


@dataclass
class StoreUse:
    """The store commands sent in one phase of a run: how many, and their round trips."""

    commands: int = 0
    round_trips_s: float = 0.0
    """The commands' round trips added up (those of other threads may overlap)."""


def store_by_phase(start: float, wall_s: float, calls: dict[str, list[tuple[float, float]]],
                   commands: list[tuple[float, float, str]]) -> list[StoreUse]:
    """Each phase's store commands (`CommandCounter.timeline`), by when each was sent."""
    marks = _marks(start, wall_s, calls)
    used = [StoreUse() for _ in PHASES]
    for sent, answered, _ in commands:
        phase = min(max(bisect.bisect_right(marks, sent) - 1, 0), len(PHASES) - 1)
        used[phase].commands += 1
        used[phase].round_trips_s += answered - sent
    return used


def listened_run(commands: CommandCounter, once: Callable[[], RunTiming]) -> list[StoreUse]:
    """Run `once` with its store commands listened to: each phase's commands. A listener
    makes pymongo publish an event per command, CPU the timed runs must not pay, so this is
    a run of its own."""
    clock = CallClock()
    with clocked_model_calls(clock), commands.counting():
        timing = once()
        timeline = list(commands.timeline)
    return store_by_phase(timing.started, timing.wall_s, clock.take(), timeline)


def timed_by_phase(runs: int, once: Callable[[], RunTiming]
                   ) -> tuple[list[RunTiming], list[list[float]]]:
    """Run `once` `runs` times with its model calls noted: the timings, and each run split
    into its phases."""
    clock = CallClock()
    timings: list[RunTiming] = []
    split: list[list[float]] = []
    with clocked_model_calls(clock):
        for _ in range(runs):
            clock.take()
            timing = once()
            timings.append(timing)
            split.append(split_run(timing.started, timing.wall_s, clock.take()))
    return timings, split


def phase_lines(split: list[list[float]], latency_ms: int, cap: int,
                store: list[StoreUse]) -> list[str]:
    """The report's lines: each phase's median, how much of it is overhead, and (`store`,
    from a run of its own) the store commands sent in it."""
    medians = [statistics.median(run[i] for run in split) * 1000 for i in range(len(PHASES))]
    wall = statistics.median(sum(run) for run in split) * 1000
    path = latency_ms * sum(call for _, call in PHASES)
    lines = [f"{wall:.0f} ms per 8-task request at cap {cap} ({len(split)} runs, "
             f"{latency_ms} ms per call; critical path {path} ms), by phase (medians); store "
             "commands sent in each, from one more run with them listened to:"]
    for (label, is_call), ms, used in zip(PHASES, medians, store, strict=True):
        over = ms - latency_ms if is_call else ms
        lines.append(f"{ms:7.1f} ms  {label}"
                     + (f" ({over:+.1f} ms beside the call)" if is_call else "")
                     + f" [{used.commands} store command(s), round trips "
                       f"{used.round_trips_s * 1000:.1f} ms in all]")
    return lines
