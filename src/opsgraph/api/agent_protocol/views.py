"""opsgraph's threads as the Agent Protocol shows them: LangChain messages, HumanInterrupts,
`Thread` and `ThreadState` documents as langgraph-sdk reads them.

Everything here is read from what `/v1` reads: the thread's summary (`engine.thread_log`),
its checkpoint and its pending changes. A paused thread's interrupts keep the graph's own
interrupt ids, so a client may resume them by id; each one's value is the list of one
HumanInterrupt that Agent Inbox renders (`action_request`, `config`, `description`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from opsgraph.api.threads import pending_by_thread
from opsgraph.engine.state import RunState
from opsgraph.operations.records import to_json
from opsgraph.principal import Principal
from opsgraph.store.scope import Document, TenantScope

GRAPH_ID = "opsgraph"
ALLOW_ALL = {"allow_accept": True, "allow_edit": True, "allow_respond": True,
             "allow_ignore": True}
# opsgraph's run statuses (engine.runner) → the protocol's thread and run statuses
THREAD_STATUS = {"running": "busy", "awaiting_approval": "interrupted", "failed": "error"}
RUN_STATUS = {"running": "running", "completed": "success",
              "completed_with_errors": "success", "awaiting_approval": "interrupted",
              "failed": "error", "cancelled": "interrupted"}


def iso(value: Any) -> str | None:
    """A stored datetime as ISO 8601 with its offset (None stays None)."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return None if value is None else str(value)


def message_id(thread_id: str, index: int) -> str:
    """A history entry's message id: stable on every read of the thread."""
    return f"{thread_id}:{index}"


def answer_message_id(run_id: str) -> str:
    """The id of the AI message a run's tokens build up (`messages-tuple`)."""
    return f"{run_id}:answer"


def lc_message(role: str, content: str, msg_id: str) -> dict[str, Any]:
    """One turn in LangChain's serialised message form (what Agent Chat UI renders)."""
    # heavy: langchain_core (cold start)
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    kinds = {"user": HumanMessage, "assistant": AIMessage, "summary": SystemMessage}
    message = kinds.get(role, AIMessage)(content=content, id=msg_id)
    out: dict[str, Any] = message.model_dump()
    return out


def lc_messages(thread_id: str, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thread's history as LangChain messages."""
    return [lc_message(str(t["role"]), str(t["content"]), message_id(thread_id, n))
            for n, t in enumerate(history)]


def describe_card(card: dict[str, Any]) -> str:
    """What a manager reads on the card: the change, who asked and for what, until when."""
    who = (card.get("requested_by") or {}).get("name") or "someone"
    parts = [str(card.get("summary") or card.get("operation"))]
    if card.get("request"):
        parts.append(f"{who} asked: “{card['request']}”")
    if card.get("expires_at"):
        parts.append(f"Decide before {card['expires_at']}.")
    parts.append("Accept applies it, Edit changes its values first, Respond asks for a "
                 "different proposal, Ignore rejects it.")
    return "\n\n".join(parts)


def human_interrupt(card: dict[str, Any]) -> dict[str, Any]:
    """One pending card as an Agent Inbox HumanInterrupt."""
    return {"action_request": {"action": str(card.get("operation")),
                               "args": dict(card.get("args") or {})},
            "config": dict(ALLOW_ALL), "description": describe_card(card)}


def interrupts_of(raw: tuple[Any, ...], cards: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The thread's pending interrupts in the protocol's form (`{id, value}`), in order;
    each card's current form comes from `cards` (change id → card) when it is there."""
    out = []
    for interrupt in raw:
        value = interrupt.value if isinstance(interrupt.value, dict) else {}
        card = cards.get(str(value.get("change_id"))) or value.get("card")
        if isinstance(card, dict):
            out.append({"id": interrupt.id, "value": [human_interrupt(card)],
                        "change_id": card.get("change_id")})
    return out


def pending_cards(scope: TenantScope, thread_id: str) -> dict[str, dict[str, Any]]:
    """Change id → card of the thread's pending changes."""
    return {c["change_id"]: c for c in pending_by_thread(scope, [thread_id])[thread_id]}


def graph_snapshot(principal: Principal, thread_id: str) -> Any:
    """The graph's `StateSnapshot` of the thread (its latest checkpoint)."""
    from opsgraph.engine.graph import get_graph  # heavy: langgraph (cold start)
    from opsgraph.engine.runner import graph_thread_id  # heavy: langgraph (cold start)

    return get_graph().get_state({"configurable": {
        "thread_id": graph_thread_id(principal, thread_id)}})


def values_of(thread_id: str, values: dict[str, Any] | None) -> dict[str, Any]:
    """A checkpoint's values as the protocol's `values`: messages, plan, results, sources."""
    if not values:
        return {"messages": []}
    state = RunState(**values)
    body = {"messages": lc_messages(thread_id, [dict(t) for t in state.history]),
            "plan": [t.model_dump() for t in state.plan],
            "results": {k: {"agent": r.agent, "status": r.status, "summary": r.content
                            or r.error or ""} for k, r in state.results.items()},
            "sources": state.answer.sources if state.answer else []}
    out: dict[str, Any] = to_json(body)
    return out


def checkpoint_of(thread_id: str, config: dict[str, Any] | None) -> dict[str, Any]:
    """The `Checkpoint` reference of a snapshot's config."""
    conf = (config or {}).get("configurable") or {}
    return {"thread_id": thread_id, "checkpoint_ns": conf.get("checkpoint_ns", ""),
            "checkpoint_id": conf.get("checkpoint_id"), "checkpoint_map": None}


def thread_state(principal: Principal, thread_id: str, snapshot: Any = None) -> dict[str, Any]:
    """`GET /threads/{id}/state`: values, the pending interrupts (also as one task), the
    checkpoint."""
    snap = snapshot if snapshot is not None else graph_snapshot(principal, thread_id)
    cards = pending_cards(TenantScope.of(principal), thread_id)
    interrupts = interrupts_of(tuple(snap.interrupts), cards)
    tasks = [{"id": t.id, "name": t.name, "error": None, "checkpoint": None, "state": None,
              "result": None,
              "interrupts": [i for i in interrupts
                             if i["id"] in {x.id for x in t.interrupts}]}
             for t in snap.tasks]
    parent = snap.parent_config
    return {"values": values_of(thread_id, snap.values),
            "next": list(snap.next), "tasks": tasks, "interrupts": interrupts,
            "checkpoint": checkpoint_of(thread_id, snap.config),
            "parent_checkpoint": checkpoint_of(thread_id, parent) if parent else None,
            "metadata": {"step": (snap.metadata or {}).get("step")},
            "created_at": snap.created_at}


def thread_doc(principal: Principal, summary: Document, *,
               with_values: bool = True) -> dict[str, Any]:
    """One `Thread`: ids, times, metadata, status, values and interrupts by task."""
    thread_id = str(summary["thread_id"])
    status = THREAD_STATUS.get(str(summary.get("status")), "idle")
    values: dict[str, Any] | None = None
    interrupts: dict[str, list[dict[str, Any]]] = {}
    if with_values:
        snap = graph_snapshot(principal, thread_id)
        state = thread_state(principal, thread_id, snap)
        values = state["values"]
        interrupts = {t["id"]: t["interrupts"] for t in state["tasks"] if t["interrupts"]}
        if status == "interrupted" and not interrupts:
            status = "idle"  # every card was decided or withdrawn since it paused
    metadata = {"graph_id": GRAPH_ID, "assistant_id": GRAPH_ID,
                **dict(summary.get("metadata") or {})}
    return {"thread_id": thread_id, "created_at": iso(summary.get("created_at")),
            "updated_at": iso(summary.get("updated_at")), "metadata": metadata,
            "status": status, "values": values, "interrupts": interrupts,
            "config": {}}
