"""The audit trail of pending changes: one row per status transition, never updated.

A row says who moved which change from which status to which, when, and from which
thread: `{tenant_id, change_id, operation, from, to, actor, thread_id, at, detail}`.
Proposing is the transition None → pending; an apply taken over after a crash is
executing → executing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from opsgraph.store.scope import Document, TenantScope

COLLECTION = "audit"


def record_transition(scope: TenantScope, change_id: str, from_status: str | None,
                      to_status: str, actor: str, thread_id: str,
                      detail: Mapping[str, Any] | None = None, *,
                      operation: str | None = None, now: datetime | None = None) -> None:
    """Append the audit row of one transition (the operation is looked up when not given)."""
    if operation is None:
        change = scope["pending_changes"].find_one({"_id": change_id}, projection={"operation": 1})
        operation = change["operation"] if change else None
    scope[COLLECTION].insert_one({
        "change_id": change_id,
        "operation": operation,
        "from": from_status,
        "to": to_status,
        "actor": actor,
        "thread_id": thread_id,
        "at": now if now is not None else datetime.now(UTC),
        "detail": dict(detail) if detail else {},
    })


def history(scope: TenantScope, change_id: str) -> list[Document]:
    """Every audit row of a change, in the order the transitions happened."""
    rows = scope[COLLECTION].find({"change_id": change_id}, sort=[("at", 1), ("_id", 1)],
                                  projection={"_id": 0})
    return list(rows)
