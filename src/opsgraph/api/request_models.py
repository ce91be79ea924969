"""The request bodies of the HTTP routes (docs/reference.md), as pydantic models.

Every body is read by `bodies.parse_body`: bytes that are not a JSON object are a 400
(`BadInput`); an object whose fields are wrong is a 422 listing each field at fault. The
same models generate the request schemas of `GET /openapi.json`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, RootModel, field_validator

from opsgraph.api.limits import MAX_MESSAGE_CHARS, check_message
from opsgraph.approvals.decisions import Decision
from opsgraph.engine.thread_ids import THREAD_ID_PATTERN
from opsgraph.lazy_build import LazyModel

AGENT_NAME_PATTERN = r"^[a-z0-9_]+\.[a-z0-9_]+$"
MAX_FEEDBACK_CHARS = 2_000
MAX_SPEC_CHARS = 300


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


class Body(LazyModel):
    """A request body: unknown fields are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


class RunRequest(Body):
    """`POST /v1/runs`: a message, on a new thread or one of the caller's."""

    message: Annotated[str, Field(
        min_length=1, max_length=MAX_MESSAGE_CHARS, json_schema_extra={"pattern": r"\S"},
        description=f"What the caller asks, 1 to {MAX_MESSAGE_CHARS:,} characters, not blank "
                    f"(over {MAX_MESSAGE_CHARS:,} is a 400, before any model call)."),
        AfterValidator(_not_blank)]
    thread_id: str | None = Field(
        None, pattern=THREAD_ID_PATTERN,
        description="One of the caller's threads; omit it to start a new thread (its id "
                    "comes back in `run_started`).")

    @field_validator("message", mode="before")
    @classmethod
    def _message_cap(cls, value: Any) -> Any:
        # The message cap is a 400 (docs/reference.md, Limits), not a field error.
        if isinstance(value, str):
            check_message(value)
        return value


class DecisionRequest(Body):
    """`POST /v1/approvals/{change_id}`: a manager's decision on a pending change."""

    decision: Decision
    feedback: str | None = Field(
        None, max_length=MAX_FEEDBACK_CHARS,
        description="Why (reject) or what should change (revise).")
    values: dict[str, Any] | None = Field(
        None, description="The edited arguments (decision `edit`): field → new value.")


class OperationRequest(Body):
    """`POST /v1/operations/{op_id}`: the operation's arguments."""

    args: dict[str, Any] = Field(
        default_factory=dict,
        description="The operation's input (docs/reference.md lists each operation's fields).")


AgentName = Annotated[str, Field(pattern=AGENT_NAME_PATTERN)]
ModelChoice = Annotated[str, Field(min_length=1, max_length=MAX_SPEC_CHARS,
                                   description="A spec from `allowed` of GET /v1/tenant/models.")]


class TenantModelsRequest(Body):
    """`PUT /v1/tenant/models`: every override of the tenant (replaces what was there)."""

    models: dict[AgentName, ModelChoice] = Field(
        description="Agent name → model spec, each one of the models the deployment allows.")


class BareTenantModels(RootModel[dict[AgentName, ModelChoice]]):
    """`PUT /v1/tenant/models` as `{agent: model_spec}` (the same overrides, unwrapped)."""


class LocalSignInRequest(Body):
    """`POST /v1/local/sign-in`: one of the demo users (`GET /v1/info`), in a role."""

    user_id: str = Field(min_length=1, max_length=128,
                         description="One of `demo_users` of `GET /v1/info`.")
    role: Literal["member", "staff", "manager", "admin"] = Field(
        description="The role to sign in with (a visitor needs no token).")


class TenantSettingsRequest(Body):
    """`PUT /v1/tenant/settings`: the tenant's settings (admin)."""

    capability_mode: Literal["observe", "enforce"] = Field(
        description="The capability gate: `enforce` refuses an agent a verb it does not "
                    "declare; `observe` lets it through and logs it.")
    off_topic_reply: str | None = Field(
        None, max_length=500,
        description="The club's own reply to a message that asks nothing of it (the "
                    "built-in harness sends it instead of the generic words); absent: "
                    "unchanged, empty: the generic words again.")
    modules: list[str] | None = Field(
        None, max_length=20,
        description="The modules enabled (e.g. `safeguarding`): their rules join the "
                    "agents' prompts and their tools the agents' tools; absent: unchanged.")
    harness_agent_may_force: bool | None = Field(
        None, description="Whether an agent on the admin MCP link may activate a harness "
                          "version over failing tests (`force`); off, that stays a "
                          "person's choice. Absent: unchanged.")
    separation_of_duties: list[str] | None = Field(
        None, max_length=50,
        description="The write operations whose requester may not decide their own change "
                    "(403 `own_change`); default `invoices.refund`, `invoices.issue`; [] "
                    "turns it off. Absent: unchanged.")
    currency: str | None = Field(
        None, pattern=r"^[A-Za-z]{3}$",
        description="The ISO 4217 code summaries and answers write amounts in (`GBP`, "
                    "`EUR`, `CHF`); absent: unchanged.")


class KnowledgeDocumentRequest(Body):
    """`PUT /v1/knowledge/documents/{slug}`: the document's new content (admin)."""

    title: str | None = Field(None, min_length=1, max_length=200,
                              description="Default: the first `# ` heading, else the slug.")
    body: str = Field(min_length=1, description="Markdown or plain text, at most 1 MiB.")
    kind: Literal["markdown", "text"] = Field(
        "markdown", description="Markdown (sections from headings) or plain text (one "
                                "section).")


class EventRequest(LazyModel):
    """`POST /events`: a keep-warm ping, a scheduled job, or SQS-shaped queue records."""

    model_config = ConfigDict(extra="allow")

    keep_warm: bool | None = Field(None, description="A keep-warm ping (open to anyone).")
    source: str | None = Field(None, description="`keep-warm`, `serverless-plugin-warmup` or "
                                                 "`aws.events` (with `detail.job`).")
    job: str | None = Field(None, description="A scheduled job to run now: "
                                              "`expire_approvals`.")
    detail: dict[str, Any] | None = None
    Records: list[dict[str, Any]] | None = Field(
        None, description="Queue records; each body is JSON `{type: inbound_email, tenant, "
                          "raw}` naming the caller's own tenant.")
