"""The scheduled expiry sweep: pending changes past their expiry become `expired`, and
each run waiting on one is resumed so it learns the change will never apply."""

from __future__ import annotations

import contextlib
import logging

from opsgraph.errors import Conflict
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.client import get_db
from opsgraph.store.scope import TenantScope

log = logging.getLogger(__name__)


def expire_and_notify() -> int:
    """Expire what is due; resume every run still waiting on an expired change."""
    from opsgraph.approvals.expiry import expire_due, expired_unresumed
    from opsgraph.engine.approval_flow import resume_change

    db = get_db()
    expired = expire_due(db)
    for doc in expired_unresumed(db):
        system = Principal(doc["tenant_id"], "system", frozenset({Role.ADMIN}), Channel.API)
        value = {"change_id": doc["_id"], "outcome": "expired", "decided_by": "the expiry job"}
        with contextlib.suppress(Conflict):
            for _ in resume_change(system, TenantScope.of(system), doc["_id"], doc["thread_id"],
                                   value):
                pass
    return expired
