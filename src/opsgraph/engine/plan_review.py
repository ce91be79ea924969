"""Code's review of a numbered plan, before anything runs.

Small models over-plan: they split one ask into a lookup plus the ask, repeat a task, or
add a write nobody asked for (a membership cancellation on a parking question). These
checks are deterministic and cheap, and each correction is kept as a note on the plan:

- a question for information and nothing else (`asks_for_information`: "what's the deadline
  to cancel my place?") has no write task, whatever words it holds;
- a write task stays only when the request asks for a change (`asks_for_change`). A plan of
  writes alone is held to it too ("Where can I park?" planned as one refund raised a refund
  card): without a change word its writes stay only when the request is not a question for
  information and each write repeats words of it or of the conversation before it
  ("treadmill 4 is broken" → a fault report; "yes please" after "shall I book court 2?");
- a task repeated (same capability, same words) is kept once; two asks of one capability
  ("find Jane", "find Tom") stay two tasks, run in parallel;
- a read task in the domain of a write task whose agent has that domain's lookup tools is
  dropped: the writer looks the record up itself (unless the caller cannot write at all).
"""

from __future__ import annotations

import re

from opsgraph.engine.plan import PlannedTask, TaskPlan
from opsgraph.engine.request_words import asks_for_change, asks_for_information, opens_as_question
from opsgraph.registry.matrix import route
from opsgraph.store.search_keys import normalise

# Words a write's instruction shares with any request: not evidence that it was asked for.
_COMMON = frozenset(
    "the a an to of for and or in on at by with from my me i you your our us it its this "
    "that please pls can could would will is are be".split())


def unrequested_writes(tasks: list[PlannedTask], request: str,
                       conversation: str = "") -> list[PlannedTask]:
    """The write tasks the request does not ask for (see the module docstring);
    `conversation` is what was said before it, which a write may repeat instead."""
    writes = [t for t in tasks if t.writes]
    if not writes:
        return []
    if asks_for_information(request):
        return writes
    if asks_for_change(request):
        return []
    if len(writes) < len(tasks) or opens_as_question(request):
        return writes
    said = set(_content_words(f"{request} {conversation}"))
    return [t for t in writes if not said & set(_content_words(t.instruction))]


def review_plan(plan: TaskPlan, request: str, *, can_write: bool = True,
                conversation: str = "") -> TaskPlan:
    """The plan with unrequested writes, duplicates and redundant lookups removed (a
    caller who cannot write keeps the lookups: the writers will be refused)."""
    tasks = list(plan.tasks)
    notes = list(plan.notes)
    for task in unrequested_writes(tasks, request, conversation):
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


def _content_words(text: str) -> list[str]:
    """The words that carry meaning (accents and case ignored, as names compare)."""
    return [w for w in re.findall(r"\w+", normalise(text)) if w not in _COMMON and len(w) > 1]


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
