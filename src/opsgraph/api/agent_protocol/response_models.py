"""The Agent Protocol's response bodies as `GET /openapi.json` describes them: the shapes
langgraph-sdk 0.4 reads (`langgraph_sdk.schema`), with the fields opsgraph fills."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Assistant(_Open):
    assistant_id: str
    graph_id: str
    name: str
    description: str | None
    config: dict[str, Any]
    context: dict[str, Any]
    version: int
    metadata: dict[str, Any]
    created_at: str | None
    updated_at: str | None


class Assistants(RootModel[list[Assistant]]):
    """`POST /assistants/search`."""


class ProtocolInterrupt(_Open):
    id: str
    value: list[dict[str, Any]]
    """One Agent Inbox HumanInterrupt: `action_request {action, args}`, `config`,
    `description`."""
    change_id: str | None = None


class ProtocolThread(_Open):
    thread_id: str
    created_at: str | None
    updated_at: str | None
    metadata: dict[str, Any]
    status: Literal["idle", "busy", "interrupted", "error"]
    values: dict[str, Any] | None
    interrupts: dict[str, list[ProtocolInterrupt]]


class ProtocolThreads(RootModel[list[ProtocolThread]]):
    """`POST /threads/search`."""


class ThreadState(_Open):
    values: dict[str, Any]
    next: list[str]
    tasks: list[dict[str, Any]]
    interrupts: list[ProtocolInterrupt]
    checkpoint: dict[str, Any]
    parent_checkpoint: dict[str, Any] | None
    metadata: dict[str, Any]
    created_at: str | None


class ThreadStates(RootModel[list[ThreadState]]):
    """`/threads/{id}/history`, newest first."""


class ProtocolRun(_Open):
    run_id: str
    thread_id: str
    assistant_id: str
    created_at: str | None
    updated_at: str | None
    status: Literal["pending", "running", "error", "success", "timeout", "interrupted"]
    metadata: dict[str, Any]
    multitask_strategy: str


class ThreadValues(_Open):
    """A thread's values (`/runs/wait`, `/join`): `messages` in LangChain form, and
    `__interrupt__` when it paused, `__error__` when the run failed."""

    messages: list[dict[str, Any]] = []


class ServerInfo(_Open):
    version: str
    flags: dict[str, bool]


class ResourceMetadata(_Open):
    """RFC 9728 protected-resource metadata of an MCP link."""

    resource: str
    authorization_servers: list[str]
    bearer_methods_supported: list[str]
    token_instructions: str
