"""The shipped examples run on the engine and pass their own tests with the scripted model:
the classic pipeline (filter → route → retrieve → answer) and the club's rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opsgraph.evals.harness_tests import run_tests
from opsgraph.harness import versions
from opsgraph.store.scope import TenantScope

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "opsgraph" / "harness" / "examples"


@pytest.mark.parametrize("name", ["classic_pipeline", "club_rules"])
def test_an_example_passes_its_tests(name: str, demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    versions.ensure_indexes(demo_db)
    number, _ = versions.save(scope, json.loads((EXAMPLES / f"{name}.json").read_text()),
                              actor="ann")
    report = run_tests(scope, number, versions.load(scope, number))
    failures = {r["name"]: r["failures"] for r in report["results"] if not r["passed"]}
    assert failures == {} and report["passed"] == len(versions.load(scope, number).tests)
