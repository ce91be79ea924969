"""A run's opsgraph events as the Agent Protocol's stream parts.

The run's own events (stored per thread as they are emitted, `engine.thread_log`) are
translated, never recomputed: `metadata {run_id, thread_id}` first; `values` (the thread's
state in LangChain message form) at the start and the end, with `__interrupt__` when the
run paused; `updates` per step (`decompose`, `execute`, `synthesise`, `__interrupt__`);
`messages` (the `messages-tuple` mode) as AI message chunks from the run's tokens;
`custom` carrying every opsgraph event as `{event, data}`; `error {error, message}`.
"""

from __future__ import annotations

import json
from typing import Any

from opsgraph.api.agent_protocol.views import (
    answer_message_id,
    graph_snapshot,
    lc_message,
    thread_state,
    values_of,
)
from opsgraph.engine.events import Event
from opsgraph.principal import Principal

Part = tuple[str, Any]  # (protocol event name, data)
_STEP = {"plan": "decompose", "task_finished": "execute", "answer": "synthesise"}


class ProtocolStream:
    """Translates one run's events, in order, for the modes a client asked for."""

    def __init__(self, principal: Principal, thread_id: str, modes: frozenset[str],
                 message: str | None = None) -> None:
        self.principal = principal
        self.thread_id = thread_id
        self.modes = modes
        self.message = message  # the new human message (None: a resume)
        self.run_id = ""
        self.tokens = 0

    def _values(self, paused: bool) -> dict[str, Any]:
        state = thread_state(self.principal, self.thread_id,
                             graph_snapshot(self.principal, self.thread_id))
        values: dict[str, Any] = dict(state["values"])
        if paused:
            values["__interrupt__"] = state["interrupts"]
        return values

    def _start(self, data: dict[str, Any]) -> list[Part]:
        self.run_id = str(data.get("run_id"))
        parts: list[Part] = [("metadata", {"run_id": self.run_id, "thread_id": self.thread_id,
                                           "attempt": 1})]
        if "values" in self.modes:
            snap = graph_snapshot(self.principal, self.thread_id)
            values = values_of(self.thread_id, snap.values)
            if self.message is not None:  # the checkpoint has it once the run has gone on
                values["messages"].append(lc_message(
                    "user", self.message, f"{self.run_id}:request"))
            parts.append(("values", values))
        return parts

    def _chunk(self, text: str) -> Part:
        from langchain_core.messages import AIMessageChunk  # heavy: langchain_core (cold start)

        chunk = AIMessageChunk(content=text, id=answer_message_id(self.run_id)).model_dump()
        return ("messages", [chunk, {"langgraph_node": "synthesise", "run_id": self.run_id,
                                     "thread_id": self.thread_id}])

    def parts(self, event: Event) -> list[Part]:
        """The protocol's parts for one opsgraph event (blocking: may read the store)."""
        name, data = event.event, event.data
        if name == "run_started":
            return self._start(data)
        parts: list[Part] = []
        if "custom" in self.modes:
            parts.append(("custom", {"event": name, "data": data}))
        if name == "token" and "messages-tuple" in self.modes:
            self.tokens += 1
            parts.append(self._chunk(str(data.get("text", ""))))
        if name == "answer" and self.tokens == 0 and "messages-tuple" in self.modes:
            parts.append(self._chunk(str(data.get("text", ""))))  # an answer with no tokens
        if "updates" in self.modes and name in _STEP:
            parts.append(("updates", {_STEP[name]: {name: data}}))
        if name == "approval_required" and "updates" in self.modes:
            parts.append(("updates", {"__interrupt__": self._values(True)["__interrupt__"]}))
        if name == "error":
            parts.append(("error", {"error": data.get("code"), "message": data.get("message")}))
        if name == "run_finished" and "values" in self.modes:
            parts.append(("values", self._values(data.get("status") == "awaiting_approval")))
        return parts


def sse_parts(event: Event, parts: list[Part]) -> list[dict[str, str]]:
    """The parts as sse-starlette fields; the last carries the event's number as its id, so
    a client's `Last-Event-ID` names the opsgraph event it has seen whole."""
    out = [{"event": name, "data": json.dumps(data, default=str, ensure_ascii=False)}
           for name, data in parts]
    if out and event.id:
        out[-1]["id"] = event.id
    return out
