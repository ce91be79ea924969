"""The audit trail: one row per change of state of a change, never updated.

Every row, whoever writes it, has one shape: `{tenant_id, change_id, operation, from, to,
actor, thread_id, at, detail}`. An agent's proposal is None → pending, a manager's decision
moves it on (pending → executing → applied | failed, pending → rejected | superseded |
expired), and an apply taken over after a crash is executing → executing. A person's direct
write (`operations.invoke`, mode `apply`) is None → applied with no thread and
`detail = {via: "direct", summary, args}`.

This module sits below operations and approvals and depends on the tenant scope only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from opsgraph.store.scope import Document, TenantScope

COLLECTION = "audit"


def record_transition(scope: TenantScope, change_id: str, from_status: str | None,
                      to_status: str, actor: str, thread_id: str | None,
                      detail: Mapping[str, Any] | None = None, *, operation: str,
                      now: datetime | None = None) -> None:
    """Append the audit row of one transition: the only writer of the audit collection."""
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
