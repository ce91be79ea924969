"""What the HTTP routes answer (docs/reference.md), as pydantic models: the JSON bodies, the
one error body, and the data of each server-sent event. They generate the response schemas
of `GET /openapi.json`; shapes other parts of opsgraph own (a pending change, an operation's
result, an event's data) list the fields a client relies on and allow more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from opsgraph.approvals.views import change_view


class Out(BaseModel):
    """A response shape: exactly these fields."""

    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    """A response shape: at least these fields (its owner may add more)."""

    model_config = ConfigDict(extra="allow")


# --- errors ---------------------------------------------------------------------------------

class FieldError(Out):
    field: str = Field(description="Dotted path of the field, e.g. `models.members.update`.")
    message: str


class ErrorBody(Out):
    code: str = Field(description="Stable error code, e.g. `bad_input`, `not_found`, "
                                  "`invalid` (422).")
    message: str = Field(description="What was wrong, naming the field.")
    request_id: str = Field(description="Also in the `X-Request-Id` header and the log.")
    errors: list[FieldError] | None = Field(
        None, description="422 only: every field at fault (`message` joins them).")
    detail: dict[str, Any] | None = Field(None, description="More about the error.")


class ErrorResponse(Out):
    """Every error: 400/401/403/404/409/410/413/422/429."""

    error: ErrorBody


# --- JSON bodies ----------------------------------------------------------------------------

class Health(Out):
    ok: Literal[True]


class Source(Open):
    kind: str
    id: str
    title: str


if TYPE_CHECKING:  # mypy reads a view as its base; pydantic builds it from the stored change
    Change = Open
else:
    Change = change_view(
        "Change", ("change_id", "thread_id", "task_id", "agent", "operation", "args", "old",
                   "new", "summary", "status", "created_at", "expires_at"),
        base=Open, doc="A pending change as `GET /v1/approvals` lists it (datetimes ISO 8601).")


class Changes(Out):
    changes: list[Change]


class Person(Open):
    user_id: str
    name: str


class ThreadRow(Out):
    """One thread as `GET /v1/threads` lists it."""

    thread_id: str
    title: str
    status: str | None = Field(description="The latest run's: `running`, `completed`, "
                               "`completed_with_errors`, `awaiting_approval`, `cancelled` "
                               "or `failed`.")
    status_label: str | None = Field(None, description="The status in people's words, "
                                     "from what its tasks did (`Not done`, `Partly done`).")
    updated_at: str
    pending: int = Field(description="How many of its changes wait for a decision.")
    requester: Person


class Threads(RootModel[list[ThreadRow]]):
    """The caller's threads, newest first (a JSON array)."""


class Message(Out):
    role: str
    content: str


class PlanStep(Out):
    id: str
    agent: str | None
    instruction: str
    depends_on: list[str]


class ToolUse(Out):
    name: str | None
    args: Any
    result: Any


class TaskOutcome(Out):
    agent: str | None
    status: str
    status_label: str = Field(description="What happened, in people's words (its change's "
                                          "outcome when it proposed one).")
    summary: str | None = None
    tools: list[ToolUse]


class ThreadDetail(Out):
    """One thread: the conversation, the last plan, task results, sources, pending cards."""

    thread_id: str
    title: str
    status: str | None
    status_label: str | None = None
    updated_at: str
    requester: Person
    messages: list[Message]
    plan: list[PlanStep]
    results: dict[str, TaskOutcome]
    sources: list[dict[str, Any]]
    pending: list[Card]


class DecisionAccepted(Out):
    """A decision taken: the change's new status; the resumed run goes on by itself."""

    change_id: str
    status: str
    status_label: str = Field(description="The change's new status in people's words.")
    thread_id: str


class RunCancelling(Out):
    """A stop asked for: the run ends `cancelled` at its next step."""

    run_id: str
    status: Literal["cancelling"]
    thread_id: str


class OperationDescription(Out):
    """An operation of the catalogue, with the JSON schema of its input."""

    id: str
    kind: Literal["read", "write"]
    description: str
    input_schema: dict[str, Any]


class Agent(Out):
    name: str
    domain: str
    kind: Literal["query", "action"]
    operations: list[str]
    read_only: bool
    roles: list[str]
    entitlement: str
    visitor: bool
    tools: list[str]
    description: str
    model_tier: Literal["default", "light"]
    default_model: str = Field(description="The model the agent runs on without a tenant "
                                           "override (its tier's; a file-backed spec by "
                                           "its file's name).")
    default_model_name: str = Field(description="That model as people name it (`Claude "
                                                "Sonnet 4.6`).")


class Agents(Out):
    agents: list[Agent]


class AllowedModel(Out):
    spec: str = Field(description="The spec to choose, `provider:model`.")
    provider: str
    model: str
    name: str = Field(description="The model as people name it (`Claude Sonnet 4.6`).")


class TenantModels(Out):
    """The tenant's overrides and the models it may choose (`GET` and `PUT` alike)."""

    models: dict[str, str] = Field(description="Agent name → model spec.")
    allowed: list[AllowedModel] = Field(
        description="The deployment's models that can run here: the only valid choices.")


class DemoUser(Out):
    user_id: str
    name: str
    role: str = Field(description="Their usual role; any role may be chosen at sign-in.")


class Info(Out):
    """Which model answers and why; in demo mode the example requests; local sign-in."""

    mode: Literal["bedrock", "openai", "demo", "configured"]
    model: str = Field(description="The default tier's model spec (`scripted examples` in "
                                   "demo mode).")
    message: str = Field(description="Why this model, and how to choose another.")
    examples: list[str] = Field(description="Demo mode: the requests it answers.")
    local: bool = Field(description="A local server: `POST /v1/local/sign-in` is open.")
    demo_users: list[DemoUser] = Field(description="Local only: who may sign in.")


class SignedIn(Out):
    token: str = Field(description="A bearer token for the chosen user and role.")


class Me(Out):
    """Who the caller is, as the dashboard's header shows them."""

    tenant_id: str
    user_id: str
    name: str = Field(description="The staff or member record's name for the user id, else "
                                  "the id itself; `Visitor` for a visitor.")
    roles: list[str]


class SettingsChoices(Out):
    modules: list[str] = Field(description="The modules a tenant may enable.")
    operations: list[str] = Field(description="The write operations separation of duties "
                                              "may cover.")
    currencies: list[str] = Field(description="Currencies written with their symbol "
                                              "(any ISO 4217 code may be set).")


class TenantSettings(Out):
    capability_mode: Literal["observe", "enforce"]
    off_topic_reply: str = Field(description="Empty: the generic reply.")
    modules: list[str] = Field(description="The enabled modules.")
    harness_agent_may_force: bool = Field(
        description="An agent on the admin MCP link may force a harness activation.")
    separation_of_duties: list[str] = Field(
        description="The operations whose requester may not decide their own change.")
    currency: str = Field(description="The ISO 4217 code amounts are written in (GBP when "
                                      "none was set).")
    choices: SettingsChoices = Field(description="What the page may offer for each setting.")



class KnowledgeDocument(Out):
    """A knowledge document as a listing shows it."""

    slug: str
    title: str
    kind: Literal["markdown", "text"]
    version: int = Field(description="Goes up by one with every replacement.")
    bytes: int
    sections: int


class KnowledgeDocuments(Out):
    knowledge_version: int = Field(description="Goes up by one with every change.")
    documents: list[KnowledgeDocument]


class KnowledgeDocumentWritten(KnowledgeDocument):
    embedded: int = Field(description="Sections embedded now: those whose text had no "
                                      "stored vector (an unchanged section keeps its own).")
    created: bool = Field(description="Added (true) or replaced (false).")
    knowledge_version: int


class KnowledgeDocumentRemoved(Out):
    slug: str
    removed: bool
    knowledge_version: int


class ReadResult(Open):
    """A read: its data and the records it read."""

    result: Any
    sources: list[Source]


class WriteResult(Open):
    """A write, applied at once (the caller is their own approver)."""

    applied: bool
    change_id: str
    summary: str
    old: dict[str, Any]
    new: dict[str, Any]
    result: Any


class EventResult(Open):
    """What `POST /events` did: keep-warm `{ok, warm}`, a job `{ok, job, ...}`, queue
    records `{ok, processed, batchItemFailures}`."""

    ok: bool


# --- server-sent events: the `data` of each event -------------------------------------------

class RunStarted(Open):
    thread_id: str
    run_id: str
    message: str | None = Field(None, description="The message a new run answers.")
    resumed: list[str] | None = Field(None, description="The change ids whose decisions a "
                                                        "resumed run carries on from.")


class PlannedTask(Open):
    id: str
    domain: str
    operation: str
    instruction: str
    depends_on: list[str]
    agent: str | None


class PlanEvent(Open):
    tasks: list[PlannedTask]
    notes: list[str] | None = None


class TaskStarted(Open):
    task_id: str
    agent: str


class TaskFinished(Open):
    task_id: str
    agent: str | None
    status: str = Field(description="`completed`, `partial`, `no_proposal`, `needs_input`, "
                                    "`denied`, `failed`, `skipped`.")
    calls: list[dict[str, Any]]


class TokenEvent(Open):
    text: str


CARD_SHOWN: Final = ("change_id", "operation", "summary", "old", "new", "args", "status",
                     "thread_id", "requested_by", "request", "created_at", "expires_at")
"""The fields of a change's card (`PendingChange.card`) a client relies on."""
if TYPE_CHECKING:
    Card = Open
else:
    Card = change_view("Card", CARD_SHOWN, base=Open, doc=None,
                       served={"requested_by": Person})


class ApprovalRequired(Open):
    thread_id: str
    changes: list[Card]


class AnswerEvent(Open):
    text: str
    sources: list[Source]


class ErrorEvent(Open):
    code: str
    message: str


class ProgressEvent(Open):
    """A run waiting, e.g. for a model-call slot behind runs that started earlier."""

    stage: str = Field(description="What it waits for: `waiting_for_model`.")
    position: int = Field(description="Its place in the queue.")
    step: str = Field(description="The model call that waits: `decompose`, `task`, "
                                  "`synthesise`.")
    task_id: str | None = None


class RunFinished(Open):
    thread_id: str
    status: str = Field(description="`completed`, `completed_with_errors`, "
                                    "`awaiting_approval`, `cancelled` or `failed`.")
    status_label: str | None = Field(None, description="The run in people's words.")


RUN_EVENTS: dict[str, type[BaseModel]] = {
    "run_started": RunStarted, "plan": PlanEvent, "task_started": TaskStarted,
    "task_finished": TaskFinished, "token": TokenEvent, "approval_required": ApprovalRequired,
    "answer": AnswerEvent, "error": ErrorEvent, "run_finished": RunFinished,
    "progress": ProgressEvent,
}
"""Event name → the model of its JSON `data` (docs/reference.md, Events)."""


# -- GET /v1/harness ---------------------------------------------------------------

class HarnessTestResult(Open):
    passed: int
    failed: int
    model: str | None = None
    at: str | None = None


class HarnessVersionRow(Open):
    version: int = Field(description="0 is the built-in harness.")
    active: bool
    created_at: str | None
    created_by: str
    note: str
    steps: int
    tests: int
    activated_at: str | None = Field(description="When it was last activated.")
    last_test: HarnessTestResult | None = Field(description="Its latest test run.")


class HarnessView(Out):
    """`GET /v1/harness`: every version, and one of them as JSON and as a flowchart."""

    versions: list[HarnessVersionRow] = Field(description="Oldest first, the built-in first.")
    version: int = Field(description="The version shown (`?version=N`, else the active one).")
    active: int = Field(description="The active version.")
    doc: dict[str, Any] = Field(description="The shown version's document, as saved.")
    svg: str = Field(description="Its flowchart, an SVG drawn from `doc`.")
