"""A run as the evaluators read it: its events parsed into plain records.

`parse_events` reads the run events (docs/reference.md) (Event objects or `{event, data}` dicts)
and keeps only what scoring needs; unknown events and extra fields are ignored, so the
engine may add to them. `RunFacts` holds what the runner looked up in the store beside the
events (names of records, the caller's own contacts); evaluators never touch the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from opsgraph.evals.matching import Aliases
from opsgraph.operations.catalogue import CATALOGUE


@dataclass(frozen=True, slots=True)
class PlannedTask:
    """One task of the plan."""

    id: str
    domain: str
    verb: str
    depends_on: tuple[str, ...] = ()
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call an agent made (from `task_finished`)."""

    tool: str
    args: dict[str, Any]
    ok: bool
    result: str
    task_id: str = ""


@dataclass(slots=True)
class Card:
    """One approval card; `before` is the record's stored values of `old`'s fields, when
    the runner could find the record (None otherwise)."""

    operation: str
    summary: str
    old: dict[str, Any]
    new: dict[str, Any]
    args: dict[str, Any]
    task_id: str = ""
    change_id: str = ""
    before: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What the runner knows beside the events: record names, the caller's contacts, the
    run's date, and the full text of the records the answer cites."""

    aliases: Aliases = field(default_factory=Aliases)
    caller_contacts: tuple[str, ...] = ()
    today: str = ""
    source_texts: tuple[str, ...] = ()


@dataclass(slots=True)
class RunRecord:
    """Everything the evaluators read about one run."""

    plan: list[PlannedTask] | None = None
    task_status: dict[str, str] = field(default_factory=dict)
    calls: list[ToolCall] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)
    answer: str | None = None
    options: list[str] = field(default_factory=list)
    """The options of a clarifying question the answer asked (`answer {options}`)."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    exception: str | None = None
    seconds: float = 0.0
    facts: RunFacts = field(default_factory=RunFacts)

    @property
    def plan_error(self) -> dict[str, Any] | None:
        """The `invalid_plan` error, if planning failed."""
        return next((e for e in self.errors if e.get("code") == "invalid_plan"), None)

    def applied_writes(self) -> list[ToolCall]:
        """Write calls that went through (approved and applied)."""
        def is_write(tool: str) -> bool:
            op = CATALOGUE.get(tool.replace("_", ".", 1))
            return op is not None and op.kind == "write"

        return [c for c in self.calls if c.ok and is_write(c.tool)]


def _plan(data: Mapping[str, Any]) -> list[PlannedTask]:
    return [PlannedTask(id=str(t.get("id", "")), domain=str(t.get("domain", "")),
                        verb=str(t.get("operation", "")),
                        depends_on=tuple(str(d) for d in t.get("depends_on") or ()),
                        agent=t.get("agent")) for t in data.get("tasks") or []]


def _calls(data: Mapping[str, Any]) -> list[ToolCall]:
    task_id = str(data.get("task_id", ""))
    return [ToolCall(tool=str(c.get("tool", "")), args=dict(c.get("args") or {}),
                     ok=bool(c.get("ok")), result=str(c.get("result") or ""), task_id=task_id)
            for c in data.get("calls") or []]


def _cards(data: Mapping[str, Any]) -> list[Card]:
    return [Card(operation=str(c.get("operation", "")), summary=str(c.get("summary") or ""),
                 old=dict(c.get("old") or {}), new=dict(c.get("new") or {}),
                 args=dict(c.get("args") or {}), task_id=str(c.get("task_id", "")),
                 change_id=str(c.get("change_id", "")))
            for c in data.get("changes") or []]


def _name_and_data(event: Any) -> tuple[str, Mapping[str, Any]]:
    if isinstance(event, Mapping):
        return str(event.get("event", "")), event.get("data") or {}
    return str(event.event), event.data


def parse_events(events: Iterable[Any]) -> RunRecord:
    """The run record of a stream of events."""
    run = RunRecord()
    for event in events:
        name, data = _name_and_data(event)
        if name == "plan":
            run.plan = _plan(data)
        elif name == "task_finished":
            run.task_status[str(data.get("task_id", ""))] = str(data.get("status", ""))
            run.calls.extend(_calls(data))
        elif name == "approval_required":
            run.cards.extend(_cards(data))
        elif name == "answer":
            run.answer = str(data.get("text") or "")
            run.options = [str(o) for o in data.get("options") or []]
            run.sources = [dict(s) for s in data.get("sources") or []]
        elif name == "error":
            run.errors.append(dict(data))
        elif name == "run_finished":
            run.status = str(data.get("status", ""))
            run.usage = dict(data.get("usage") or {})
    return run
