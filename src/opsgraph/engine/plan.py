"""The typed plan the decompose step asks the model for, and its validation."""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from opsgraph.principal import DOMAINS, VERBS, WRITE_VERBS

MAX_TASKS = 8


class PlannedTask(BaseModel):
    """One sub-task: what to do, in which domain, after which other tasks."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(description="Short unique id, e.g. t1")
    # The enums are in the schema the model sees (a grammar-constrained server holds it to
    # them); validation stays in `plan_problems`, so a wrong word gets one repair attempt.
    domain: str = Field(description="One of: " + ", ".join(DOMAINS),
                        json_schema_extra={"enum": list(DOMAINS)})
    operation: str = Field(
        description="The verb, one of: " + ", ".join(VERBS),
        validation_alias=AliasChoices("operation", "verb"),
        json_schema_extra={"enum": list(VERBS)},
    )
    instruction: str = Field(description="What the agent must do, in one or two sentences")
    depends_on: list[str] = Field(default_factory=list,
                                  description="Ids of tasks whose results this task needs")

    @property
    def writes(self) -> bool:
        return self.operation in WRITE_VERBS


class TaskPlan(BaseModel):
    """The decomposition of one request into at most eight sub-tasks."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[PlannedTask] = Field(description="The sub-tasks, at most 8")


def plan_problems(plan: TaskPlan) -> list[str]:
    """Every reason the plan cannot run, as `tasks[i].field: message` lines (empty = valid)."""
    problems: list[str] = []
    if not plan.tasks:
        problems.append("tasks: the plan has no tasks")
    if len(plan.tasks) > MAX_TASKS:
        problems.append(f"tasks: {len(plan.tasks)} tasks, at most {MAX_TASKS} allowed")
    ids = [t.id for t in plan.tasks]
    seen: set[str] = set()
    for i, task in enumerate(plan.tasks):
        where = f"tasks[{i}]"
        if task.id in seen:
            problems.append(f"{where}.id: duplicate id {task.id!r}")
        seen.add(task.id)
        if task.domain not in DOMAINS:
            problems.append(f"{where}.domain: unknown domain {task.domain!r}")
        if task.operation not in VERBS:
            problems.append(f"{where}.operation: unknown verb {task.operation!r}")
        for dep in task.depends_on:
            if dep not in ids:
                problems.append(f"{where}.depends_on: unknown task {dep!r}")
            elif dep == task.id:
                problems.append(f"{where}.depends_on: a task cannot depend on itself")
    cycle = find_cycle(plan)
    if cycle:
        problems.append("tasks: dependency cycle " + " -> ".join(cycle))
    return problems


def find_cycle(plan: TaskPlan) -> list[str]:
    """A dependency cycle as a list of ids (first id repeated at the end), or []."""
    deps = {t.id: [d for d in t.depends_on if d != t.id] for t in plan.tasks}
    state: dict[str, int] = {}  # 1 = on stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in deps.get(node, []):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt in deps and state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in deps:
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return []


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
        else:  # unreachable for a validated plan
            raise ValueError("plan has a cycle")
    return order
