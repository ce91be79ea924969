"""The typed plan: what the planner model writes (`PlanDraft`) and what the graph runs
(`TaskPlan`).

The model never writes task ids: code numbers the tasks `t1..tn`, and a task names the
tasks it needs by their number in the list. An unknown or self reference, or the edge that
closes a cycle, is dropped with a note instead of rejecting the plan: no plan fails for
its dependencies.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from opsgraph.cycles import find_cycle
from opsgraph.principal import DOMAINS, VERBS, WRITE_VERBS

MAX_TASKS = 8


class DraftTask(BaseModel):
    """One task as the planner writes it: an instruction, a capability, its inputs."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, exclude=True,
                           description="Kept when a scripted plan names its tasks; a model "
                                       "is never asked for one")
    instruction: str = Field(description="What the agent must do, with every name, date, "
                                         "time and amount from the request")
    capability: str = Field(description="domain.verb from the capability list")
    depends_on: list[int | str] = Field(
        default_factory=list,
        description="Numbers (1-based) of earlier tasks whose results this task needs")

    @model_validator(mode="before")
    @classmethod
    def _from_parts(cls, data: Any) -> Any:
        """Accept `domain` + `operation` (or `verb`) for `capability` (scripted plans)."""
        if isinstance(data, dict) and "capability" not in data and "domain" in data:
            data = dict(data)
            verb = data.pop("operation", None) or data.pop("verb", "")
            data["capability"] = f"{data.pop('domain')}.{verb}"
        return data


class PlanDraft(BaseModel):
    """The planner's answer: the request split into at most eight tasks."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[DraftTask] = Field(description="The tasks, at most 8, in order")

    @model_validator(mode="before")
    @classmethod
    def _number_ids(cls, data: Any) -> Any:
        """Plans that name their own ids (`id: t1`, scripted files): ids become numbers."""
        if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
            return data
        tasks = [dict(t) if isinstance(t, dict) else t for t in data["tasks"]]
        numbers = {str(t["id"]): n for n, t in enumerate(tasks, start=1)
                   if isinstance(t, dict) and "id" in t}
        for task in tasks:
            if isinstance(task, dict) and "id" in task:
                task["depends_on"] = [numbers.get(str(d), d)
                                      for d in task.get("depends_on") or []]
        return {**data, "tasks": tasks}


class PlannedTask(BaseModel):
    """One sub-task the graph runs: id assigned by code, the agent routed by code."""

    model_config = ConfigDict(extra="forbid")

    id: str
    domain: str
    operation: str
    instruction: str
    depends_on: list[str] = Field(default_factory=list)
    agent: str | None = None
    resolved: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Slots the person settled by picking an option of a clarifying question:
    slot name → `{value, label}`."""

    @property
    def writes(self) -> bool:
        return self.operation in WRITE_VERBS


class TaskPlan(BaseModel):
    """The plan the graph runs, plus the notes of what code corrected in the draft."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[PlannedTask]
    notes: list[str] = Field(default_factory=list)


def _reference(dep: int | str, position: int, count: int) -> int | None:
    """The 1-based number a dependency names, or None when it names no other task."""
    text = str(dep).strip().lower().removeprefix("task").removeprefix("t").strip()
    if not text.isdigit():
        return None
    number = int(text)
    return number if 1 <= number <= count and number != position else None


def number_tasks(draft: PlanDraft) -> TaskPlan:
    """Ids `t1..tn` (a scripted plan keeps its own); unknown, self and cycle-closing
    dependencies dropped with a note."""
    tasks: list[PlannedTask] = []
    notes: list[str] = []
    given = [t.id for t in draft.tasks]
    keep = all(given) and len(set(given)) == len(given)
    ids = [str(t) if keep else f"t{n}" for n, t in enumerate(given, start=1)]
    for position, item in enumerate(draft.tasks, start=1):
        domain, _, verb = item.capability.strip().lower().partition(".")
        deps: list[str] = []
        for dep in item.depends_on:
            number = _reference(dep, position, len(draft.tasks))
            if number is None:
                notes.append(f"{ids[position - 1]}: dropped dependency {dep!r} (it names no "
                             "other task)")
            elif ids[number - 1] not in deps:
                deps.append(ids[number - 1])
        tasks.append(PlannedTask(id=ids[position - 1], domain=domain, operation=verb,
                                 instruction=item.instruction.strip(), depends_on=deps))
    while cycle := find_cycle({t.id: t.depends_on for t in tasks}, [t.id for t in tasks]):
        later, earlier = cycle[-2], cycle[-1]
        task = next(t for t in tasks if t.id == later)
        task.depends_on.remove(earlier)
        notes.append(f"{later}: dropped dependency {earlier!r} (it closed a cycle "
                     + " -> ".join(cycle) + ")")
    return TaskPlan(tasks=tasks, notes=notes)


def plan_problems(plan: TaskPlan, served: set[tuple[str, str]] | None = None) -> list[str]:
    """Every reason the plan cannot run, as `tasks[i].field: message` lines (empty = valid).

    `served` is the set of (domain, verb) some agent serves; without it only the words are
    checked.
    """
    problems: list[str] = []
    if not plan.tasks:
        problems.append("tasks: the plan has no tasks")
    if len(plan.tasks) > MAX_TASKS:
        problems.append(f"tasks: {len(plan.tasks)} tasks, at most {MAX_TASKS} allowed")
    for i, task in enumerate(plan.tasks):
        where = f"tasks[{i}]"
        if task.domain not in DOMAINS:
            problems.append(f"{where}.capability: unknown domain {task.domain!r}")
        elif task.operation not in VERBS:
            problems.append(f"{where}.capability: unknown verb {task.operation!r}")
        elif served is not None and (task.domain, task.operation) not in served:
            problems.append(f"{where}.capability: no agent serves "
                            f"{task.domain}.{task.operation}")
        if not task.instruction:
            problems.append(f"{where}.instruction: empty")
    return problems


def topological(plan: TaskPlan) -> list[PlannedTask]:
    """Tasks ordered so that every dependency comes first (stable on plan order)."""
    done: set[str] = set()
    order: list[PlannedTask] = []
    while len(order) < len(plan.tasks):
        for task in plan.tasks:
            if task.id not in done and all(d in done for d in task.depends_on):
                order.append(task)
                done.add(task.id)
                break
        else:  # unreachable for a numbered plan: its cycles were broken
            raise ValueError("plan has a cycle")
    return order
