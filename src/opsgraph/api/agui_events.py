"""A run's opsgraph events as AG-UI events (`ag-ui-protocol`), translated one by one.

`run_started` → RUN_STARTED (the client's run id; opsgraph's in `metadata`); `plan` →
the `plan` step and a STATE_SNAPSHOT; each task → a tool call (start, args with its
instruction, end) and, when it finishes, its TOOL_CALL_RESULT and a new snapshot;
`token` → TEXT_MESSAGE_START/CONTENT (`answer` closes it, or carries the whole text when
no token came); `approval_required` → CUSTOM `on_interrupt` with the HumanInterrupts (as
ag-ui-langgraph names it) and, at the end, RUN_FINISHED with an `interrupt` outcome whose
interrupt ids resume the cards; `progress` → CUSTOM `progress`; a run that failed ends with
RUN_ERROR, a cancelled one with a `cancelled` outcome.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from opsgraph.api.agent_protocol.views import (
    answer_message_id,
    graph_snapshot,
    pending_cards,
    thread_state,
)
from opsgraph.engine.events import Event
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

if TYPE_CHECKING:
    from ag_ui.core import BaseEvent

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["type"], "description": "an Agent Inbox HumanResponse",
    "properties": {"type": {"enum": ["accept", "edit", "response", "ignore"]},
                   "args": {"description": "edit: {action, args}; response: the text"}}}


class AguiRun:
    """Translates one run's events, in order, into AG-UI events."""

    def __init__(self, principal: Principal, thread_id: str, run_id: str) -> None:
        self.principal = principal
        self.thread_id = thread_id
        self.run_id = run_id  # the client's (RunAgentInput.run_id)
        self.ours = ""
        self.text_open = False
        self.texts = 0
        self.plan: list[dict[str, Any]] = []
        self.tasks: dict[str, dict[str, Any]] = {}
        self.errors: list[dict[str, Any]] = []

    def _call_id(self, task_id: str) -> str:
        return f"{self.ours}:{task_id}"

    def _snapshot(self) -> BaseEvent:
        from ag_ui.core import StateSnapshotEvent  # heavy: ag_ui (cold start)

        return StateSnapshotEvent(snapshot={"thread_id": self.thread_id, "plan": self.plan,
                                            "tasks": self.tasks})

    def _text(self, delta: str) -> list[BaseEvent]:
        # heavy: ag_ui (cold start)
        from ag_ui.core import TextMessageContentEvent, TextMessageStartEvent

        out: list[BaseEvent] = []
        if not self.text_open:
            self.text_open = True
            out.append(TextMessageStartEvent(message_id=answer_message_id(self.ours),
                                             role="assistant"))
        if delta:
            self.texts += 1
            out.append(TextMessageContentEvent(message_id=answer_message_id(self.ours),
                                               delta=delta))
        return out

    def _close_text(self) -> list[BaseEvent]:
        from ag_ui.core import TextMessageEndEvent  # heavy: ag_ui (cold start)

        if not self.text_open:
            return []
        self.text_open = False
        return [TextMessageEndEvent(message_id=answer_message_id(self.ours))]

    def _task_started(self, data: dict[str, Any]) -> list[BaseEvent]:
        # heavy: ag_ui (cold start)
        from ag_ui.core import ToolCallArgsEvent, ToolCallEndEvent, ToolCallStartEvent

        task_id = str(data.get("task_id"))
        planned = next((t for t in self.plan if t.get("id") == task_id), {})
        self.tasks[task_id] = {"agent": data.get("agent"), "status": "running"}
        call_id = self._call_id(task_id)
        args = json.dumps({"instruction": planned.get("instruction", "")}, ensure_ascii=False)
        return [ToolCallStartEvent(tool_call_id=call_id,
                                   tool_call_name=str(data.get("agent") or "task")),
                ToolCallArgsEvent(tool_call_id=call_id, delta=args),
                ToolCallEndEvent(tool_call_id=call_id)]

    def _task_finished(self, data: dict[str, Any]) -> list[BaseEvent]:
        from ag_ui.core import ToolCallResultEvent  # heavy: ag_ui (cold start)

        task_id = str(data.get("task_id"))
        self.tasks[task_id] = {"agent": data.get("agent"), "status": data.get("status")}
        return [ToolCallResultEvent(message_id=f"{self._call_id(task_id)}:result",
                                    tool_call_id=self._call_id(task_id), role="tool",
                                    content=json.dumps(data, default=str, ensure_ascii=False)),
                self._snapshot()]

    def interrupts(self) -> list[dict[str, Any]]:
        """The thread's pending interrupts (`{id, value: [HumanInterrupt], change_id}`)."""
        return list(thread_state(self.principal, self.thread_id,
                                 graph_snapshot(self.principal, self.thread_id))["interrupts"])

    def _interrupted(self) -> list[BaseEvent]:
        from ag_ui.core import CustomEvent  # heavy: ag_ui (cold start)

        return [CustomEvent(name="on_interrupt", value=self.interrupts())]

    def _finished(self, data: dict[str, Any]) -> list[BaseEvent]:
        # heavy: ag_ui (cold start)
        from ag_ui.core import (
            Interrupt,
            RunErrorEvent,
            RunFinishedCancelledOutcome,
            RunFinishedEvent,
            RunFinishedInterruptOutcome,
            RunFinishedSuccessOutcome,
        )

        status = str(data.get("status"))
        out = [*self._close_text(), self._messages()]
        if status == "failed":
            last = self.errors[-1] if self.errors else {"message": "the run failed"}
            return [*out, RunErrorEvent(message=str(last.get("message")),
                                        code=last.get("code"))]
        outcome: Any = RunFinishedSuccessOutcome()
        if status == "cancelled":
            outcome = RunFinishedCancelledOutcome()
        cards = pending_cards(TenantScope.of(self.principal), self.thread_id)
        pending = [Interrupt(id=i["id"], reason="approval_required",
                             message=i["value"][0]["description"],
                             response_schema=RESPONSE_SCHEMA,
                             expires_at=(cards.get(str(i["change_id"])) or {}).get("expires_at"))
                   for i in (self.interrupts() if status == "awaiting_approval" else [])]
        if pending:
            outcome = RunFinishedInterruptOutcome(interrupts=pending)
        return [*out, RunFinishedEvent(thread_id=self.thread_id, run_id=self.run_id,
                                       outcome=outcome, result={"status": status},
                                       metadata={"opsgraph_run_id": self.ours})]

    def _messages(self) -> BaseEvent:
        # heavy: ag_ui (cold start)
        from ag_ui.core import AssistantMessage, MessagesSnapshotEvent, UserMessage

        values = thread_state(self.principal, self.thread_id)["values"]
        kinds = {"human": UserMessage, "ai": AssistantMessage}
        messages = [kinds[m["type"]](id=m["id"], content=m["content"])
                    for m in values.get("messages", []) if m["type"] in kinds]
        return MessagesSnapshotEvent(messages=messages)

    def events(self, event: Event) -> list[BaseEvent]:
        """The AG-UI events for one opsgraph event (blocking: may read the store)."""
        # heavy: ag_ui (cold start)
        from ag_ui.core import CustomEvent, RunStartedEvent, StepFinishedEvent, StepStartedEvent

        name, data = event.event, event.data
        if name == "run_started":
            self.ours = str(data.get("run_id"))
            return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id,
                                    metadata={"opsgraph_run_id": self.ours})]
        if name == "plan":
            self.plan = list(data.get("tasks") or [])
            return [StepStartedEvent(step_name="plan"), StepFinishedEvent(step_name="plan"),
                    self._snapshot()]
        if name == "task_started":
            return self._task_started(data)
        if name == "task_finished":
            return self._task_finished(data)
        if name == "token":
            return self._text(str(data.get("text", "")))
        if name == "answer":
            text = str(data.get("text", ""))
            return [*(self._text(text) if self.texts == 0 else []), *self._close_text(),
                    CustomEvent(name="answer", value=data)]
        if name == "approval_required":
            return self._interrupted()
        if name == "error":
            self.errors.append(dict(data))
            return [CustomEvent(name="error", value=data)]
        if name == "run_finished":
            return self._finished(data)
        return [CustomEvent(name=name, value=data)]
