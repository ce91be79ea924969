"""The harness test runner: each expectation kind passes and fails when it should, tests run
in a scratch tenant that leaves nothing behind, and activation is gated on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import opsgraph.harness
from opsgraph.evals.harness_tests import activate_checked, run_tests
from opsgraph.harness import versions
from opsgraph.store.scope import TenantScope
from tests.engine.test_approval_resume import update_turns
from tests.engine.test_supervisor import task
from tests.harness.test_run_steps import LOOKUP_EMILY, step

pytestmark = pytest.mark.usefixtures("demo_db")

STEPS = [
    step("guard", "guard", rules=[{"patterns": [r"\bcasino\b"], "action": "block",
                                   "text": "Spam is blocked."}]),
    step("route", "check", **{"if": {"var": "message", "matches": "^lookup"},
                              "then": "member", "else": "main"}),
    step("member", "tool", operation="members.get", args={"member": "Emily Chen"},
         save_as="m"),
    step("reply", "answer", text="{{m.data.name}} is a {{m.data.membership}} member"),
    step("main", "supervisor"),
]
ALL_KINDS = {"steps_ran": ["guard", "route", "member", "reply"], "steps_not_ran": ["main"],
             "contains": ["emily chen"], "absent": ["spam"], "regex": r"\bmember$",
             "max_model_calls": 0, "sources": 1, "tools_contains": ["members.get"]}


def doc_with(*tests: dict[str, Any]) -> dict[str, Any]:
    return {"steps": STEPS, "tests": list(tests)}


def report_of(scope: TenantScope, doc: dict[str, Any]) -> dict[str, Any]:
    number, _ = versions.save(scope, doc, actor="admin-1")
    return run_tests(scope, number, versions.load(scope, number))


def test_each_expectation_kind_passes_and_fails_when_it_should(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    report = report_of(scope, doc_with(
        {"name": "all hold", "message": "lookup Emily", "expect": ALL_KINDS},
        {"name": "all broken", "message": "casino lookup",
         "expect": {**ALL_KINDS, "steps_not_ran": ["guard"]}},
        {"name": "too many calls", "message": "What is Emily Chen's membership?",
         "script": LOOKUP_EMILY,
         "expect": {"max_model_calls": 1, "sources": 1, "tools_contains": ["members_get"],
                    "steps_ran": ["main"]}},
        {"name": "no script", "message": "What is Emily Chen's membership?"}))
    assert (report["version"], report["passed"], report["failed"]) == (1, 1, 3)
    assert report["model"] == "scripted"
    held, broken, calls, unscripted = report["results"]
    assert held["passed"] and held["failures"] == [] and held["model_calls"] == 0
    assert held["answer"].startswith("Emily Chen is a ")
    assert held["steps_ran"] == ["guard", "route", "member", "reply"]
    assert broken["answer"] == "Spam is blocked." and broken["steps_ran"] == ["guard"]
    assert broken["failures"] == [
        "steps_ran 'route': the step did not run", "steps_ran 'member': the step did not run",
        "steps_ran 'reply': the step did not run", "steps_not_ran 'guard': the step ran",
        "contains 'emily chen': not in the answer", "absent 'spam': in the answer",
        "regex '\\\\bmember$': no match in the answer", "sources 1: the answer has 0",
        "tools_contains 'members.get': not called (called: none)"]
    assert calls["failures"] == ["max_model_calls 1: the run made 3"]
    assert not unscripted["passed"]
    assert unscripted["failures"][0].startswith("the run needs a model and the test has no "
                                                "script")


def test_tests_leave_nothing_in_the_tenant_or_the_database(script: Any, demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    writes = {"plan": {"tasks": [task("t1", "members", "update", "Emily's phone")]},
              "turns": {"t1": [*update_turns("+44 7700 900321"), {"content": "ok"}]}}
    before = {name: demo_db[name].count_documents({})
              for name in demo_db.list_collection_names()}
    report = report_of(scope, doc_with(
        {"name": "a write waits for approval", "message": "change Emily Chen's phone",
         "script": writes, "expect": {"steps_ran": ["main"], "contains": ["approval"]}},
        {"name": "a lookup", "message": "lookup Emily", "expect": ALL_KINDS}))
    assert report["passed"] == 2, report
    after = {name: demo_db[name].count_documents({})
             for name in demo_db.list_collection_names()}
    # only the version itself was added; no thread, event, run, pending change or audit row
    changed = {name for name in after if after[name] != before.get(name, 0)}
    assert changed == {"harness_versions"}, {n: (before.get(n), after[n]) for n in changed}
    assert demo_db["tenants"].count_documents({"_id": {"$regex": "-test-"}}) == 0


def test_activation_is_refused_on_a_failing_test_unless_forced(demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    number, _ = versions.save(scope, doc_with(
        {"name": "fails", "message": "casino", "expect": {"contains": ["welcome"]}}),
        actor="admin-1")
    with pytest.raises(versions.TestsFailing, match="fails"):
        activate_checked(scope, number, actor="admin-1")
    assert versions.active(scope)[0] == 0
    kept = next(v for v in versions.list_versions(scope) if v["version"] == number)
    assert kept["last_test"]["failed"] == 1  # the report is kept though it was refused
    done = activate_checked(scope, number, actor="admin-1", force=True)
    assert versions.active(scope)[0] == number
    assert done["tests"]["failed"] == 1
    assert demo_db["audit"].count_documents({"tenant_id": "demo",
                                             "operation": "harness.activate"}) == 1


@pytest.mark.parametrize("example", ["classic_pipeline", "club_rules"])
def test_the_shipped_examples_pass_their_own_tests(example: str, demo_db: Any) -> None:
    path = Path(opsgraph.harness.__file__).with_name("examples") / f"{example}.json"
    report = report_of(TenantScope(demo_db, "demo"), json.loads(path.read_text()))
    assert report["failed"] == 0 and report["passed"] > 0, report["results"]


def test_a_scratch_tenant_a_crashed_run_left_is_dropped_by_the_next(demo_db: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from opsgraph.evals.harness_tests import scratch_tenant

    scope = TenantScope(demo_db, "demo")
    with scratch_tenant(scope) as left:
        demo_db["tenants"].update_one({"_id": left.tenant_id}, {"$set": {
            "scratch_until": datetime.now(UTC) - timedelta(seconds=1)}})
        with scratch_tenant(scope) as other:  # the next test run of the tenant
            assert demo_db["tenants"].find_one({"_id": left.tenant_id}) is None
            assert demo_db["members"].count_documents({"tenant_id": left.tenant_id}) == 0
            assert demo_db["members"].count_documents({"tenant_id": other.tenant_id}) > 0
