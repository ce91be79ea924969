"""Invoices: list, get, issue and refund.

Document `invoices`: {_id, number ("INV-1042"), seq, member_id, member_name, lines:
[{description, amount}], total, paid, refunded, status: open|paid|partially_refunded|
refunded, issued, due (YYYY-MM-DD), refunds: [{change_id, amount, reason, at, by}]}.
An open invoice past its due date reads as `overdue`. Amounts are Decimal128 with two
decimal places in the store (`operations.fields`), Decimals in code and JSON numbers to
callers.

Refund limits hold for the invoice's running total, not per call: a refund never takes
the refunded total above what was paid, and one that takes it above 500 needs an admin
(`check_authority`). Both are checked for whoever acts: the caller of a direct call, the
requester of an agent's proposal, the manager who edits or approves it, and again when it
applies, against the invoice as it is then (two pending refunds that each fit are
checked one after the other), under a compare-and-set on the refunded total.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Literal

from pydantic import Field
from pymongo.errors import DuplicateKeyError

from opsgraph.errors import BadInput, Conflict, Forbidden
from opsgraph.operations.access import (
    MANAGERS,
    MEMBERS_UP,
    STAFF_UP,
    member_filter,
    require_self,
)
from opsgraph.operations.base import Context, Operation, OpInput, Preview, Result, Source
from opsgraph.operations.currency import money_words
from opsgraph.operations.fields import (
    Line,
    Money,
    Reason,
    Reference,
    SignedMoney,
    money_json,
    money_of,
    stored_money,
)
from opsgraph.operations.reads import first_in_windows, numbers_down
from opsgraph.operations.records import Document, derived_id, record_json, require, to_json
from opsgraph.principal import Role

InvoiceStatus = Literal["open", "overdue", "paid", "partially_refunded", "refunded"]
ADMIN_REFUND_ABOVE = Decimal(500)
PAYMENT_TERMS = timedelta(days=14)
_LIST_LIMIT = 100


class InvoiceList(OpInput):
    member: Reference | None = Field(None, description="Only this member's invoices: id, "
                                                       "name or email.")
    status: InvoiceStatus | None = Field(None, description="Only invoices in this state; "
                                                           "`open` means unpaid (overdue too).")


class InvoiceGet(OpInput):
    invoice: Reference = Field(description="The invoice: number (INV-1042) or id.")


class InvoiceLine(OpInput):
    description: Line = Field(description="What is charged.")
    amount: SignedMoney = Field(description="Amount in the club's currency, at most two "
                                            "decimal places; negative for a discount.")


class InvoiceIssue(OpInput):
    member: Reference = Field(description="Who is billed: id, name or email.")
    lines: list[InvoiceLine] = Field(min_length=1, max_length=50,
                                     description="The invoice lines.")


class InvoiceRefund(OpInput):
    invoice: Reference = Field(description="The invoice: number (INV-1042) or id.")
    amount: Money = Field(description="Amount to refund, at most two decimal places; at "
                                      "most what was paid and not yet refunded.")
    reason: Reason = Field(description="Why, for the audit trail.")


def effective_status(doc: Document, today: str) -> str:
    """The stored status, with an open invoice past its due date shown as overdue."""
    if doc["status"] == "open" and doc["due"] < today:
        return "overdue"
    return str(doc["status"])


def invoice_json(doc: Document, today: str) -> Document:
    """An invoice as callers see it: amounts as JSON numbers, overdue shown as such."""
    out = record_json(doc)
    out.update({key: money_json(doc[key]) for key in ("total", "paid", "refunded")})
    out["lines"] = [{**to_json(line), "amount": money_json(line["amount"])}
                    for line in doc.get("lines", [])]
    out["refunds"] = [{**to_json(refund), "amount": money_json(refund["amount"])}
                      for refund in doc.get("refunds", [])]
    out["status"] = effective_status(doc, today)
    return out


def _source(doc: Document) -> Source:
    return Source("invoice", str(doc["_id"]),
                  f"{doc['number']} — {doc.get('member_name', '')} — {money_of(doc['total'])}")


def list_invoices(ctx: Context, args: InvoiceList) -> Result:
    """Invoices, newest first, by member and/or state; a member sees only their own. The
    first 100, read in windows of numbers (operations.reads) on (tenant, member or status,
    seq) down from the highest number the tenant records (`invoice_seq`)."""
    today = ctx.now.date().isoformat()
    flt: Document = member_filter(ctx, args.member, "list invoices")
    stored = "open" if args.status == "overdue" else args.status
    if stored is not None and "member_id" not in flt:
        flt["status"] = stored

    def wanted(doc: Document) -> bool:
        return ((stored is None or doc["status"] == stored)
                and (args.status != "overdue" or doc["due"] < today))

    top = int((ctx.scope.tenant() or {}).get("invoice_seq", 0))
    docs = first_in_windows(ctx.scope["invoices"], flt, "seq", numbers_down(top, 128),
                            _LIST_LIMIT, order=lambda d: d["seq"], newest_first=True,
                            keep=wanted)
    unpaid = (money_of(d["total"]) - money_of(d["paid"]) for d in docs
              if effective_status(d, today) in ("open", "overdue"))
    rows = [{"id": d["_id"], "number": d["number"], "member": {"id": d["member_id"],
             "name": d.get("member_name")}, "total": money_json(d["total"]),
             "paid": money_json(d["paid"]), "refunded": money_json(d["refunded"]),
             "status": effective_status(d, today), "issued": d["issued"], "due": d["due"]}
            for d in docs]
    return Result({"invoices": rows, "outstanding": money_json(sum(unpaid, Decimal(0)))})


def get_invoice(ctx: Context, args: InvoiceGet) -> Result:
    """One invoice with its lines and refunds (a source)."""
    doc = require(ctx, "invoices", args.invoice, "invoice")
    return Result(invoice_json(doc, ctx.now.date().isoformat()), (_source(doc),))


def authorize_own(ctx: Context, args: InvoiceGet) -> None:
    """A member reads only their own invoices."""
    doc = ctx.scope["invoices"].find_one({"_id": args.invoice}) or {}
    require_self(ctx, doc.get("member_id"), "read invoices")


def _issued(ctx: Context, args: InvoiceIssue) -> tuple[Document, Decimal]:
    """The new invoice's fields as stored, and its total; BadInput unless above zero."""
    member = require(ctx, "members", args.member, "member")
    total = sum((line.amount for line in args.lines), Decimal(0))
    if total <= 0:
        raise BadInput(f"lines: the total must be above zero (it is {total})")
    fields = {"member_id": args.member, "member_name": member["name"],
              "total": stored_money(total), "due": (ctx.now.date() + PAYMENT_TERMS).isoformat(),
              "lines": [{"description": line.description, "amount": stored_money(line.amount)}
                        for line in args.lines]}
    return fields, total


def preview_issue(ctx: Context, args: InvoiceIssue) -> Preview:
    """Check the total; show the invoice to be issued."""
    fields, total = _issued(ctx, args)
    new = {**fields, "total": money_json(total),
           "lines": [{"description": line.description, "amount": money_json(line.amount)}
                     for line in args.lines]}
    count = len(args.lines)
    return Preview(f"Issue an invoice of {money_words(ctx.scope, total)} to "
                   f"{fields['member_name']} "
                   f"({count} line{'s' if count > 1 else ''}, due {fields['due']})", {}, new)


def apply_issue(ctx: Context, args: InvoiceIssue, change_id: str) -> Document:
    """Insert the invoice once, with the next free number."""
    coll = ctx.scope["invoices"]
    invoice_id = derived_id(ctx, "inv", change_id)
    nothing = stored_money(Decimal(0))
    for _ in range(5):
        existing = coll.find_one({"_id": invoice_id})
        if existing is not None:
            return {"invoice": invoice_json(existing, ctx.now.date().isoformat())}
        fields, _total = _issued(ctx, args)
        last = next(coll.find({}, sort=[("seq", -1)], limit=1, projection={"seq": 1}), None)
        seq = int(last["seq"]) + 1 if last else 1001
        try:
            coll.insert_one({"_id": invoice_id, **fields, "number": f"INV-{seq}", "seq": seq,
                             "paid": nothing, "refunded": nothing, "status": "open",
                             "refunds": [], "issued": ctx.now.date().isoformat(),
                             "change_id": change_id})
        except DuplicateKeyError:
            continue  # another invoice took that number (or this change won a race): look again
        doc = require(ctx, "invoices", invoice_id, "invoice")
        return {"invoice": invoice_json(doc, ctx.now.date().isoformat())}
    raise Conflict("invoices: no free invoice number after 5 tries; try again")


def refundable(doc: Document) -> Decimal:
    """What was paid on the invoice and is not refunded yet (never below zero)."""
    left = money_of(doc.get("paid", 0)) - money_of(doc.get("refunded", 0))
    return max(left, Decimal("0.00"))  # `left` when equal: it keeps the stored places


def check_refund(doc: Document, amount: Decimal) -> None:
    """A refund of `amount` fits the invoice: it was paid, and the refunded total stays
    within what was paid."""
    paid, refunded = money_of(doc["paid"]), money_of(doc["refunded"])
    if paid <= 0:
        raise Conflict(f"invoice: {doc['number']} has not been paid; nothing to refund")
    left = refundable(doc)
    if amount > left:
        raise BadInput(f"amount: {amount} is more than the {left} that can still be refunded "
                       f"on {doc['number']} (paid {paid}, refunded {refunded})")


def check_authority(ctx: Context, doc: Document, amount: Decimal) -> None:
    """The acting person may refund `amount` on this invoice: a refund that takes the
    invoice's refunded total above 500 needs an admin, however it is split."""
    if Role.ADMIN in ctx.principal.roles:
        return
    refunded = money_of(doc["refunded"])
    if refunded + amount > ADMIN_REFUND_ABOVE:
        raise Forbidden(f"amount: refunds above {ADMIN_REFUND_ABOVE} need an admin, counted "
                        f"over the whole invoice ({doc['number']} has {refunded} refunded; "
                        f"{amount} more would make {refunded + amount})")


def _after_refund(doc: Document, amount: Decimal) -> tuple[Decimal, str]:
    """The refunded total and status once `amount` is refunded."""
    refunded = money_of(doc["refunded"]) + amount
    return refunded, "refunded" if refunded >= money_of(doc["paid"]) else "partially_refunded"


def preview_refund(ctx: Context, args: InvoiceRefund) -> Preview:
    """Check the amount against what was paid; show refunded total and status after."""
    doc = require(ctx, "invoices", args.invoice, "invoice")
    check_refund(doc, args.amount)
    refunded, status = _after_refund(doc, args.amount)
    old = {"refunded": money_json(doc["refunded"]), "status": doc["status"]}
    new = {"refunded": money_json(refunded), "status": status}
    return Preview(f"Refund {money_words(ctx.scope, args.amount)} on {doc['number']} to "
                   f"{doc.get('member_name')}: "
                   f"{args.reason}", old, new)


def apply_refund(ctx: Context, args: InvoiceRefund, change_id: str) -> Document:
    """Record the refund once, checked again against the invoice as it is now and for the
    person applying it; the update is guarded by the refunded total it started from."""
    coll = ctx.scope["invoices"]
    doc = require(ctx, "invoices", args.invoice, "invoice")
    if all(r.get("change_id") != change_id for r in doc.get("refunds", [])):
        check_refund(doc, args.amount)
        check_authority(ctx, doc, args.amount)
        refunded, status = _after_refund(doc, args.amount)
        refund = {"change_id": change_id, "amount": stored_money(args.amount),
                  "reason": args.reason, "at": ctx.now, "by": ctx.principal.user_id}
        done = coll.update_one(
            {"_id": args.invoice, "refunded": doc["refunded"],
             "refunds.change_id": {"$ne": change_id}},
            {"$set": {"refunded": stored_money(refunded), "status": status},
             "$push": {"refunds": refund}})
        if done.modified_count != 1:
            raise Conflict(f"invoice: {doc['number']} changed while refunding; try again")
    doc = require(ctx, "invoices", args.invoice, "invoice")
    return {"invoice": invoice_json(doc, ctx.now.date().isoformat())}


def authorize_refund(ctx: Context, args: InvoiceRefund) -> None:
    """The refunded total this refund makes is within the caller's authority."""
    check_authority(ctx, require(ctx, "invoices", args.invoice, "invoice"), args.amount)


OPERATIONS: tuple[Operation, ...] = (
    Operation("invoices.list", "read", "list", InvoiceList,
              "Invoices, newest first, by member and/or status (open, overdue, paid, ...).",
              MEMBERS_UP, "invoices", {"member": "members"}, run=list_invoices),
    Operation("invoices.get", "read", "get", InvoiceGet,
              "One invoice with its lines, payments and refunds.",
              MEMBERS_UP, "invoices", {"invoice": "invoices"}, run=get_invoice,
              authorize=authorize_own),
    Operation("invoices.issue", "write", "issue", InvoiceIssue,
              "Issue a new invoice to a member (payable in 14 days).",
              STAFF_UP, "invoices", {"member": "members"},
              preview=preview_issue, apply=apply_issue),
    Operation("invoices.refund", "write", "refund", InvoiceRefund,
              "Refund part or all of a paid invoice; refunds above 500 in all need an admin.",
              MANAGERS, "invoices", {"invoice": "invoices"},
              preview=preview_refund, apply=apply_refund, authorize=authorize_refund),
)
