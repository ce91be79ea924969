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
from opsgraph.registry.matrix import route
from opsgraph.store.search_keys import normalise

# Verbs that name a change outright: a request holding one is never a plain question (the
# knowledge agents' fast path, `code_plans.knowledge_question`, leaves it to the planner).
_WRITE_VERBS = (
    r"book|rebook|reserve|cancel|scrap|delete|remove|change|update|edit|move|swap|"
    r"reschedule|refund|send|e-?mail|notify|remind|register|enrol|enroll|sign\s+(?:\w+\s+)?"
    r"up|add|assign|issue|invoice|charge|create|schedule|freeze|pause|suspend|terminate|"
    r"renew|upgrade|downgrade|promote|announce|approve|waitlist")
_WRITE = re.compile(rf"\b(?:{_WRITE_VERBS})\w*", re.IGNORECASE)
# Words with which people ask for a change (any tense, any politeness): those verbs and the
# looser words around them. A question with none of them ("is court 1 free?", "where do I
# park?") asks for nothing to be changed.
_OWN_CHANGE_WORDS = (
    _WRITE_VERBS + r"|drop|chang|correct|fix|set|reimburse|credit|text|message|tell|"
    r"let\s+(?:\w+\s+){1,3}know|count\s+\w+\s+in|sign|put|give|cover|bill|make|arrange|end|"
    r"report|log|raise|close|open|new|moved|married|switch|replace|mark|"
    # a fault described is a fault to report ("the lights in studio b keep flickering")
    r"broke|leak|flicker|crack|loose|jammed|faulty|damaged|not\s+working|out\s+of\s+order")
# asking for what was just discussed: "please see to it", "go ahead", "sort it out"
_DEFERENCE = (r"see\s+to|go\s+ahead|do\s+(?:it|that|this)\b|sort\s+(?:it|that|this|out)|"
              r"deal\s+with|take\s+care|handle\s+(?:it|that|this)\b|proceed")
_CHANGE = re.compile(rf"\b(?:{_OWN_CHANGE_WORDS}|{_DEFERENCE})\w*", re.IGNORECASE)
_OWN_CHANGE = re.compile(rf"\b(?:{_OWN_CHANGE_WORDS})\w*", re.IGNORECASE)
_DEFERS = re.compile(rf"\b(?:{_DEFERENCE})", re.IGNORECASE)
# How a question for information opens ("where can I park?", "is court 1 free?"); a polite
# request ("can I get court 3 at 6", "could you…") is not one.
_WH = (r"what|what's|whats|where|where's|wheres|when|when's|who|who's|whos|whom|whose|"
       r"which|why|how|how's")
_QUESTION = re.compile(rf"^\W*(?:{_WH}|is|are|was|were|do|does|did|has|have)\b",
                       re.IGNORECASE)
# A question for information and nothing else: one sentence, opening with a question word
# that asks what, when, where, who, which, why or how, ending with "?" ("what's the
# deadline to cancel my daughter's place?", "how do I cancel my booking?", a follow-up's
# "and how late can I cancel?"). "can you cancel it?" and "when you can, cancel it." are not
# it.
_INFORMATION = re.compile(rf"^\W*(?:(?:and|so|but|ok|okay)\W+)?(?:{_WH})\b[^.!?]*\?\W*$",
                          re.IGNORECASE)
# Words a write's instruction shares with any request: not evidence that it was asked for.
_COMMON = frozenset(
    "the a an to of for and or in on at by with from my me i you your our us it its this "
    "that please pls can could would will is are be".split())


def names_a_write(request: str) -> bool:
    """True when the request holds a verb that names a change outright ("book", "refund")."""
    return bool(_WRITE.search(request))


def asks_for_change(request: str) -> bool:
    """True when the request holds a word people use to ask for a change."""
    return bool(_CHANGE.search(request))


def names_its_change(request: str) -> bool:
    """True when the request says in its own words what to change ("book court 2"), not
    only that what was just discussed should be done ("go ahead", "sort it out")."""
    return bool(_OWN_CHANGE.search(request)) and not _DEFERS.search(request)


def opens_as_question(request: str) -> bool:
    """True when the request opens as a question ("is court 1 free", "what time ...")."""
    return bool(_QUESTION.match(request))


def asks_for_information(request: str) -> bool:
    """True when the request is one question for information (`_INFORMATION`): a change
    word in it is what the question is about ("the deadline to cancel"), not an ask."""
    return bool(_INFORMATION.match(request.strip()))


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
    if len(writes) < len(tasks) or _QUESTION.match(request):
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
