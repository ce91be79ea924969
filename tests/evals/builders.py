"""Cases and run records for evaluator tests, built as the loader and the parser build them."""

from __future__ import annotations

import json
from typing import Any

from opsgraph.evals.cases import Case
from opsgraph.evals.matching import Aliases
from opsgraph.evals.records import RunFacts, RunRecord, parse_events
from opsgraph.evals.scores import Score

# The demo seed's names for the ids these tests use (the runner reads them from the store).
DEMO_ALIASES = Aliases({
    "mem_demo_001": ["Jane Smith", "jane.smith@example.com"],
    "mem_demo_002": ["Jayne Smith", "jayne.smith82@example.net"],
    "mem_demo_008": ["Emily Chen", "emily.chen@example.org"],
    "res_demo_court1": ["Court 1", "C1"],
})


def make_case(request: str = "change Emily Chen's phone to +44 7700 900555",
              role: str = "staff", history: list[dict[str, str]] | None = None,
              **expect: Any) -> Case:
    """A valid case (split dev) with these expectations."""
    principal: dict[str, Any] = {"role": role}
    if role == "member":
        principal["user"] = "mem_demo_008"
    return Case.model_validate({"id": "c1", "split": "dev", "domain": "members",
                                "principal": principal, "history": history or [],
                                "request": request, "expect": expect})


def task(tid: str, domain: str, verb: str, deps: list[str] | None = None) -> dict[str, Any]:
    """A plan task as the `plan` event carries it."""
    return {"id": tid, "domain": domain, "operation": verb, "instruction": "…",
            "depends_on": deps or [], "agent": f"{domain}.x"}


def call(tool: str, args: dict[str, Any], result: Any = "", ok: bool = True
         ) -> dict[str, Any]:
    """A tool call as `task_finished` carries it."""
    text = result if isinstance(result, str) else json.dumps(result)
    return {"tool": tool, "args": args, "ok": ok, "result": text}


PHONE_CARD: dict[str, Any] = {
    "change_id": "chg_1", "operation": "members.update", "task_id": "t1",
    "summary": "Update Emily Chen (mem_demo_008): phone '+44 7700 900788' → '+44 7700 900555'",
    "old": {"phone": "+44 7700 900788"}, "new": {"phone": "+44 7700 900555"},
    "args": {"member": "mem_demo_008", "changes": {"phone": "+44 7700 900555"}},
    "expires_at": "2030-01-01T00:00:00+00:00",
}


def make_run(plan: list[dict[str, Any]] | None = None,
             tasks: dict[str, tuple[str, list[dict[str, Any]]]] | None = None,
             cards: list[dict[str, Any]] | None = None, answer: str | None = None,
             errors: list[dict[str, Any]] | None = None, before: dict[str, Any] | None = None,
             caller_contacts: tuple[str, ...] = ()) -> RunRecord:
    """A run record parsed from the events these arguments describe."""
    events: list[dict[str, Any]] = [{"event": "run_started", "data": {"thread_id": "th"}}]
    if plan is not None:
        events.append({"event": "plan", "data": {"tasks": plan}})
    for tid, (status, calls) in (tasks or {}).items():
        events.append({"event": "task_finished", "data": {
            "task_id": tid, "agent": "a", "status": status, "calls": calls, "extra": 1}})
    events += [{"event": "error", "data": e} for e in errors or []]
    if cards:
        events.append({"event": "approval_required", "data": {"thread_id": "th",
                                                              "changes": cards}})
    if answer is not None:
        events.append({"event": "answer", "data": {"text": answer, "sources": []}})
    status = "awaiting_approval" if cards else "completed"
    events.append({"event": "run_finished", "data": {
        "thread_id": "th", "status": status,
        "usage": {"model_calls": 3, "input_tokens": 100, "output_tokens": 10}}})
    run = parse_events(events)
    run.facts = RunFacts(aliases=DEMO_ALIASES, caller_contacts=caller_contacts,
                         today="2030-01-06")
    for card in run.cards:
        card.before = before
    return run


def card(**changes: Any) -> dict[str, Any]:
    """The phone-change card with some fields replaced."""
    return {**PHONE_CARD, **changes}



def passes(score: Score | None) -> bool:
    """The dimension applied and the case passed it."""
    assert score is not None, "the dimension did not apply to the case"
    return score.passed


def fails(score: Score | None, *phrases: str) -> bool:
    """The dimension applied, the case failed it, and the reason says each phrase."""
    assert score is not None, "the dimension did not apply to the case"
    assert not score.passed, "the case passed"
    for phrase in phrases:
        assert phrase in (score.reason or ""), f"{phrase!r} not in {score.reason!r}"
    return True
