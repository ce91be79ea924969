"""A person calling one operation directly (`POST /v1/operations/{op_id}`, `opsgraph ops call`).

The call goes through `operations.invoke` with the caller's own permissions: a read in mode
`read` returns its data and sources; a write in mode `apply` is previewed and applied at
once — a person acting directly is their own approver — and leaves one audit row. This
module only renders the outcome as the JSON the route and the command print.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo.database import Database

from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.invoke import invoke
from opsgraph.operations.records import to_json
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

Document = dict[str, Any]


def call_operation(principal: Principal, op_id: str, args: object, *,
                   db: Database[Document] | None = None,
                   now: datetime | None = None) -> Document:
    """Run one operation for `principal` and return its JSON result (see module docstring)."""
    op = get_operation(op_id)
    ctx = Context(TenantScope.of(principal, db), principal, now or datetime.now(UTC))
    if op.kind == "read":
        ran = invoke(op, ctx, args, "read")
        return {"result": to_json(ran.result.data),
                "sources": [s.to_json() for s in ran.result.sources]}
    applied = invoke(op, ctx, args, "apply")
    return {"applied": True, "change_id": applied.change_id,
            "summary": applied.preview.summary, "old": to_json(applied.preview.old),
            "new": to_json(applied.preview.new), "result": to_json(applied.result)}
