"""The typed, checkpointed state of a thread: `RunState`, its `TaskResult`s and `Answer`.

The graph's nodes read a validated `RunState`; what they write goes to the checkpoint as
plain data (`state_update`), never as model objects. LangGraph's serializer would store a
pydantic model by its import path and, on load, warn about the unregistered type (or, with
`LANGGRAPH_STRICT_MSGPACK`, hand back a bare dict), and it rebuilds a model that no longer
validates with `model_construct`, silently. Plain data keeps the checkpoint readable by any
version, and validation happens here, in one place, with an error that says what is wrong.

`schema_version` is written with every new message. A checkpoint without one was written
before the state was typed (version 1): its dicts have the same keys and load as they are.
A version newer than this code knows, or a value that does not validate, stops the run
with `state_unreadable` instead of guessing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from opsgraph.engine.memory import Turn, add_history
from opsgraph.engine.plan import PlannedTask
from opsgraph.errors import RunAborted
from opsgraph.principal import Principal, parse_channel, parse_roles

SCHEMA_VERSION = 4
"""1: untyped dicts, no `schema_version` written; 2: this module's models (same keys);
3: `harness` added (absent in older checkpoints, which load with None); 4: `clarifying`
added (absent: None)."""

TaskStatus = Literal["completed", "partial", "no_proposal", "needs_input", "denied", "failed",
                     "skipped", "withdrawn"]
"""`partial`: a query task that read some of what it tried, not all (`engine.task_outcome`);
`needs_input`: an action task that asked which record a required slot means; `withdrawn`:
its change waited for a change that did not apply (`approvals.dependents`)."""
DONE = ("completed", "partial")
"""The statuses of a task whose results later tasks and the answer may use."""


class StateUnreadable(RunAborted):
    """A thread's checkpoint cannot be read by this version of opsgraph."""

    code = "state_unreadable"


class TaskResult(BaseModel):
    """What one sub-task ended with (the `results` a client sees, keyed by task id)."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    agent: str | None
    status: TaskStatus
    instruction: str = ""
    writes: bool = False
    """The task's verb is a write (it proposes a change rather than reads)."""
    content: str = ""
    sources: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: int = 0
    calls: list[dict[str, Any]] = Field(default_factory=list)
    """Each call in order: `{tool, args, ok, result, change?}` (the `task_finished` calls)."""
    findings: list[dict[str, Any]] = Field(default_factory=list)
    """What the successful read calls returned: `{tool, args, data}`."""
    error: str | None = None
    gate: str | None = None
    """The gate that refused a `denied` task."""
    cap: str | None = None
    """The run limit that stopped a `failed` task, if one did."""
    asking: dict[str, Any] | None = None
    """A `needs_input` task's question: `{question, slot, options: [{value, label}]}`."""


class Answer(BaseModel):
    """The run's answer: its text and the sources code assembled."""

    model_config = ConfigDict(extra="forbid")

    text: str
    sources: list[dict[str, Any]] = Field(default_factory=list)


class Requester(BaseModel):
    """Who started the thread's run: a resumed run keeps these permissions."""

    model_config = ConfigDict(extra="forbid")

    tenant_id: str
    user_id: str
    roles: list[str]
    channel: str

    @classmethod
    def of(cls, principal: Principal) -> Requester:
        return cls(tenant_id=principal.tenant_id, user_id=principal.user_id,
                   roles=sorted(r.value for r in principal.roles),
                   channel=principal.channel.value)

    def principal(self) -> Principal:
        return Principal(self.tenant_id, self.user_id, parse_roles(self.roles),
                         parse_channel(self.channel))


def _replace(_: Any, right: Any) -> Any:
    return right


class HarnessState(BaseModel):
    """Where a run is in its harness version (`engine.harness_node`), checkpointed so that
    a resumed run, even in a new process, goes on with the version it started with."""

    model_config = ConfigDict(extra="forbid")

    version: int
    """The tenant's harness version the run started with (0: the built-in)."""
    registry_version: str
    """The registry's content hash when the run started (recorded, never enforced)."""
    run_key: str
    """The id of the run (segment) that started this message: a resumed run's segments
    share it, so the budget adds up their model calls and seconds."""
    message: str
    """The person's message (`{{message}}`; a `supervisor` step may plan another text)."""
    position: str | None = None
    """The step to run next; None once the run has ended."""
    waiting: str | None = None
    """The `supervisor` or `agent` step whose graph work is under way (its result is read
    when control comes back to the harness)."""
    waiting_type: Literal["supervisor", "agent"] = "supervisor"
    sends: bool = True
    """The waiting step is final: its answer goes to the person (else a later step uses
    it, and nothing is streamed)."""
    vars: dict[str, Any] = Field(default_factory=dict)
    steps_ran: list[str] = Field(default_factory=list)
    model_calls: int = 0
    """Model calls of the run so far (all its segments), as of the last harness step."""
    started_at: str = ""
    """When the message's run started (ISO 8601)."""
    fallback: dict[str, Any] | None = None
    """`{version, step, error}` once a failing version fell back to the built-in."""


class RunState(BaseModel):
    """The checkpointed state of a thread, as the graph's nodes read it."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    request: str = ""
    history: Annotated[list[Turn], add_history] = Field(default_factory=list)
    plan: Annotated[list[PlannedTask], _replace] = Field(default_factory=list)
    results: Annotated[dict[str, TaskResult], _replace] = Field(default_factory=dict)
    answer: Answer | None = None
    run_model: str | None = None
    requester: Requester | None = None
    harness: Annotated[HarnessState | None, _replace] = None
    clarifying: Annotated[dict[str, Any] | None, _replace] = None
    """The question the last answer asked (`{task, slot, options}`), kept for the next
    message on the thread: picking an option completes that task."""

    @model_validator(mode="wrap")
    @classmethod
    def _readable(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> RunState:
        """A newer schema or a value that does not validate is `StateUnreadable`."""
        version = data.get("schema_version", 1) if isinstance(data, dict) else 1
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise StateUnreadable(
                f"the thread's saved state has schema_version {version}, written by a newer "
                f"opsgraph; this one reads versions 1 to {SCHEMA_VERSION}",
                schema_version=version)
        try:
            state: RunState = handler(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "state"
            raise StateUnreadable(
                f"the thread's saved state cannot be read: {where}: {first['msg']} "
                f"({exc.error_count()} problem(s))", field=where) from None
        if state.schema_version < 1:
            raise StateUnreadable(f"the thread's saved state has schema_version "
                                  f"{state.schema_version}; versions start at 1",
                                  schema_version=state.schema_version)
        return state


def state_update(*, plan: list[PlannedTask] | None = None,
                 results: dict[str, TaskResult] | None = None, answer: Answer | None = None,
                 history: list[Turn] | None = None, request: str | None = None,
                 harness: HarnessState | None = None,
                 clarifying: dict[str, Any] | None = None) -> dict[str, Any]:
    """A node's writes, as the checkpoint keeps them: plain data, only the fields given
    (`clarifying={}` clears the question)."""
    update: dict[str, Any] = {}
    if clarifying is not None:
        update["clarifying"] = clarifying
    if request is not None:
        update["request"] = request
    if harness is not None:
        update["harness"] = harness.model_dump()
    if plan is not None:
        update["plan"] = [task.model_dump() for task in plan]
    if results is not None:
        update["results"] = {tid: result.model_dump() for tid, result in results.items()}
    if answer is not None:
        update["answer"] = answer.model_dump()
    if history is not None:
        update["history"] = [dict(turn) for turn in history]
    return update


def new_message_state(request: str, requester: Principal, run_model: str | None,
                      history: list[Turn], harness: HarnessState) -> dict[str, Any]:
    """The graph input of a new message on a thread: the current schema, nothing planned,
    the harness at its first step."""
    return {"schema_version": SCHEMA_VERSION, "request": request, "plan": [], "results": {},
            "answer": None, "run_model": run_model,
            "requester": Requester.of(requester).model_dump(),
            "history": [dict(turn) for turn in history], "harness": harness.model_dump()}
