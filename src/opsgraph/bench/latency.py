"""Cases 1, 2 and 7: end to end ÷ critical path, and time to the first events.

The critical path is the plan call + the longest chain of model calls + synthesis, all at
the scripted latency. The process caps concurrent model calls (`OPSGRAPH_MODEL_CONCURRENCY`,
default 4), so eight two-call tasks need at least two waves at the default: case 1 runs at
the default cap and at 8, and the cap-4 row is judged against 1.05 × its slot floor.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from opsgraph.bench import phases
from opsgraph.bench.drive import (
    RunTiming,
    median_mark,
    median_wall,
    repeat,
    timed_async_run,
    timed_run,
)
from opsgraph.bench.environment import BenchEnv, model_concurrency
from opsgraph.bench.phases import StoreUse
from opsgraph.bench.report import Row
from opsgraph.bench.scripts import (
    critical_path_ms,
    fanout_script,
    skewed_script,
    slot_floor_ms,
    superstep_ms,
)
from opsgraph.models.limits import model_call_limit

TARGET = 1.05
WIDE_CAP = 8


@dataclass
class FanoutTimes:
    """The 8-task request's timings per model-call cap (reused by cases 4 and 7)."""

    latency_ms: int
    by_cap: dict[int, list[RunTiming]]
    async_entry: list[RunTiming]
    phases: list[list[float]]
    """The cap-8 runs, each split into its phases (`bench.phases`)."""
    store: list[StoreUse]
    """The store commands of each phase, in one more cap-8 run (`phases.listened_run`)."""


def _default_cap() -> int:
    return model_call_limit()


def measure_fanout(env: BenchEnv, latency_ms: int, runs: int) -> FanoutTimes:
    """Run the 8-task request `runs` times at the default cap and at cap 8."""
    spec = env.write_script(f"fanout-{latency_ms}ms", fanout_script(8, latency_ms))
    by_cap: dict[int, list[RunTiming]] = {}
    caps = sorted({_default_cap(), WIDE_CAP})
    split: list[list[float]] = []
    store: list[StoreUse] = []
    for cap in caps:
        with model_concurrency(cap):
            if cap == WIDE_CAP:
                timings, split = phases.timed_by_phase(runs, lambda: timed_run(env, spec))
                by_cap[cap] = sorted(timings, key=lambda t: t.wall_s)
                store = phases.listened_run(env.commands, lambda: timed_run(env, spec))
            else:
                by_cap[cap] = repeat(runs, lambda: timed_run(env, spec))
    with model_concurrency(WIDE_CAP):
        async_entry = repeat(runs, lambda: asyncio.run(timed_async_run(env, spec)))
    return FanoutTimes(latency_ms, by_cap, async_entry, split, store)


def wall_phases(times: FanoutTimes) -> list[str]:
    """Where the cap-8 runs' wall time went, by phase (the report's lines)."""
    return phases.phase_lines(times.phases, times.latency_ms, WIDE_CAP, times.store)


def fanout_rows(times: FanoutTimes) -> list[Row]:
    """Case 1: one row per model cap, and one for the async entry at cap 8."""
    script = fanout_script(8, times.latency_ms)
    path = critical_path_ms(script)
    rows = []
    for cap, timings in sorted(times.by_cap.items()):
        wall_ms = median_wall(timings) * 1000
        floor = slot_floor_ms(script, cap)
        default = " (the default OPSGRAPH_MODEL_CONCURRENCY)" if cap != WIDE_CAP else ""
        rows.append(Row(
            case="1", name=f"8 independent tasks, model cap {cap}",
            measured={"end_to_end_ms": round(wall_ms, 1), "critical_path_ms": path,
                      "cap_floor_ms": floor, "model_cap": cap,
                      "ratio_to_cap_floor": round(wall_ms / floor, 3)},
            summary=f"{wall_ms:.0f} ms vs path {path} ms (cap floor {floor:.0f} ms)",
            ratio=wall_ms / path, limit=TARGET * floor / path,
            target=f"≤ {TARGET} × floor = {TARGET * floor / path:.2f}",
            note=(f"cap {cap}{default}: {times.latency_ms} ms per call, median of "
                  f"{len(timings)}; the 8 tasks run in {-(-8 // cap)} wave(s) at best, so the "
                  f"floor is {floor / path:.2f} × the critical path")))
    wall_ms = median_wall(times.async_entry) * 1000
    rows.append(Row(
        case="1", name=f"8 independent tasks, model cap {WIDE_CAP}, async entry",
        measured={"end_to_end_ms": round(wall_ms, 1), "critical_path_ms": path},
        summary=f"{wall_ms:.0f} ms vs path {path} ms", ratio=wall_ms / path, limit=TARGET,
        target=f"≤ {TARGET}",
        note=(f"async entry: the run driven from an event loop as the HTTP API does "
              f"(starlette's run_in_threadpool / iterate_in_threadpool), median of "
              f"{len(times.async_entry)}")))
    return rows


def skewed_row(env: BenchEnv, latency_ms: int, runs: int) -> Row:
    """Case 2: one 3-turn task beside a 3-task chain of one-turn tasks."""
    script = skewed_script(latency_ms)
    spec = env.write_script(f"skewed-{latency_ms}ms", script)
    timings = repeat(runs, lambda: timed_run(env, spec, "Find Jane and order three members"))
    wall_ms = median_wall(timings) * 1000
    path, steps = critical_path_ms(script), superstep_ms(script)
    return Row(
        case="2", name="skewed DAG (3-turn task ‖ 3-task chain)",
        measured={"end_to_end_ms": round(wall_ms, 1), "critical_path_ms": path,
                  "superstep_floor_ms": steps},
        summary=f"{wall_ms:.0f} ms vs path {path} ms (supersteps: {steps} ms)",
        ratio=wall_ms / path, limit=TARGET, target=f"≤ {TARGET}",
        note=(f"{latency_ms} ms per call, median of {len(timings)}; a scheduler that waits for "
              f"the slowest task of each dependency level would need {steps / path:.2f} × "
              "the critical path"))


def first_event_rows(times: FanoutTimes) -> list[Row]:
    """Case 7: time to `run_started` and to `plan` (8-task request, widest cap)."""
    timings = times.by_cap[max(times.by_cap)]
    started_ms = median_mark(timings, "run_started") * 1000
    plan_ms = median_mark(timings, "plan") * 1000
    plan_call = times.latency_ms
    return [
        Row(case="7", name="time to first event (run_started)",
            measured={"run_started_ms": round(started_ms, 2)},
            summary=f"{started_ms:.1f} ms", ratio=None, target="— (reported)",
            note="from calling stream_run to the run_started event: context, tenant read "
                 "and thread lease"),
        Row(case="7", name="time to plan event",
            measured={"plan_ms": round(plan_ms, 1), "plan_call_ms": plan_call},
            summary=f"{plan_ms:.0f} ms ({plan_ms - plan_call:.0f} ms besides the plan call)",
            ratio=plan_ms / plan_call if plan_call else None, limit=TARGET,
            target=f"≤ {TARGET} × plan call (derived)"),
    ]
