"""A manager's edit of a pending change: the values go back through every check.

Edited values are merged over the stored arguments and invoked in mode `preview` for the
*decider* (`operations.invoke`): the decider's gate (write gate, the operation's roles, the
tenant's plan), the input schema, references resolved (names → ids), the value-level
`authorize`, then the operation's preview on a read-only scope, so an edit can never widen
what the decider may do and the stored card shows what will really be applied. A value that
does not make a valid change (an unknown or ambiguous name, an email already taken,
nothing left to change) is 422, never 404 nor 409, which say the change itself is missing or
no longer pending. All of it runs before the compare-and-set: an invalid edit leaves the
change pending.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opsgraph.approvals.pending import PendingChange, json_args
from opsgraph.errors import BadInput, Conflict, NotFound, Unprocessable
from opsgraph.operations.base import Context, Operation, Preview
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.invoke import invoke
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


def validate_edit(scope: TenantScope, change: PendingChange, values: Mapping[str, Any],
                  decider: Principal, now: datetime) -> Edit:
    """Check edited values as if the decider had proposed them; raise 422 or 403."""
    if not isinstance(values, Mapping) or not values:
        raise BadInput("values: an edit needs an object of field → new value")
    ctx = Context(scope=scope, principal=decider, now=now)
    try:
        edited = invoke(operation_of(change), ctx, {**change.args, **values}, "preview")
    except (BadInput, NotFound, Conflict) as exc:
        raise Unprocessable(exc.message, **exc.detail) from exc
    args = edited.json_args
    return Edit(values=json_args(values), args=args, diff=diff_args(change.args, args),
                preview=edited.preview)
