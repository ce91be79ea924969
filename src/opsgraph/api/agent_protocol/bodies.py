"""The Agent Protocol's request bodies, as langgraph-sdk 0.4 sends them.

The SDK sends every field it knows (many with `null`); fields opsgraph has no use for are
ignored rather than refused, so a newer client still works. What opsgraph reads is checked
as strictly as `/v1` checks its own bodies: a wrong field is a 422 naming it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from opsgraph.api.bodies import parse_body
from opsgraph.engine.thread_ids import THREAD_ID_PATTERN
from opsgraph.lazy_build import LazyModel

M = TypeVar("M", bound=BaseModel)
StreamModeName = Literal["values", "updates", "messages-tuple", "messages", "custom",
                         "events", "debug", "tasks", "checkpoints", "tools", "lifecycle"]


class ProtocolBody(LazyModel):
    """A protocol body: fields opsgraph does not use are ignored."""

    model_config = ConfigDict(extra="ignore")


class ThreadCreate(ProtocolBody):
    thread_id: str | None = Field(None, pattern=THREAD_ID_PATTERN)
    metadata: dict[str, Any] = Field(default_factory=dict)
    if_exists: Literal["raise", "do_nothing"] | None = None


class ThreadSearch(ProtocolBody):
    metadata: dict[str, Any] | None = None
    ids: list[str] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0)


class HistoryQuery(ProtocolBody):
    limit: int = Field(10, ge=1, le=1000)


class AssistantSearch(ProtocolBody):
    graph_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0)


class ResumeCommand(ProtocolBody):
    """`command`: only `resume` (HumanResponses); a `goto` or `update` is refused."""

    model_config = ConfigDict(extra="forbid")
    resume: Any = None
    goto: Any = None
    update: Any = None


class RunCreate(ProtocolBody):
    assistant_id: str = "opsgraph"
    input: dict[str, Any] | None = None
    command: ResumeCommand | None = None
    stream_mode: StreamModeName | list[StreamModeName] = "values"
    metadata: dict[str, Any] | None = None

    def modes(self) -> frozenset[str]:
        """The stream modes asked for (`messages` is served as `messages-tuple`)."""
        asked = [self.stream_mode] if isinstance(self.stream_mode, str) else self.stream_mode
        return frozenset("messages-tuple" if m == "messages" else m for m in asked)


def read_body(raw: bytes, model: type[M]) -> M:
    """The body as `model`; an empty body (the SDK sends none to some routes) is `{}`."""
    return parse_body(raw if raw.strip() else b"{}", model)
