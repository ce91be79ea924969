"""Evaluators of the plan: was one made, does it route right, are its edges right."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from opsgraph.evals.cases import Case, ExpectedTask
from opsgraph.evals.records import PlannedTask, RunRecord
from opsgraph.evals.scores import PASS, Score, fail, verdict
from opsgraph.principal import WRITE_VERBS

MAX_MATCHINGS = 500


def _label(task: PlannedTask) -> str:
    return f"{task.domain}.{task.verb}"


def _wanted(task: ExpectedTask) -> str:
    return f"{task.domain}.{'|'.join(task.verb)}"


def _fits(want: ExpectedTask, task: PlannedTask) -> bool:
    return want.domain == task.domain and task.verb in want.verb


def matchings(expected: Sequence[ExpectedTask], planned: Sequence[PlannedTask]
              ) -> Iterator[dict[int, str]]:
    """Every way (up to MAX_MATCHINGS) to give each expected task its own planned task."""
    count = 0

    def place(i: int, chosen: dict[int, str]) -> Iterator[dict[int, str]]:
        nonlocal count
        if count >= MAX_MATCHINGS:
            return
        if i == len(expected):
            count += 1
            yield dict(chosen)
            return
        for task in planned:
            if task.id not in chosen.values() and _fits(expected[i], task):
                chosen[i] = task.id
                yield from place(i + 1, chosen)
                del chosen[i]

    yield from place(0, {})


def _plan_problem(run: RunRecord) -> str | None:
    if run.exception:
        return f"the case errored: {run.exception}"
    error = run.plan_error
    if error is not None:
        return f"invalid_plan: {error.get('message', '')}".strip()
    if run.plan is None:
        first = run.errors[0] if run.errors else {}
        why = f" ({first.get('code')}: {first.get('message')})" if first else ""
        return f"the run produced no plan{why}"
    return None


def plan_valid(case: Case, run: RunRecord) -> Score | None:
    """The run produced a plan (no `invalid_plan` error)."""
    problem = _plan_problem(run)
    return PASS if problem is None else fail(problem)


def routing(case: Case, run: RunRecord) -> Score | None:
    """Every expected task has a planned task of its domain and verb; the plan adds no
    write that was not asked for and at most one extra task."""
    expected = case.expect.tasks
    if expected is None:
        return None
    problem = _plan_problem(run)
    if problem is not None or run.plan is None:
        return fail(problem or "no plan")
    planned = ", ".join(_label(t) for t in run.plan) or "nothing"
    match = next(matchings(expected, run.plan), None)
    if match is None:
        missing = [_wanted(w) for w in expected
                   if not any(_fits(w, t) for t in run.plan)]
        what = ", ".join(missing) if missing else "one task for each expected task"
        return fail(f"expected {what}; planned {planned}")
    extras = [t for t in run.plan if t.id not in match.values()]
    reasons = [f"unasked write {_label(t)}" for t in extras if t.verb in WRITE_VERBS]
    if len(extras) > 1:
        reasons.append(f"{len(extras)} extra tasks ({', '.join(_label(t) for t in extras)})")
    return fail(*reasons, f"planned {planned}") if reasons else PASS


def _reach(plan: Sequence[PlannedTask]) -> dict[str, set[str]]:
    """Each task id → every task it depends on, directly or through others."""
    direct = {t.id: set(t.depends_on) for t in plan}
    closed: dict[str, set[str]] = {}

    def walk(tid: str, path: frozenset[str]) -> set[str]:
        if tid in closed:
            return closed[tid]
        out: set[str] = set()
        for dep in direct.get(tid, set()) - path:
            out |= {dep} | walk(dep, path | {tid})
        closed[tid] = out
        return out

    for task in plan:
        walk(task.id, frozenset())
    return closed


def _closure(edges: Sequence[tuple[int, int]]) -> set[tuple[int, int]]:
    out = set(edges)
    while True:
        more = {(a, d) for a, b in out for c, d in out if b == c and a != d} - out
        if not more:
            return out
        out |= more


def _edges(match: dict[int, str], reach: dict[str, set[str]]) -> set[tuple[int, int]]:
    return {(later, earlier) for later, lid in match.items() for earlier, eid in match.items()
            if later != earlier and eid in reach.get(lid, set())}


def dependencies(case: Case, run: RunRecord) -> Score | None:
    """The matched tasks' edges (direct or through other tasks) are exactly `depends`."""
    if case.expect.depends is None or case.expect.tasks is None:
        return None
    problem = _plan_problem(run)
    if problem is not None or run.plan is None:
        return fail(problem or "no plan")
    want = _closure([(a, b) for a, b in case.expect.depends])
    reach = _reach(run.plan)
    found: set[tuple[int, int]] | None = None
    for match in matchings(case.expect.tasks, run.plan):
        got = _edges(match, reach)
        if got == want:
            return PASS
        found = got if found is None else found
    if found is None:
        return fail("the expected tasks are not all planned, so their edges cannot be checked")
    missing, extra = sorted(want - found), sorted(found - want)
    return verdict([f"missing edge {a}→{b} (task {a} after task {b})" for a, b in missing]
                   + [f"unexpected edge {a}→{b} (task {a} waits for task {b})"
                      for a, b in extra])
