"""Run events (docs/reference.md): one shape for SSE and for `--json` lines."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opsgraph.engine.thread_log import ThreadLog

EVENT_NAMES = frozenset({
    "run_started", "plan", "task_started", "task_finished", "token", "approval_required",
    "answer", "error", "run_finished", "progress",
})


@dataclass(frozen=True, slots=True)
class Event:
    """One event: `id` is its number within the thread (`engine.thread_log`), a decimal
    string that grows across all the thread's runs."""

    id: str
    event: str
    data: dict[str, Any]

    def to_json_line(self) -> str:
        return json.dumps({"id": self.id, "event": self.event, "data": self.data},
                          default=str, ensure_ascii=False)

    def to_sse(self) -> dict[str, str]:
        """The fields sse-starlette's EventSourceResponse sends."""
        return {"id": self.id, "event": self.event,
                "data": json.dumps(self.data, default=str, ensure_ascii=False)}


class EventIds:
    """Makes one run's events: each is stored in the thread's log as it is made, and its
    id is the number the log gave it."""

    def __init__(self, log: ThreadLog) -> None:
        self.run_id = "run_" + uuid.uuid4().hex[:16]
        self.log = log

    def make(self, event: str, data: dict[str, Any]) -> Event:
        return self.log.append(self.run_id, event, data)

    def make_many(self, events: list[tuple[str, dict[str, Any]]]) -> list[Event]:
        """Several events that came together, stored in one write, in order."""
        return self.log.append_many(self.run_id, events)
