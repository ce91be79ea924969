"""The benchmark's smoke test: a tiny configuration of every case, and the report's shape.

No timing is asserted: numbers on a shared CI machine mean nothing. What a user would
notice is asserted: every case yields its rows, each row is complete, nothing errored,
and both outputs of `opsgraph bench` are what docs/reference.md promises.
"""

from __future__ import annotations

import json
import math
import time

import pytest

from opsgraph.bench import QUICK, Report, run_suite
from opsgraph.bench.report import format_json, format_table

CASES = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"}


@pytest.fixture(scope="module")
def report() -> Report:
    return run_suite(QUICK)


def test_every_case_reports_without_errors(report: Report) -> None:
    assert report.errors == []
    assert {row.case for row in report.rows} == CASES
    assert len(report.rows) >= 15
    assert [row.case for row in report.rows] == sorted(row.case for row in report.rows)


def test_rows_are_complete(report: Report) -> None:
    for row in report.rows:
        assert row.name and row.summary and row.target and row.measured
        assert all(math.isfinite(value) for value in row.measured.values()), row.name
        if row.limit is not None:
            assert row.ratio is not None and math.isfinite(row.ratio), row.name
            assert row.passed in (True, False)
        else:
            assert row.passed is None


def test_harness_and_floor_take_turns(report: Report) -> None:
    """Case 3 measures the harness and the asyncio floor in alternating rounds (one per
    request in the tiny configuration), so the machine's load falls on both sides."""
    row = next(r for r in report.rows if r.case == "3")
    assert (row.measured["requests"], row.measured["rounds"]) == (2, 2)
    assert row.ratio is not None and row.ratio > 0
    assert "taking turns in 2 rounds" in row.note


def test_dominant_costs_name_the_cost_centres(report: Report) -> None:
    text = "\n".join(report.dominant_costs)
    assert "by cost centre" in text and "tool calls" in text and "checkpoint writes" in text
    # found where their callers import them by name, and the request's embedding made ahead
    assert "ranking the request" in text and "system_prompt" in text and "embeddings" in text
    assert "not found" not in text


def test_a_centre_inside_another_counts_to_the_outer_one() -> None:
    from opsgraph.bench.profiling import CentreClock

    clock = CentreClock()

    def busy() -> None:
        end = time.thread_time() + 0.02
        while time.thread_time() < end:
            pass

    inner = clock.timed("inner", busy)
    outer = clock.timed("outer", lambda: (busy(), inner()))
    outer()
    inner()
    assert clock.cpu["outer"] >= 0.035 and 0.015 <= clock.cpu["inner"] < 0.035


def test_wall_phases_split_the_request_at_its_model_calls(report: Report) -> None:
    """Seven phases after the heading: three model calls and the four stretches around them,
    none negative (a phase that ran backwards would mean calls noted out of order)."""
    heading, *phases = report.wall_phases
    assert "by phase" in heading and len(phases) == 7
    assert sum("beside the call" in line for line in phases) == 3
    assert all(float(line.split()[0]) >= 0 for line in phases)
    # and the store commands sent in each phase: the run's start reads the tenant and takes
    # the thread's lease before the plan call; the tools read members after the last task's
    # call began; the end writes the run record and lets the lease go
    assert "store commands sent in each" in heading
    sent = [int(line.split("[")[1].split()[0]) for line in phases]
    assert sent[0] >= 4 and sent[-1] >= 3 and sum(sent[3:5]) >= 8


def test_store_commands_fall_in_the_phase_they_were_sent_in() -> None:
    from opsgraph.bench.phases import store_by_phase

    calls = {"structured": [(1.0, 1.2)], "invoke": [(1.25, 1.45), (1.3, 1.5)],
             "stream_text": [(1.6, 1.8)]}
    commands = [(0.95, 0.96, "find tenants"), (0.97, 0.99, "findAndModify thread_leases"),
                (1.1, 1.101, "insert thread_events"),  # during the plan call
                (1.51, 1.52, "find members"), (1.85, 1.9, "insert runs"),
                (1.95, 2.05, "delete thread_leases")]  # answered after the run's end
    used = store_by_phase(0.9, 1.0, calls, commands)
    assert [u.commands for u in used] == [2, 1, 0, 0, 1, 0, 2]
    assert [round(u.round_trips_s, 3) for u in used] == [0.03, 0.001, 0, 0, 0.01, 0, 0.15]


def test_a_run_split_into_phases_adds_up_to_its_wall_time() -> None:
    from opsgraph.bench.drive import BenchFailure
    from opsgraph.bench.phases import split_run

    calls = {"structured": [(1.0, 1.2)], "invoke": [(1.25, 1.45), (1.3, 1.5)],
             "stream_text": [(1.6, 1.8)]}
    split = split_run(0.9, 1.0, calls)
    assert [round(s, 3) for s in split] == [0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1]
    assert round(sum(split), 9) == 1.0
    with pytest.raises(BenchFailure, match="0 plan call"):
        split_run(0.9, 1.0, {**calls, "structured": []})


def test_json_output_is_one_object(report: Report) -> None:
    data = json.loads(format_json(report))
    assert set(data) >= {"rows", "dominant_costs", "wall_phases", "environment", "errors",
                         "elapsed_s"}
    row = data["rows"][0]
    assert set(row) >= {"case", "name", "measured", "target", "ratio", "passed"}


def test_table_lists_every_row(report: Report) -> None:
    table = format_table(report)
    assert table.splitlines()[0].split()[:2] == ["#", "measurement"]
    for row in report.rows:
        assert row.name in table


def test_a_run_that_does_not_run_its_scripts_plan_is_a_failure() -> None:
    """"Find these members" is one lookup planned by code: its one task is not the script's
    eight, so it must not be timed as the eight-task fan-out."""
    from opsgraph.bench.drive import BenchFailure, timed_run
    from opsgraph.bench.environment import bench_environment
    from opsgraph.bench.scripts import fanout_script

    with bench_environment() as env:
        spec = env.write_script("fanout", fanout_script(8, 0))
        fanned = timed_run(env, spec)  # the bench's own request: the script's eight tasks
        assert "plan" in fanned.marks and fanned.model_calls == 10  # plan, 8 tasks, answer
        with pytest.raises(BenchFailure, match="ran tasks \\['t1'\\], not the script's"):
            timed_run(env, spec, "Find these members")
