"""Harness versions on the real store: numbering, immutability, the activation gate,
rollback, the audit trail, and saves and activations that race."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from opsgraph import audit
from opsgraph.errors import Conflict, NotFound
from opsgraph.harness import versions
from opsgraph.harness.spec import BUILTIN, HarnessDoc, builtin_doc
from opsgraph.harness.validate import HarnessInvalid
from opsgraph.store.scope import TenantScope

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "opsgraph" / "harness" / "examples"
PASSED = {"passed": 2, "failed": 0, "results": [{"name": "a", "passed": True},
                                                 {"name": "b", "passed": True}],
          "model": "scripted"}
FAILED = {"passed": 1, "failed": 1, "results": [{"name": "a", "passed": True},
                                                 {"name": "spam is blocked", "passed": False}]}


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    return data


@pytest.fixture
def scope(db: Any) -> TenantScope:
    versions.ensure_indexes(db)
    return TenantScope(db, "demo")


def test_nothing_saved_the_builtin_is_active(scope: TenantScope) -> None:
    number, doc = versions.active(scope)
    assert number == 0 and [s.type for s in doc.steps] == ["supervisor"]
    rows = versions.list_versions(scope)
    assert [(r["version"], r["active"]) for r in rows] == [(0, True)]
    got = versions.get(scope)
    assert got["version"] == 0 and got["active"] and got["doc"]["steps"] == BUILTIN["steps"]


def test_the_builtin_document_is_the_builtin_validated() -> None:
    """`builtin_doc` is made without validation: it equals the validated constant, set
    fields and all (an `exclude_unset` dump is how a document is compared and saved)."""
    made, validated = builtin_doc(), HarnessDoc.model_validate(BUILTIN)
    assert made == validated
    assert made.model_fields_set == validated.model_fields_set
    assert [s.model_fields_set for s in made.steps] == [s.model_fields_set
                                                        for s in validated.steps]
    assert made.budget.model_fields_set == validated.budget.model_fields_set
    for options in ({}, {"exclude_unset": True}):
        assert made.model_dump(mode="json", by_alias=True, **options) == \
            validated.model_dump(mode="json", by_alias=True, **options)


def test_a_run_on_the_builtin_builds_no_harness_model() -> None:
    code = ("from opsgraph.harness import spec; doc = spec.builtin_doc(); "
            "print([c.__name__ for c in (spec.HarnessDoc, spec.Supervisor, spec.Budget) "
            "if c.__pydantic_complete__], doc.steps[0].message, doc.budget.steps)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["[]", "{{message}}", "20"]


def test_saves_are_numbered_from_one_and_immutable(scope: TenantScope) -> None:
    number, changes = versions.save(scope, example("club_rules"), actor="ann", note="rules")
    assert number == 1
    # the change list is from the active version (the built-in): main changed, the rest added
    assert ("added", "steps.guard") in [(c["op"], c["path"]) for c in changes]
    assert ("changed", "steps.main.final") in [(c["op"], c["path"]) for c in changes]
    number2, changes2 = versions.save(scope, example("classic_pipeline"), actor="bob")
    assert number2 == 2
    assert versions.active(scope)[0] == 0, "saving activates nothing"
    assert versions.load(scope, 1).steps[0].id == "guard"
    assert versions.load(scope, 2).steps[0].id == "filter"
    got = versions.get(scope, 1)
    assert (got["version"], got["active"], got["created_by"], got["note"]) == (1, False, "ann",
                                                                               "rules")
    assert got["doc"] == example("club_rules"), "the document as saved, nothing added"
    # version 1 was not activated: version 2's changes are from the built-in too
    assert {("added", "steps.filter"), ("changed", "steps.main.title")} <= {
        (c["op"], c["path"]) for c in changes2}


def test_an_invalid_document_is_not_stored(scope: TenantScope) -> None:
    bad = example("club_rules")
    bad["steps"][1]["then"] = "nowhere"
    with pytest.raises(HarnessInvalid) as caught:
        versions.save(scope, bad, actor="ann")
    assert caught.value.problems[0]["path"] == "steps[1].then"
    assert [r["version"] for r in versions.list_versions(scope)] == [0]


def test_a_missing_version_is_named(scope: TenantScope) -> None:
    with pytest.raises(NotFound, match="harness version 7 not found"):
        versions.load(scope, 7)
    with pytest.raises(NotFound, match="version 3"):
        versions.activate(scope, 3, actor="ann", report=PASSED)
    with pytest.raises(NotFound, match="version 4"):
        versions.get(scope, 4)


def test_tenants_do_not_see_each_other(scope: TenantScope, db: Any) -> None:
    versions.save(scope, example("club_rules"), actor="ann")
    versions.activate(scope, 1, actor="ann", report=PASSED)
    other = TenantScope(db, "acme")
    assert versions.active(other)[0] == 0
    assert [r["version"] for r in versions.list_versions(other)] == [0]
    assert versions.save(other, example("classic_pipeline"), actor="zed")[0] == 1
    assert versions.active(scope)[0] == 1


def test_failing_tests_refuse_activation_unless_forced(scope: TenantScope) -> None:
    versions.save(scope, example("club_rules"), actor="ann")
    with pytest.raises(Conflict) as caught:
        versions.activate(scope, 1, actor="ann", report=FAILED)
    assert caught.value.code == "tests_failing" and "spam is blocked" in caught.value.message
    assert versions.active(scope)[0] == 0
    assert audit.history(scope, versions.AUDIT_ID) == []

    done = versions.activate(scope, 1, actor="ann", report=FAILED, force=True)
    assert (done["version"], done["previous"], done["forced"]) == (1, 0, True)
    number, doc = versions.active(scope)
    assert number == 1 and doc.steps[0].id == "guard"
    [row] = audit.history(scope, versions.AUDIT_ID)
    assert (row["operation"], row["from"], row["to"], row["actor"]) == (
        "harness.activate", "0", "1", "ann")
    assert row["detail"]["forced"] is True and row["detail"]["failing"] == ["spam is blocked"]
    listed = versions.list_versions(scope)[1]
    assert listed["active"] and listed["activated_at"] is not None


def test_a_count_of_failures_without_results_still_refuses(scope: TenantScope) -> None:
    versions.save(scope, example("club_rules"), actor="ann")
    with pytest.raises(Conflict, match="2 test"):
        versions.activate(scope, 1, actor="ann", report={"passed": 0, "failed": 2})


def test_rollback_walks_back_to_the_builtin(scope: TenantScope) -> None:
    versions.save(scope, example("club_rules"), actor="ann")
    versions.save(scope, example("classic_pipeline"), actor="ann")
    versions.activate(scope, 1, actor="ann", report=PASSED)
    versions.activate(scope, 2, actor="bob", report=PASSED)
    assert versions.rollback(scope, actor="cat")["version"] == 1
    assert versions.active(scope)[1].steps[0].id == "guard"
    assert versions.rollback(scope, actor="cat")["version"] == 0
    assert versions.active(scope)[0] == 0
    with pytest.raises(Conflict, match="nothing to roll back"):
        versions.rollback(scope, actor="cat")
    trail = [(r["operation"], r["from"], r["to"]) for r in
             audit.history(scope, versions.AUDIT_ID)]
    assert trail == [("harness.activate", "0", "1"), ("harness.activate", "1", "2"),
                     ("harness.rollback", "2", "1"), ("harness.rollback", "1", "0")]
    # activating the built-in is allowed, and rolls back like any other
    versions.activate(scope, 2, actor="ann", report=PASSED)
    versions.activate(scope, 0, actor="ann", report={"passed": 0, "failed": 0})
    assert versions.active(scope)[0] == 0
    assert versions.rollback(scope, actor="ann")["version"] == 2


def test_activating_the_active_version_changes_nothing(scope: TenantScope) -> None:
    versions.save(scope, example("club_rules"), actor="ann")
    versions.activate(scope, 1, actor="ann", report=PASSED)
    again = versions.activate(scope, 1, actor="ann", report=PASSED)
    assert again["changed"] is False
    assert len(audit.history(scope, versions.AUDIT_ID)) == 1
    assert versions.rollback(scope, actor="ann")["version"] == 0


def test_record_test_keeps_the_report_beside_the_version(scope: TenantScope) -> None:
    versions.save(scope, example("club_rules"), actor="ann")
    before = versions.get(scope, 1)["doc"]
    kept = versions.record_test(scope, 1, {"passed": 3, "failed": 1, "model": "scripted"})
    assert (kept["passed"], kept["failed"], kept["model"]) == (3, 1, "scripted") and kept["at"]
    assert versions.get(scope, 1)["doc"] == before
    versions.record_test(scope, 0, {"passed": 0, "failed": 0, "model": "m"})
    rows = {r["version"]: r for r in versions.list_versions(scope)}
    assert rows[1]["last_test"]["passed"] == 3 and rows[0]["last_test"]["model"] == "m"
    with pytest.raises(NotFound):
        versions.record_test(scope, 9, PASSED)


def _race(n: int, work: Any) -> list[Any]:
    results: list[Any] = [None] * n
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except Exception as exc:  # a loser's error is the result we check
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_concurrent_saves_get_distinct_numbers(scope: TenantScope) -> None:
    doc = example("club_rules")
    results = _race(8, lambda i: versions.save(scope, doc, actor=f"u{i}")[0])
    assert sorted(results) == list(range(1, 9)), results


def test_concurrent_activations_all_land_and_roll_back_in_order(scope: TenantScope) -> None:
    for _ in range(6):
        versions.save(scope, example("club_rules"), actor="ann")
    results = _race(6, lambda i: versions.activate(scope, i + 1, actor=f"u{i}", report=PASSED))
    assert all(isinstance(r, dict) for r in results), results
    # each activation replaced the one before it: the previous versions chain 0 → … → last
    chain = {r["previous"]: r["version"] for r in results}
    order, at = [], 0
    while at in chain:
        at = chain[at]
        order.append(at)
    assert sorted(order) == [1, 2, 3, 4, 5, 6]
    assert versions.active(scope)[0] == order[-1]
    for expected in [*reversed(order[:-1]), 0]:
        assert versions.rollback(scope, actor="ann")["version"] == expected
