"""What a manager decides is checked like a direct call (issue 8, findings 4 and 8): edited
values by their field types, and the decider's own authority over the amount."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.approvals import decide, get_change
from opsgraph.errors import Forbidden, Unprocessable
from opsgraph.operations.fields import money_of
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import Document, TenantScope

from .conftest import T0, ProposeOp, person


def _refunded(scope: TenantScope, invoice_id: str) -> Decimal:
    doc = scope["invoices"].find_one({"_id": invoice_id})
    assert doc is not None
    return money_of(doc["refunded"])


@pytest.fixture
def big_invoice(scope: TenantScope, seeded: Database[Document]) -> Document:
    """The paid 1,200.00 invoice of the demo data set, nothing refunded yet."""
    doc = scope["invoices"].find_one({"total": 1200, "status": "paid"})
    assert doc is not None and money_of(doc["refunded"]) == 0
    return doc


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"phone": ""}, "changes.phone", "at least 1 character"),
    ({"name": "\u0000"}, "changes.name", "control character (U+0000"),
    ({"email": "jane@example"}, "changes.email", "not a valid email address"),
])
def test_an_edit_with_a_bad_value_is_refused_naming_the_field(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        changes: dict[str, Any], field: str, words: str) -> None:
    change = propose_op("members.update", {"member": jane,
                                           "changes": {"email": "jane@new.example"}})
    with pytest.raises(Unprocessable) as caught:
        decide(scope, change.change_id, "edit", manager, values={"changes": changes}, now=T0)
    assert [e["field"] for e in caught.value.detail["errors"]] == [field]
    assert words in caught.value.message
    assert get_change(scope, change.change_id).status == "pending"
    assert scope["members"].count({"_id": jane, "applied_changes": change.change_id}) == 0


def test_a_manager_cannot_approve_an_admin_proposed_900_refund(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal,
        big_invoice: Document) -> None:
    admin = person(Role.ADMIN, "adm-1")
    change = propose_op("invoices.refund", {"invoice": big_invoice["number"], "amount": 900,
                                            "reason": "Moved abroad"}, by=admin)
    try:
        decide(scope, change.change_id, "approve", manager, now=T0)
    except Forbidden as refused:
        assert "need an admin" in refused.message
    else:
        raise AssertionError("a manager's approve of a 900 refund was not refused before it "
                             "claimed the change")
    assert get_change(scope, change.change_id).status == "pending"
    assert _refunded(scope, big_invoice["_id"]) == 0
    # another admin: the one who asked may not decide it (separation of duties)
    other = person(Role.ADMIN, "adm-2")
    assert decide(scope, change.change_id, "approve", other, now=T0).outcome == "applied"
    assert _refunded(scope, big_invoice["_id"]) == Decimal("900.00")


def test_a_managers_approval_never_moves_money_past_the_limit(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal,
        big_invoice: Document) -> None:
    """Two pending refunds that each fit, approved one after the other: the second would
    take the invoice past what a manager may refund, and no money moves for it."""
    first, second = (propose_op("invoices.refund", {"invoice": big_invoice["number"],
                                                    "amount": 300, "reason": reason},
                                by=person(Role.MANAGER, "mgr-asks"))
                     for reason in ("Court closed", "Coach absent"))
    assert decide(scope, first.change_id, "approve", manager, now=T0).outcome == "applied"
    try:
        out = decide(scope, second.change_id, "approve", manager, now=T0)
    except Forbidden as refused:  # refused before the apply: the change stays pending
        assert "need an admin" in refused.message
        assert get_change(scope, second.change_id).status == "pending"
    else:  # refused by the apply itself: the change fails, naming the limit
        assert out.outcome == "failed"
        assert "need an admin" in (out.change.error or {}).get("message", "")
    assert _refunded(scope, big_invoice["_id"]) == Decimal("300.00")
