"""The expiry sweep: pending changes past their expiry become `expired`, once, with audit."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pymongo.database import Database

from opsgraph.approvals import decide, expire_due, get_change, history, list_changes
from opsgraph.errors import Gone
from opsgraph.principal import Principal
from opsgraph.store.scope import Document, TenantScope

from .conftest import T0, Propose, race


def test_the_sweep_expires_what_is_due_in_every_tenant(
        store: Database[Document], scope: TenantScope, propose: Propose,
        manager: Principal) -> None:
    acme = TenantScope(store, "acme")
    due = [propose(), propose(target=acme)]
    fresh = propose(now=T0 + timedelta(minutes=30))
    decided = propose()
    decide(scope, decided.change_id, "reject", manager, now=T0 + timedelta(minutes=1))
    at = T0 + timedelta(hours=1)
    assert expire_due(store, now=at) == 2
    assert get_change(scope, due[0].change_id).status == "expired"
    assert get_change(acme, due[1].change_id).status == "expired"
    assert get_change(scope, fresh.change_id).status == "pending"
    assert get_change(scope, decided.change_id).status == "rejected"
    rows = history(scope, due[0].change_id)
    assert [(r["from"], r["to"], r["actor"]) for r in rows] == [
        (None, "pending", "staff-bo"), ("pending", "expired", "system:expiry")]
    assert expire_due(store, now=at) == 0
    with pytest.raises(Gone):
        decide(scope, due[0].change_id, "approve", manager, now=at)


def test_a_tenant_sweep_touches_only_that_tenant(store: Database[Document], scope: TenantScope,
                                                 propose: Propose) -> None:
    acme = TenantScope(store, "acme")
    propose()
    theirs = propose(target=acme)
    assert expire_due(scope, now=T0 + timedelta(hours=2)) == 1
    assert get_change(acme, theirs.change_id).status == "pending"
    assert list_changes(scope, status="expired")[0].status == "expired"


def test_concurrent_sweeps_and_a_late_decision_expire_a_change_once(
        store: Database[Document], scope: TenantScope, propose: Propose,
        manager: Principal) -> None:
    for _ in range(3):
        change = propose()
        late = change.expires_at

        def attempt(i: int, cid: str = change.change_id, late: datetime = late) -> object:
            if i == 0:
                return decide(scope, cid, "approve", manager, now=late)
            return expire_due(store, now=late)

        swept, errors = race(8, attempt)
        assert len(errors) == 1 and isinstance(errors[0], Gone), errors  # it learns it expired
        rows = history(scope, change.change_id)
        assert [(r["from"], r["to"]) for r in rows] == [(None, "pending"), ("pending", "expired")]
        assert get_change(scope, change.change_id).status == "expired"
        assert sum(n for n in swept if isinstance(n, int)) <= 1
