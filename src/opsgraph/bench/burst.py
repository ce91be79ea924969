"""Case 6: many concurrent requests — throughput, latency percentiles, memory per conversation.

Each request runs in its own thread on its own thread id, all released together. The
burst runs twice: once plain for throughput and latency, once under tracemalloc (which
slows Python down) for the peak memory, divided by the number of conversations. The model
cap bounds throughput: each request holds a model slot for calls × latency, so
cap ÷ (calls × latency) requests per second is the ceiling. The slots serve runs in the
order they started (`opsgraph.models.limits`), so the median request finishes well before
the burst does; a request that had to wait for a slot saw a `progress` event, counted here.
"""

from __future__ import annotations

import threading
import time
import tracemalloc
from dataclasses import dataclass

from opsgraph.bench.drive import BenchFailure, percentile, timed_run
from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row
from opsgraph.bench.scripts import fanout_script, model_calls
from opsgraph.models.limits import model_call_limit

MEMORY_TARGET_KB = 300.0
BURST_TASKS = 2


@dataclass
class Burst:
    """One burst: per-request latencies and the wall time of the whole burst."""

    latencies_s: list[float]
    wall_s: float
    waited: int = 0
    """Requests that saw a `progress` event (one of their model calls queued for a slot)."""


def run_burst(env: BenchEnv, spec: str, size: int) -> Burst:
    """`size` requests in `size` threads, released together; raises if any failed."""
    gate = threading.Barrier(size + 1)
    latencies: list[float] = []
    waited: list[bool] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        gate.wait()
        try:
            timing = timed_run(env, spec)
        except Exception as exc:  # reported below: the burst must not hide a failure
            with lock:
                errors.append(f"{type(exc).__name__}: {exc}")
            return
        with lock:
            latencies.append(timing.wall_s)
            waited.append("progress" in timing.marks)

    threads = [threading.Thread(target=one, name=f"bench-burst-{i}") for i in range(size)]
    for thread in threads:
        thread.start()
    gate.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    if errors:
        raise BenchFailure(f"{len(errors)} of {size} burst requests failed; first: {errors[0]}")
    return Burst(latencies, wall, waited=sum(waited))


def peak_memory_per_request(env: BenchEnv, spec: str, size: int) -> float:
    """Bytes: tracemalloc's peak during a burst, over the burst size."""
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        run_burst(env, spec, size)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - base) / size


def burst_rows(env: BenchEnv, size: int, latency_ms: int) -> list[Row]:
    """Throughput and latency of a burst, and peak memory per conversation."""
    script = fanout_script(BURST_TASKS, latency_ms)
    spec = env.write_script(f"burst-{latency_ms}ms", script)
    single = timed_run(env, spec).wall_s
    burst = run_burst(env, spec, size)
    memory_kb = peak_memory_per_request(env, spec, size) / 1024
    calls, cap = model_calls(script), model_call_limit()
    ceiling = cap / (calls * latency_ms / 1000) if latency_ms else float("inf")
    throughput = size / burst.wall_s
    p50, p95 = percentile(burst.latencies_s, 0.5), percentile(burst.latencies_s, 0.95)
    shape = (f"{size} threads, {BURST_TASKS}-task request ({calls} model calls at {latency_ms} ms)"
             f", model cap {cap}")
    return [
        Row(case="6", name=f"{size} concurrent requests: throughput",
            measured={"requests_per_s": round(throughput, 2), "cap_ceiling_per_s":
                      round(ceiling, 2), "wall_s": round(burst.wall_s, 3)},
            summary=f"{throughput:.1f} req/s (model-cap ceiling {ceiling:.1f})",
            ratio=throughput / ceiling, target="— (ratio to ceiling)", higher_is_better=True,
            note=f"{shape}; the ceiling is cap ÷ (calls × latency)"),
        Row(case="6", name=f"{size} concurrent requests: latency",
            measured={"p50_ms": round(p50 * 1000, 1), "p95_ms": round(p95 * 1000, 1),
                      "single_ms": round(single * 1000, 1), "waited_for_a_slot": burst.waited},
            summary=f"p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (alone {single * 1000:.0f})",
            ratio=None, target="— (reported)",
            note=f"{burst.waited} of {size} requests waited for a model slot (a progress "
                 "event); slots go to runs in start order"),
        Row(case="6", name="peak memory per conversation",
            measured={"peak_kb_per_conversation": round(memory_kb, 1)},
            summary=f"{memory_kb:.0f} KB", ratio=memory_kb / MEMORY_TARGET_KB, limit=1.0,
            target=f"≤ {MEMORY_TARGET_KB:.0f} KB",
            note=f"tracemalloc peak during a second burst of {size} ÷ {size}"),
    ]
