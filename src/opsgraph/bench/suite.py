"""The whole bench, measured side by side in one process and one store.

Order matters only for warm-up: the first request pays for the ranker's model, the agent
vectors and the compiled graph, so one untimed request runs before any case. A case that
fails is reported as an error and the others still run; cases that reuse its measurements
are skipped with it.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, TypeVar

from opsgraph.bench import (
    burst,
    coldstart,
    commits,
    imports,
    latency,
    overhead,
    profiling,
    ranking,
    resolving,
    scale,
    stored_events,
)
from opsgraph.bench.drive import timed_run
from opsgraph.bench.environment import BenchEnv, bench_environment
from opsgraph.bench.report import Report, Row, format_json, format_table
from opsgraph.bench.scripts import fanout_script

T = TypeVar("T")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BenchConfig:
    """How much of each measurement to make (the defaults are the real bench)."""

    latency_ms: int = 200
    runs: int = 5
    supervisor_runs: int = 2
    cpu_requests: int = 20
    profile_requests: int = 10
    burst_size: int = 50
    burst_latency_ms: int = 50
    ranker_requests: int = 50
    import_repeats: int = 3
    scale: float = 0.1  # of the large tenant (store.seed.LARGE); OPSGRAPH_BENCH_SCALE overrides
    scale_repeats: int = 15
    resolver_repeats: int = 5


QUICK = BenchConfig(latency_ms=20, runs=1, supervisor_runs=1, cpu_requests=2,
                    profile_requests=1, burst_size=4, burst_latency_ms=5, ranker_requests=5,
                    import_repeats=1, scale=0.005, scale_repeats=1,
                    resolver_repeats=1)
"""A tiny configuration with every case in it (the smoke test)."""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _load() -> str:
    try:
        return " ".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def environment() -> dict[str, Any]:
    """Where the numbers were measured (load average: other work on the machine)."""
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "load_start": _load(),
            "platform": platform.platform(terse=True),
            "langgraph": _version("langgraph"),
            "langgraph-supervisor": _version("langgraph-supervisor")}


class _Run:
    """One suite run: the report being filled and the progress callback."""

    def __init__(self, report: Report, progress: Progress) -> None:
        self.report = report
        self.progress = progress

    def attempt(self, label: str, measure: Callable[[], T]) -> T | None:
        """Run one measurement; on failure record the error and return None."""
        self.progress(label)
        try:
            return measure()
        except Exception as exc:  # every case is reported, whatever fails
            self.report.errors.append(f"{label}: {type(exc).__name__}: {exc}")
            return None

    def rows(self, label: str, measure: Callable[[], list[Row]]) -> None:
        """Run a measurement that yields rows and keep them."""
        self.report.rows.extend(self.attempt(label, measure) or [])


def _profile(env: BenchEnv, requests: int) -> list[str]:
    spec = env.write_script("profile-0ms", fanout_script(8, 0))
    timed_run(env, spec)

    def requests_in_a_row() -> None:
        for _ in range(requests):
            timed_run(env, spec)

    return profiling.dominant_costs(requests_in_a_row, requests)


def _store_cases(run: _Run, env: BenchEnv, config: BenchConfig) -> None:
    from opsgraph.bench import prebuilt_supervisor  # heavy: langchain_core (cold start)

    run.attempt("warm-up", lambda: timed_run(env, env.write_script("warm", fanout_script(8, 0))))
    fanout = run.attempt("case 1: 8 independent tasks",
                         lambda: latency.measure_fanout(env, config.latency_ms, config.runs))
    if fanout is not None:
        run.report.rows += latency.fanout_rows(fanout) + latency.first_event_rows(fanout)
        run.report.wall_phases = latency.wall_phases(fanout)
    run.rows("case 2: skewed DAG", lambda: [latency.skewed_row(env, config.latency_ms,
                                                                 config.runs)])
    cpu = run.attempt("case 3: harness CPU", lambda: overhead.measure_cpu(env,
                                                                          config.cpu_requests))
    if cpu is not None:
        run.report.rows.append(overhead.cpu_row(cpu))
    run.report.dominant_costs = run.attempt(
        "case 3: profile", lambda: _profile(env, config.profile_requests)) or []
    run.rows("case 5: checkpoint commits", lambda: [commits.commit_row(env)])
    if fanout is not None and cpu is not None:
        run.rows("case 4: langgraph-supervisor", lambda: prebuilt_supervisor.supervisor_rows(
            env, fanout, cpu, config.supervisor_runs, config.cpu_requests))
    run.rows("case 6: concurrent burst",
             lambda: burst.burst_rows(env, config.burst_size, config.burst_latency_ms))
    run.rows("case 8: ranker", lambda: [ranking.ranker_row(config.ranker_requests)])
    run.rows("case 9: cold start", lambda: coldstart.coldstart_rows(env, config.import_repeats))
    run.rows("case 10: large tenant", lambda: scale.scale_rows(env, config.scale,
                                                               config.scale_repeats))
    run.rows("case 11: resolver", lambda: resolving.resolver_rows(env, config.resolver_repeats))
    run.rows("case 12: stored events", lambda: [stored_events.stored_events_row(env)])


def run_suite(config: BenchConfig = BenchConfig(), progress: Progress | None = None) -> Report:
    """Every case; rows sorted by case. Errors are in `report.errors`, never raised."""
    report = Report(environment=environment())
    run = _Run(report, progress or (lambda _: None))
    start = time.perf_counter()
    try:
        with bench_environment() as env:
            _store_cases(run, env, config)
    except Exception as exc:  # the store could not start: nothing else can run
        report.errors.append(f"environment: {type(exc).__name__}: {exc}")
    run.rows("case 9: cold imports", lambda: imports.import_rows(config.import_repeats))
    report.rows.sort(key=lambda row: row.case)
    report.environment["load_end"] = _load()
    report.elapsed_s = time.perf_counter() - start
    return report


def run_bench(json_output: bool, config: BenchConfig = BenchConfig()) -> int:
    """`opsgraph bench [--json]`: print the report; 0 unless a measurement failed."""
    def progress(label: str) -> None:
        if not json_output:
            print(f"… {label}", file=sys.stderr, flush=True)

    report = run_suite(config, progress)
    print(format_json(report) if json_output else format_table(report))
    return 1 if report.errors else 0
