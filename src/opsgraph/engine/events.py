"""Run events (docs/reference.md): one shape for SSE and for `--json` lines."""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass
from typing import Any

EVENT_NAMES = frozenset({
    "run_started", "plan", "task_started", "task_finished", "token", "approval_required",
    "answer", "error", "run_finished", "progress",
})


@dataclass(frozen=True, slots=True)
class Event:
    """One event: `id` is unique within the thread (run id + sequence)."""

    id: str
    event: str
    data: dict[str, Any]

    def to_json_line(self) -> str:
        return json.dumps({"event": self.event, "data": self.data}, default=str,
                          ensure_ascii=False)

    def to_sse(self) -> dict[str, str]:
        """The fields sse-starlette's EventSourceResponse sends."""
        return {"id": self.id, "event": self.event,
                "data": json.dumps(self.data, default=str, ensure_ascii=False)}


class EventIds:
    """Mints event ids for one run: `<run_id>.<n>`."""

    def __init__(self) -> None:
        self.run_id = "run_" + uuid.uuid4().hex[:16]
        self._seq = itertools.count(1)

    def make(self, event: str, data: dict[str, Any]) -> Event:
        return Event(f"{self.run_id}.{next(self._seq)}", event, data)
