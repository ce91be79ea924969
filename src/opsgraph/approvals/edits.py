"""A manager's edit of a pending change: the values go back through every check.

Edited values are merged over the stored arguments, validated by the operation's input
schema, resolved (names → ids), and checked for the *decider* exactly as a direct call
would be (write gate, the operation's roles, the tenant's plan, the value-level
`authorize`), so an edit can never widen what the decider may do. The operation's preview
then runs again on the edited arguments (read-only), so the stored card shows what will
really be applied. All of it runs before the compare-and-set: an invalid edit leaves the
change pending.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opsgraph.approvals.pending import PendingChange, json_args
from opsgraph.errors import BadInput, Conflict, Forbidden, NotFound, Unprocessable
from opsgraph.gates import operation_decision
from opsgraph.operations.base import Context, Operation, OpInput, Preview
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.direct import plan_of, validate_args
from opsgraph.operations.references import resolve_args
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope


@dataclass(frozen=True, slots=True)
class Edit:
    """The outcome of a valid edit: what was sent, the new arguments and what changed."""

    values: dict[str, Any]
    args: dict[str, Any]
    diff: dict[str, dict[str, Any]]  # field (dotted path) -> {"from": old, "to": new}
    preview: Preview  # the card of the edited change: old and new values, summary


def operation_of(change: PendingChange) -> Operation:
    """The catalogue entry of a change's operation."""
    return get_operation(change.operation)


def diff_args(before: Mapping[str, Any], after: Mapping[str, Any], prefix: str = "",
              ) -> dict[str, dict[str, Any]]:
    """Field → {from, to} for every argument that changed; nested objects by dotted path."""
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            out.update(diff_args(old, new, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = {"from": old, "to": new}
    return out


def _resolve(ctx: Context, op: Operation, model: OpInput) -> OpInput:
    try:
        return resolve_args(ctx, op, model)
    except (BadInput, NotFound) as exc:
        # An unknown or ambiguous name among the edited values is an invalid value (422),
        # not a missing change (404) nor a malformed request (400).
        raise Unprocessable(exc.message, **exc.detail) from exc


def _preview(ctx: Context, op: Operation, model: OpInput) -> Preview:
    """The operation's preview of the edited arguments, on a scope that refuses writes."""
    assert op.preview is not None  # a pending change is always of a write operation
    try:
        return op.preview(Context(ctx.scope.reader(), ctx.principal, ctx.now), model)
    except (BadInput, NotFound, Conflict) as exc:
        # The edited values do not make a valid change (an email already taken, nothing
        # left to change): 422, and never 409, which says the change is not pending.
        raise Unprocessable(exc.message, **exc.detail) from exc


def validate_edit(scope: TenantScope, change: PendingChange, values: Mapping[str, Any],
                  decider: Principal, now: datetime) -> Edit:
    """Check edited values as if the decider had proposed them; raise 422 or 403."""
    if not isinstance(values, Mapping) or not values:
        raise BadInput("values: an edit needs an object of field → new value")
    op = operation_of(change)
    gate = operation_decision(decider, op, plan_of(scope))
    if not gate:
        raise Forbidden(gate.reason, gate=gate.gate)
    model = validate_args(op, {**change.args, **values})
    ctx = Context(scope=scope, principal=decider, now=now)
    resolved = _resolve(ctx, op, model)
    if op.authorize is not None:
        op.authorize(ctx, resolved)
    args = json_args(resolved)
    return Edit(values=json_args(values), args=args, diff=diff_args(change.args, args),
                preview=_preview(ctx, op, resolved))
