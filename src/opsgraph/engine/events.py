"""Run events (docs/reference.md): one shape for SSE and for `--json` lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

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
