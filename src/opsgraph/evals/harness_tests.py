"""The harness test runner: a version's tests, run on the real engine, away from the tenant.

Each test of a version is a message with its sender (role, user) and expectations of eight
kinds: `steps_ran`, `steps_not_ran`, `contains`, `absent`, `regex`, `max_model_calls`,
`sources`, `tools_contains`. It runs through `stream_run` with that version given
explicitly (so a version that is not active can be tested), on the dashboard channel, with
the scripted model its `script` describes — or with `model` for every test.

Nothing a test does reaches the tenant's data: the tests run in a scratch tenant of the
same database, seeded like the demo club, with the tenant's settings and its knowledge
documents, and dropped afterwards with every thread, checkpoint, pending change and audit
row the runs wrote (one that a crashed process left is dropped by the tenant's next test
run). The process-wide database is never swapped (a serving process's other requests go on
untouched), unlike `evals.sandbox`, which is for the command-line evals.
"""

from __future__ import annotations

import json
import re
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from opsgraph.engine.events import Event
from opsgraph.engine.thread_log import RUNS
from opsgraph.harness import patterns, versions
from opsgraph.harness.spec import HarnessDoc, HarnessTest
from opsgraph.models.spec import parse_model_spec
from opsgraph.principal import Channel, Principal
from opsgraph.store.client import get_db
from opsgraph.store.scope import Document, TenantScope
from opsgraph.store.seed import seed

SETTINGS = ("name", "plan", "capability_mode", "timezone", "off_topic_reply", "modules")
"""The tenant settings a scratch tenant copies (the rest is the demo club's)."""
CHECKPOINTS = ("checkpoints", "checkpoint_writes")
SCRATCH = "-test-"
SCRATCH_LIFE = timedelta(hours=1)
"""A scratch tenant still there this long after it was made was left by a process that
died mid-test: the next test run of its tenant drops it."""


@contextmanager
def scratch_tenant(scope: TenantScope) -> Iterator[TenantScope]:
    """A tenant seeded like the demo club with `scope`'s settings and knowledge documents,
    in the process's database; dropped, with all the runs wrote, when the block ends."""
    db = get_db()
    prefix = f"{scope.tenant_id}{SCRATCH}"
    for stale in db["tenants"].find({"_id": {"$regex": f"^{re.escape(prefix)}"},
                                     "scratch_until": {"$lt": datetime.now(UTC)}}):
        drop_tenant(TenantScope(db, str(stale["_id"])))  # left by a process that died
    scratch = TenantScope(db, f"{prefix}{uuid.uuid4().hex[:10]}")
    try:
        seed(db, scratch.tenant_id)
        tenant = scope.tenant() or {}
        settings = {k: tenant[k] for k in SETTINGS if k in tenant}
        db["tenants"].update_one({"_id": scratch.tenant_id}, {"$set": {
            **settings, "scratch_until": datetime.now(UTC) + SCRATCH_LIFE}})
        documents = [{**doc, "_id": f"kb_{scratch.tenant_id}_{doc['slug']}",
                      "tenant_id": scratch.tenant_id} for doc in scope["knowledge"].find({})]
        if documents:
            db["knowledge"].delete_many({"tenant_id": scratch.tenant_id})
            db["knowledge"].insert_many(documents)
        yield scratch
    finally:
        drop_tenant(scratch)


def drop_tenant(scratch: TenantScope) -> None:
    """Every record of the scratch tenant, in every collection, and its checkpoints."""
    db = get_db()
    for name in db.list_collection_names():
        if name in CHECKPOINTS:
            db[name].delete_many({"thread_id": {"$regex": f"^{re.escape(scratch.tenant_id)}:"}})
        else:
            db[name].delete_many({"tenant_id": scratch.tenant_id})
    db["tenants"].delete_one({"_id": scratch.tenant_id})


def _model_for(test: HarnessTest, model: str | None, folder: Path, n: int) -> str:
    """`model`, or a scripted model from the test's script (an empty script without one:
    any model call then fails, naming what the file lacks)."""
    if model is not None:
        return model
    path = folder / f"test_{n}.json"
    path.write_text(json.dumps(test.script or {}), encoding="utf-8")
    return f"scripted:{path}"


def _tools(events: list[Event], doc: HarnessDoc, steps: list[str]) -> set[str]:
    """Every tool the run called, as operation ids (`members.get`): the agents' calls and
    the `tool` and `search` steps that ran."""
    called = {str(call.get("tool", "")).replace("_", ".", 1)
              for e in events if e.event == "task_finished"
              for call in e.data.get("calls") or [] if isinstance(call, dict)}
    by_id = {s.id: s for s in doc.steps}
    for sid in steps:
        step = by_id.get(sid)
        if step is not None and step.type == "tool":
            called.add(step.operation)
        elif step is not None and step.type == "search":
            called.add("knowledge.search")
    return called


def check(test: HarnessTest, answer: dict[str, Any], steps: list[str], model_calls: int,
          tools: set[str]) -> list[str]:
    """Every expectation of `test` that the run did not meet, in words."""
    expect = test.expect
    text = str(answer.get("text") or "")
    lowered = text.lower()
    failures = [f"steps_ran {s!r}: the step did not run" for s in expect.steps_ran
                if s not in steps]
    failures += [f"steps_not_ran {s!r}: the step ran" for s in expect.steps_not_ran
                 if s in steps]
    failures += [f"contains {p!r}: not in the answer" for p in expect.contains
                 if p.lower() not in lowered]
    failures += [f"absent {p!r}: in the answer" for p in expect.absent if p.lower() in lowered]
    if expect.regex and not patterns.search(expect.regex, text, ignore_case=False):
        failures.append(f"regex {expect.regex!r}: no match in the answer")
    if expect.max_model_calls is not None and model_calls > expect.max_model_calls:
        failures.append(f"max_model_calls {expect.max_model_calls}: the run made "
                        f"{model_calls}")
    sources = len(answer.get("sources") or [])
    if expect.sources is not None and sources != expect.sources:
        failures.append(f"sources {expect.sources}: the answer has {sources}")
    failures += [f"tools_contains {t!r}: not called (called: "
                 f"{', '.join(sorted(tools)) or 'none'})"
                 for t in expect.tools_contains if t.replace("_", ".", 1) not in tools]
    return failures


def run_test(scratch: TenantScope, version: int, doc: HarnessDoc, test: HarnessTest,
             model: str) -> dict[str, Any]:
    """One test on the scratch tenant: `{name, passed, failures, steps_ran, model_calls,
    answer}`."""
    from opsgraph.engine.runner import stream_run  # heavy: langgraph (cold start)

    principal = Principal(scratch.tenant_id, test.user, frozenset({test.role}),
                          Channel.DASHBOARD)
    events = list(stream_run(principal, test.message, model=model,
                             harness=(version, doc)))
    answers = [e.data for e in events if e.event == "answer"]
    answer = answers[-1] if answers else {}
    finished = next(e.data for e in reversed(events) if e.event == "run_finished")
    run_id = events[0].data["run_id"]
    record: Document = scratch[RUNS].find_one({"run_id": run_id}) or {}
    steps = list(record.get("steps_ran") or [])
    calls = int(finished.get("usage", {}).get("model_calls", 0))
    failures = check(test, answer, steps, calls, _tools(events, doc, steps))
    for error in (e.data for e in events if e.event == "error"):
        if error.get("code") == "scripted_model" and test.script is None:
            failures.insert(0, "the run needs a model and the test has no script (give it "
                               f"one, or test with a model): {error.get('message')}")
        else:
            failures.insert(0, f"the run failed: {error.get('code')}: {error.get('message')}")
    return {"name": test.name, "passed": not failures, "failures": failures,
            "steps_ran": steps, "model_calls": calls, "answer": answer.get("text", "")}


def run_tests(scope: TenantScope, version: int, doc: HarnessDoc, *,
              model: str | None = None) -> dict[str, Any]:
    """Run every test of `doc` (the tenant's version `version`) in a scratch tenant:
    `{version, passed, failed, model, results}`."""
    if model is not None:
        parse_model_spec(model)
    results = []
    if doc.tests:
        with scratch_tenant(scope) as scratch, tempfile.TemporaryDirectory() as folder:
            for n, test in enumerate(doc.tests):
                results.append(run_test(scratch, version, doc, test,
                                        _model_for(test, model, Path(folder), n)))
    passed = sum(1 for r in results if r["passed"])
    return {"version": version, "passed": passed, "failed": len(results) - passed,
            "model": model or "scripted", "results": results}


def activate_checked(scope: TenantScope, version: int, *, actor: str, force: bool = False,
                     model: str | None = None, overriding: Sequence[str] | None = None,
                     ) -> dict[str, Any]:
    """Run the version's tests, keep the report, then activate it: failing tests refuse the
    activation (`tests_failing`) unless `force`, which is audited. Returns the activation
    with the test report under `tests`."""
    doc = versions.load(scope, version)
    report = run_tests(scope, version, doc, model=model)
    versions.record_test(scope, version, report)
    activated = versions.activate(scope, version, actor=actor, report=report, force=force,
                                  overriding=overriding)
    return {**activated, "tests": report}
