"""Money and refund limits (issue 8, finding 4): amounts are Decimals of whole cents, and the
limits hold for an invoice's running total and for whoever acts, not per call."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from bson.decimal128 import Decimal128
from pymongo.database import Database

from opsgraph.errors import BadInput, Forbidden, Unprocessable
from opsgraph.operations.catalogue import get_operation
from opsgraph.operations.fields import money_of
from opsgraph.principal import Role

from .support import call, context, preview

Document = dict[str, Any]
REFUND = get_operation("invoices.refund")


def big_invoice(db: Database[Document]) -> Document:
    """The demo tenant's paid 1,200.00 annual family membership, nothing refunded yet."""
    doc = db["invoices"].find_one({"tenant_id": "demo", "total": 1200, "status": "paid"})
    assert doc is not None and money_of(doc["refunded"]) == 0
    return doc


def refunded(db: Database[Document], invoice: Document) -> Decimal:
    doc = db["invoices"].find_one({"_id": invoice["_id"]})
    assert doc is not None
    return money_of(doc["refunded"])


def refund(db: Database[Document], who: Role, invoice: Document, amount: object) -> Document:
    return call(db, who, "invoices.refund", {"invoice": invoice["number"], "amount": amount,
                                             "reason": "Relocation"})


def test_a_managers_split_refund_is_refused_where_it_crosses_the_limit(
        seeded: Database[Document]) -> None:
    invoice = big_invoice(seeded)
    assert refund(seeded, Role.MANAGER, invoice, 500)["applied"]
    with pytest.raises(Forbidden, match=r"above 500 need an admin.*500\.00 refunded; 500\.00 "
                                        r"more would make 1000\.00"):
        refund(seeded, Role.MANAGER, invoice, 500)
    with pytest.raises(Forbidden, match=r"199\.99 more would make 699\.99"):
        refund(seeded, Role.MANAGER, invoice, 199.99)
    assert refunded(seeded, invoice) == Decimal("500.00")
    # an admin may take it further, and the total stays exact
    refund(seeded, Role.ADMIN, invoice, 199.99)
    assert refunded(seeded, invoice) == Decimal("699.99")


def test_a_refund_never_exceeds_what_remains_refundable(seeded: Database[Document]) -> None:
    invoice = big_invoice(seeded)
    refund(seeded, Role.ADMIN, invoice, 999.99)
    with pytest.raises(BadInput, match=r"200\.02 is more than the 200\.01 that can still be "
                                       r"refunded"):
        refund(seeded, Role.ADMIN, invoice, "200.02")
    out = refund(seeded, Role.ADMIN, invoice, "200.01")
    assert out["result"]["invoice"]["status"] == "refunded"
    assert out["result"]["invoice"]["refunded"] == 1200
    with pytest.raises(BadInput, match=r"more than the 0\.00"):
        refund(seeded, Role.ADMIN, invoice, 0.01)


def test_two_pending_refunds_are_checked_one_after_the_other_when_applied(
        seeded: Database[Document]) -> None:
    invoice = big_invoice(seeded)
    args = REFUND.input.model_validate({"invoice": invoice["_id"], "amount": 300,
                                        "reason": "Two sessions missed"})
    # each proposal fits on its own: 300 refunded of 1,200, under the manager's 500
    for _ in range(2):
        preview(seeded, "invoices.refund", {"invoice": invoice["_id"], "amount": 300,
                                            "reason": "Two sessions missed"}, Role.MANAGER)
    assert REFUND.apply is not None
    REFUND.apply(context(seeded, Role.MANAGER), args, "chg_first")
    with pytest.raises(Forbidden, match=r"300\.00 more would make 600\.00"):
        REFUND.apply(context(seeded, Role.MANAGER), args, "chg_second")
    assert refunded(seeded, invoice) == Decimal("300.00")
    REFUND.apply(context(seeded, Role.ADMIN), args, "chg_second")
    assert refunded(seeded, invoice) == Decimal("600.00")


def test_applying_a_refund_checks_the_person_applying_it(seeded: Database[Document]) -> None:
    invoice = big_invoice(seeded)
    raw = {"invoice": invoice["_id"], "amount": 900, "reason": "Moved abroad"}
    preview(seeded, "invoices.refund", raw, Role.ADMIN)  # an admin may propose it
    args = REFUND.input.model_validate(raw)
    assert REFUND.apply is not None
    with pytest.raises(Forbidden, match="need an admin"):
        REFUND.apply(context(seeded, Role.MANAGER), args, "chg_900")
    assert refunded(seeded, invoice) == 0
    REFUND.apply(context(seeded, Role.ADMIN), args, "chg_900")
    assert refunded(seeded, invoice) == Decimal("900.00")


@pytest.mark.parametrize("amount", [1e-9, 0.001, "10.005", 0.1 + 0.2, "NaN", 1e300, -5, 0])
def test_a_refund_of_less_than_a_cent_or_out_of_bounds_is_refused(
        seeded: Database[Document], amount: object) -> None:
    invoice = big_invoice(seeded)
    with pytest.raises(Unprocessable) as caught:
        refund(seeded, Role.ADMIN, invoice, amount)
    assert [e["field"] for e in caught.value.detail["errors"]] == ["amount"]
    assert refunded(seeded, invoice) == 0


@pytest.mark.parametrize("amount", [1e-9, 0.001, "10.005", 0.1 + 0.2, "NaN", 1e300, -100_001])
def test_an_invoice_line_of_less_than_a_cent_or_out_of_bounds_is_refused(
        seeded: Database[Document], amount: object) -> None:
    with pytest.raises(Unprocessable) as caught:
        call(seeded, Role.ADMIN, "invoices.issue", {"member": "Jane Smith", "lines": [
            {"description": "Court hire", "amount": 20}, {"description": "Odd", "amount": amount}]})
    assert [e["field"] for e in caught.value.detail["errors"]] == ["lines.1.amount"]


def stored_amount(value: object) -> Decimal:
    """An amount as the store holds it: an exact decimal (Decimal128, or a Decimal where the
    client decodes one), never a float."""
    assert isinstance(value, Decimal128 | Decimal), f"{value!r} is not stored as a decimal"
    return value.to_decimal() if isinstance(value, Decimal128) else value


def test_amounts_are_exact_decimals_in_the_store(seeded: Database[Document]) -> None:
    out = call(seeded, Role.STAFF, "invoices.issue", {"member": "Jane Smith", "lines": [
        {"description": "Towel", "amount": 0.1}, {"description": "Locker", "amount": "0.20"}]})
    issued = out["result"]["invoice"]
    assert issued["total"] == 0.3 and [ln["amount"] for ln in issued["lines"]] == [0.1, 0.2]
    stored = seeded["invoices"].find_one({"_id": issued["id"]})
    assert stored is not None
    assert stored_amount(stored["total"]) == Decimal("0.30")
    assert stored_amount(stored["paid"]) == 0
    assert [stored_amount(ln["amount"]) for ln in stored["lines"]] == [Decimal("0.10"),
                                                                       Decimal("0.20")]
    invoice = big_invoice(seeded)
    for amount in (0.1, 0.2):
        refund(seeded, Role.MANAGER, invoice, amount)
    after = seeded["invoices"].find_one({"_id": invoice["_id"]})
    assert after is not None and stored_amount(after["refunded"]) == Decimal("0.30")
    assert [stored_amount(r["amount"]) for r in after["refunds"]] == [Decimal("0.10"),
                                                                      Decimal("0.20")]
