"""Run eval cases through the real runtime and score them.

Each case is one new thread of `stream_run` (planner, agents, tools, approvals, synthesis)
as its principal, in a scratch database seeded with the demo tenants; cases run on a small
thread pool. A case that raises is recorded as errored and the suite goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opsgraph.evals.cases import Case
from opsgraph.evals.evaluators import score_case
from opsgraph.evals.lookups import StoreLookups
from opsgraph.evals.records import RunRecord, parse_events
from opsgraph.evals.relative import case_at
from opsgraph.evals.sandbox import scratch_database
from opsgraph.evals.scores import Score
from opsgraph.principal import Principal

log = logging.getLogger(__name__)

EVIDENCE_CHARS = 1500
"""How much of a run's tool output a report keeps per case (the judge reads it)."""

OnCase = Callable[["CaseResult"], None]


@dataclass(slots=True)
class CaseResult:
    """One case: its run and its scores."""

    case: Case
    run: RunRecord
    scores: dict[str, Score] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every dimension that applies passed."""
        return all(s.passed for s in self.scores.values())

    def _evidence(self) -> str:
        parts = [f"{c.tool}: {c.result}" for c in self.run.calls]
        parts += [f"card {c.operation}: {c.summary}" for c in self.run.cards]
        text = "\n".join(parts)
        return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS] + "…"

    def to_json(self) -> dict[str, Any]:
        """The case as `report.json` and `--json` show it."""
        run, usage = self.run, self.run.usage
        return {
            "id": self.case.id, "split": self.case.split, "domain": self.case.domain,
            "file": self.case.file, "request": self.case.request,
            "history": [t.model_dump() for t in self.case.history],
            "principal": self.case.principal.model_dump(mode="json"),
            "passed": self.passed, "errored": run.exception is not None,
            "error": run.exception, "status": run.status, "seconds": round(run.seconds, 3),
            "model_calls": int(usage.get("model_calls", 0)),
            "input_tokens": int(usage.get("input_tokens", 0)),
            "output_tokens": int(usage.get("output_tokens", 0)),
            "scores": {name: s.to_json() for name, s in self.scores.items()},
            "plan": [f"{t.domain}.{t.verb}" for t in run.plan or []],
            "cards": [{"operation": c.operation, "summary": c.summary} for c in run.cards],
            "answer": run.answer, "evidence": self._evidence(),
            "expected": self._expected(),
        }

    def _expected(self) -> dict[str, Any]:
        """How many tasks and which cards the case expects (None: it does not say)."""
        expect = self.case.expect
        return {"tasks": None if expect.tasks is None else len(expect.tasks),
                "cards": None if expect.interrupts is None
                else [c.operation for c in expect.interrupts]}


def principal_of(case: Case) -> Principal:
    """The person the case speaks as."""
    who = case.principal
    return Principal(who.tenant, who.user, frozenset({who.role}), who.channel)


def run_case(case: Case, model: str, lookups: StoreLookups) -> CaseResult:
    """Run one case on a new thread and score it; never raises."""
    from opsgraph.engine.runner import stream_run  # heavy: langgraph (cold start)

    events: list[Any] = []
    exception = None
    started = time.perf_counter()
    timezone, anchor = lookups.clock(case.principal.tenant)
    case = case_at(case, datetime.now(UTC), timezone, anchor)  # relative times, made exact
    try:
        history = [t.model_dump() for t in case.history] or None
        events.extend(stream_run(principal_of(case), case.request, model=model,
                                 history=history))
    except Exception as exc:
        log.exception("eval case %s failed", case.id)
        exception = f"{type(exc).__name__}: {exc}"
    run = parse_events(events)
    run.exception, run.seconds = exception, time.perf_counter() - started
    try:
        lookups.complete(run, case.principal.tenant, case.principal.user)
    except Exception:  # facts only make scoring more forgiving; scoring goes on without
        log.exception("eval case %s: store lookups failed", case.id)
    return CaseResult(case, run, score_case(case, run))


def _collect(pool: ThreadPoolExecutor, cases: list[Case], model: str,
             lookups: StoreLookups, on_case: OnCase | None) -> list[CaseResult]:
    futures: dict[Future[CaseResult], int] = {
        pool.submit(run_case, case, model, lookups): i for i, case in enumerate(cases)}
    results: list[CaseResult | None] = [None] * len(cases)
    for future in as_completed(futures):
        result = future.result()
        results[futures[future]] = result
        if on_case is not None:
            on_case(result)
    return [r for r in results if r is not None]


def run_cases(cases: list[Case], model: str, *, concurrency: int = 2,
              on_case: OnCase | None = None) -> list[CaseResult]:
    """Run every case (at most `concurrency` at once) in a scratch database; results in
    the cases' order. `on_case` hears of each case as it finishes."""
    with scratch_database() as db:
        lookups = StoreLookups(db)
        pool = ThreadPoolExecutor(max_workers=max(1, concurrency),
                                  thread_name_prefix="opsgraph-eval")
        try:
            return _collect(pool, cases, model, lookups, on_case)
        finally:
            # On Ctrl-C: drop what has not started; running cases finish before the drop.
            pool.shutdown(wait=True, cancel_futures=True)

