"""A person calling one operation directly (`POST /v1/operations/{op_id}`, `opsgraph ops call`).

The caller's own permissions apply, checked in this order: the write gate (visitors and
the email channel never write), role, the tenant's plan; then arguments are validated,
references resolved and value-level limits (`authorize`) checked. A read returns its data
and sources. A write is previewed and applied at once — a person acting directly is their
own approver — and leaves an audit record.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from pymongo.database import Database

from opsgraph.errors import BadInput, Forbidden, Unprocessable
from opsgraph.gates import operation_decision
from opsgraph.operations.base import Context, Operation, OpInput
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.records import to_json
from opsgraph.operations.references import resolve_args
from opsgraph.principal import Plan, Principal, parse_plan
from opsgraph.store.scope import TenantScope

Document = dict[str, Any]


def plan_of(scope: TenantScope) -> Plan:
    """The tenant's plan; a tenant without a settings document gets the basic plan."""
    tenant = scope.tenant()
    if tenant is None or not tenant.get("plan"):
        return Plan.BASIC
    return parse_plan(str(tenant["plan"]))


def check_access(principal: Principal, op: Operation, plan: Plan) -> None:
    """Forbidden unless this principal, on this plan, may call `op` at all (the gate)."""
    decision = operation_decision(principal, op, plan)
    if not decision:
        raise Forbidden(decision.reason, gate=decision.gate)


def validate_args(op: Operation, args: object) -> OpInput:
    """`args` parsed into the operation's input model; Unprocessable names each bad field."""
    if not isinstance(args, Mapping):
        raise BadInput(f"args: expected a JSON object, got {type(args).__name__}")
    try:
        return op.input.model_validate(dict(args))
    except ValidationError as exc:
        problems = [{"field": ".".join(str(p) for p in err["loc"]) or "args",
                     "message": err["msg"]} for err in exc.errors()]
        listing = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        raise Unprocessable(f"{op.id}: {listing}", errors=problems) from None


def _reading(ctx: Context) -> Context:
    """The same call on a scope that refuses writes: reads and previews never write."""
    return Context(ctx.scope.reader(), ctx.principal, ctx.now)


def _apply_now(ctx: Context, op: Operation, args: OpInput) -> Document:
    # Imported here: the approvals package imports this module (validate_args, plan_of).
    from opsgraph.approvals.pending import new_change_id

    assert op.preview is not None and op.apply is not None  # guaranteed for writes
    preview = op.preview(_reading(ctx), args)
    change_id = new_change_id()
    result = op.apply(ctx, args, change_id)
    ctx.scope["audit"].insert_one({
        "change_id": change_id, "operation": op.id, "actor": ctx.principal.user_id,
        "at": ctx.now, "from": None, "to": "applied", "via": "direct",
        "summary": preview.summary, "args": args.model_dump(mode="json", by_alias=True)})
    return {"applied": True, "change_id": change_id, "summary": preview.summary,
            "old": to_json(preview.old), "new": to_json(preview.new), "result": to_json(result)}


def call_operation(principal: Principal, op_id: str, args: object, *,
                   db: Database[Document] | None = None,
                   now: datetime | None = None) -> Document:
    """Run one operation for `principal` and return its JSON result (see module docstring)."""
    op = get_operation(op_id)
    scope = TenantScope.of(principal, db)
    check_access(principal, op, plan_of(scope))
    parsed = validate_args(op, args)
    ctx = Context(scope, principal, now or datetime.now(UTC))
    reader = _reading(ctx)
    parsed = resolve_args(reader, op, parsed)
    if op.authorize is not None:
        op.authorize(reader, parsed)
    if op.kind == "write":
        return _apply_now(ctx, op, parsed)
    assert op.run is not None  # guaranteed for reads
    result = op.run(reader, parsed)
    return {"result": to_json(result.data), "sources": [s.to_json() for s in result.sources]}
