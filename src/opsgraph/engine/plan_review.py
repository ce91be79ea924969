"""Code's review of a numbered plan, before anything runs.

Small models over-plan: they split one ask into a lookup plus the ask, repeat a task, or
add a write nobody asked for (a membership cancellation on a parking question). These
checks are deterministic and cheap, and each correction is kept as a note on the plan:

- a write task stays only when the request asks for a change (`asks_for_change`);
- a task repeated (same capability, same words) is kept once; two asks of one capability
  ("find Jane", "find Tom") stay two tasks, run in parallel;
- a read task in the domain of a write task whose agent has that domain's lookup tools is
  dropped: the writer looks the record up itself (unless the caller cannot write at all).
"""

from __future__ import annotations

import re

from opsgraph.engine.plan import PlannedTask, TaskPlan

# Words with which people ask for a change (any tense, any politeness). A question with
# none of them ("is court 1 free?", "where do I park?") asks for nothing to be changed.
_CHANGE_WORDS = (
    r"book|rebook|reserve|cancel|scrap|drop|delete|remove|change|chang|update|edit|correct|"
    r"fix|set|move|swap|reschedule|refund|reimburse|credit|send|e-?mail|text|message|"
    r"notify|remind|tell|let\s+\w+\s+know|register|enrol|enroll|sign|add|put|assign|give|"
    r"cover|issue|invoice|bill|charge|create|make|schedule|arrange|freeze|pause|suspend|"
    r"terminate|end|renew|upgrade|downgrade|report|log|raise|promote|close|open|announce|"
    r"new|moved|married|switch|replace|waitlist|approve|mark")
_CHANGE = re.compile(rf"\b(?:{_CHANGE_WORDS})\w*", re.IGNORECASE)


def asks_for_change(request: str) -> bool:
    """True when the request holds a word people use to ask for a change."""
    return bool(_CHANGE.search(request))


def review_plan(plan: TaskPlan, request: str, *, can_write: bool = True) -> TaskPlan:
    """The plan with unrequested writes, duplicates and redundant lookups removed (a
    caller who cannot write keeps the lookups: the writers will be refused)."""
    from opsgraph.registry.matrix import route

    tasks = list(plan.tasks)
    notes = list(plan.notes)
    if not asks_for_change(request) and any(not t.writes for t in tasks):
        for task in [t for t in tasks if t.writes]:
            notes.append(f"{task.id}: dropped {task.domain}.{task.operation} "
                         "(the request asks for no change)")
            tasks = _without(tasks, task)
    for task in list(tasks):
        twin = next((t for t in tasks[:tasks.index(task)] if t.domain == task.domain
                     and t.operation == task.operation
                     and _words(t.instruction) == _words(task.instruction)), None)
        if twin is not None:
            notes.append(f"{task.id}: dropped (the same task as {twin.id})")
            tasks = _without(tasks, task, into=twin.id)
    for task in list(tasks) if can_write else []:
        if task.writes or task not in tasks:
            continue
        writer = next((t for t in tasks if t.writes and t.domain == task.domain), None)
        spec = route(writer.domain, writer.operation) if writer else None
        if writer and spec and any(spec.operation(tool).kind == "read"
                                   and spec.operation(tool).domain == task.domain
                                   for tool in spec.tools):
            notes.append(f"{task.id}: dropped (the {writer.id} agent looks it up itself)")
            tasks = _without(tasks, task)
    return TaskPlan(tasks=tasks, notes=notes)


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _without(tasks: list[PlannedTask], gone: PlannedTask,
             into: str | None = None) -> list[PlannedTask]:
    """`tasks` less `gone`; dependencies on it move to `into` (or are dropped)."""
    kept = [t for t in tasks if t is not gone]
    for task in kept:
        if gone.id in task.depends_on:
            deps = [d for d in task.depends_on if d != gone.id]
            if into and into != task.id and into not in deps:
                deps.append(into)
            task.depends_on = deps
    return kept
