"""Separation of duties: whoever asked for a change may not decide it, for the operations
the tenant names (`separation_of_duties` on its document; money by default).

A manager who asks for a refund cannot approve it himself: another manager or an admin
decides. The setting lists operation ids; absent, it covers `DEFAULT_OPERATIONS`; an empty
list turns it off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opsgraph.approvals.pending import PendingChange
from opsgraph.errors import BadInput, Forbidden
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

SETTING = "separation_of_duties"
DEFAULT_OPERATIONS: tuple[str, ...] = ("invoices.refund", "invoices.issue")


class OwnChange(Forbidden):
    """A requester deciding their own change where the tenant separates the duties."""

    code = "own_change"


def covered_operations(tenant: Mapping[str, Any] | None) -> list[str]:
    """The operations the tenant's setting covers (the default when it has none)."""
    value = (tenant or {}).get(SETTING)
    if not isinstance(value, list):
        return list(DEFAULT_OPERATIONS)
    return [str(op) for op in value]


def check_operations(ops: list[str]) -> list[str]:
    """The setting's operations checked against the catalogue's writes (400 naming the
    unknown ones); sorted, once each."""
    writes = sorted(op.id for op in CATALOGUE.values() if op.kind == "write")
    unknown = sorted(set(ops) - set(writes))
    if unknown:
        raise BadInput(f"separation_of_duties: not a write operation: {', '.join(unknown)} "
                       f"(write operations: {', '.join(writes)})", field=SETTING)
    return sorted(set(ops))


def check_own_change(scope: TenantScope, change: PendingChange, decider: Principal) -> None:
    """403 `own_change` when the decider asked for the change and the tenant separates
    the duties for its operation."""
    if decider.user_id != change.proposed_by:
        return
    if change.operation not in covered_operations(scope.tenant()):
        return
    raise OwnChange(f"You asked for this change ({change.summary}), so someone else must "
                    f"decide it: the club's separation of duties covers {change.operation}. "
                    "Ask another manager or an admin.", change_id=change.change_id,
                    operation=change.operation)
