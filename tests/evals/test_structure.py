"""plan_valid, routing and dependencies: each passes a good plan and catches a seeded fault."""

from __future__ import annotations

from opsgraph.evals.structure import dependencies, plan_valid, routing
from tests.evals.builders import fails, make_case, make_run, passes, task

UPDATE = [{"domain": "members", "verb": "update"}]


def test_plan_valid_passes_a_plan_and_fails_an_invalid_one() -> None:
    case = make_case()
    assert passes(plan_valid(case, make_run(plan=[task("t1", "members", "update")])))
    assert passes(plan_valid(case, make_run(plan=[])))  # small talk plans nothing
    invalid = make_run(errors=[{"code": "invalid_plan", "message": "unknown domain 'x'"}])
    assert fails(plan_valid(case, invalid), "invalid_plan: unknown domain 'x'")
    crashed = make_run(errors=[{"code": "internal", "message": "boom"}])
    assert fails(plan_valid(case, crashed), "no plan", "internal: boom")


def test_plan_valid_fails_an_errored_case() -> None:
    run = make_run(plan=[task("t1", "members", "update")])
    run.exception = "NotFound: tenant 'x' not found"
    assert fails(plan_valid(make_case(), run), "the case errored: NotFound")


def test_routing_passes_the_right_route_and_a_verb_from_the_list() -> None:
    assert passes(routing(make_case(tasks=UPDATE),
                          make_run(plan=[task("t1", "members", "update")])))
    either = make_case(tasks=[{"domain": "members", "verb": ["get", "search"]}])
    assert passes(routing(either, make_run(plan=[task("t1", "members", "search")])))


def test_routing_catches_a_wrong_route() -> None:
    wrong = make_run(plan=[task("t1", "bookings", "update")])
    assert fails(routing(make_case(tasks=UPDATE), wrong),
                 "expected members.update; planned bookings.update")


def test_routing_catches_an_unasked_write_and_too_many_extras() -> None:
    case = make_case(tasks=UPDATE)
    one_read = make_run(plan=[task("t1", "members", "update"), task("t2", "members", "get")])
    assert passes(routing(case, one_read))  # one extra read is fine
    write = make_run(plan=[task("t1", "members", "update"), task("t2", "bookings", "cancel")])
    assert fails(routing(case, write), "unasked write bookings.cancel")
    two_reads = make_run(plan=[task("t1", "members", "update"), task("t2", "members", "get"),
                               task("t3", "bookings", "list")])
    assert fails(routing(case, two_reads), "2 extra tasks")


def test_routing_needs_a_task_per_expected_task_and_skips_cases_without_tasks() -> None:
    once = make_run(plan=[task("t1", "members", "update")])
    assert fails(routing(make_case(tasks=UPDATE * 2), once), "one task for each")
    assert routing(make_case(), once) is None
    assert fails(routing(make_case(tasks=UPDATE), make_run()), "no plan")


def test_dependencies_pass_the_expected_edge_even_through_an_extra_task() -> None:
    case = make_case(tasks=[{"domain": "members", "verb": "get"},
                            {"domain": "communications", "verb": "send"}], depends=[[1, 0]])
    direct = make_run(plan=[task("t1", "members", "get"),
                            task("t2", "communications", "send", ["t1"])])
    assert passes(dependencies(case, direct))
    through = make_run(plan=[task("t1", "members", "get"),
                             task("t2", "knowledge", "search", ["t1"]),
                             task("t3", "communications", "send", ["t2"])])
    assert passes(dependencies(case, through))


def test_dependencies_catch_a_missing_dependency_and_an_unexpected_one() -> None:
    chained = make_case(tasks=[{"domain": "members", "verb": "get"},
                               {"domain": "communications", "verb": "send"}], depends=[[1, 0]])
    parallel = make_run(plan=[task("t1", "members", "get"),
                              task("t2", "communications", "send")])
    assert fails(dependencies(chained, parallel), "missing edge 1→0 (task 1 after task 0)")
    independent = make_case(tasks=[{"domain": "members", "verb": "get"},
                                   {"domain": "knowledge", "verb": "search"}], depends=[])
    serial = make_run(plan=[task("t1", "members", "get"),
                            task("t2", "knowledge", "search", ["t1"])])
    assert fails(dependencies(independent, serial), "unexpected edge 1→0")


def test_dependencies_try_each_way_to_match_twin_tasks() -> None:
    # Two member lookups; the plan numbers them the other way round.
    case = make_case(tasks=[{"domain": "members", "verb": "get"},
                            {"domain": "members", "verb": "get"}], depends=[[1, 0]])
    run = make_run(plan=[task("t1", "members", "get", ["t2"]), task("t2", "members", "get")])
    assert passes(dependencies(case, run))
    assert dependencies(make_case(tasks=UPDATE), run) is None  # no `depends`: not scored
