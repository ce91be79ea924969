"""Invoices: list, get, issue and refund.

Document `invoices`: {_id, number ("INV-1042"), seq, member_id, member_name, lines:
[{description, amount}], total, paid, refunded, status: open|paid|partially_refunded|
refunded, issued, due (YYYY-MM-DD), refunds: [{change_id, amount, reason, at, by}]}.
An open invoice past its due date reads as `overdue`.
"""

from __future__ import annotations

from datetime import timedelta
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
from opsgraph.operations.records import (
    Document,
    derived_id,
    money,
    record_json,
    require,
)
from opsgraph.principal import Role

InvoiceStatus = Literal["open", "overdue", "paid", "partially_refunded", "refunded"]
ADMIN_REFUND_ABOVE = 500.0
PAYMENT_TERMS = timedelta(days=14)
_LIST_LIMIT = 100


class InvoiceList(OpInput):
    member: str | None = Field(None, description="Only this member's invoices: id, name or "
                                                 "email.")
    status: InvoiceStatus | None = Field(None, description="Only invoices in this state; "
                                                           "`open` means unpaid (overdue too).")


class InvoiceGet(OpInput):
    invoice: str = Field(min_length=1, description="The invoice: number (INV-1042) or id.")


class InvoiceLine(OpInput):
    description: str = Field(min_length=1, max_length=200, description="What is charged.")
    amount: float = Field(ge=-100_000, le=100_000,
                          description="Amount in the club's currency; negative for a discount.")


class InvoiceIssue(OpInput):
    member: str = Field(min_length=1, description="Who is billed: id, name or email.")
    lines: list[InvoiceLine] = Field(min_length=1, max_length=50,
                                     description="The invoice lines.")


class InvoiceRefund(OpInput):
    invoice: str = Field(min_length=1, description="The invoice: number (INV-1042) or id.")
    amount: float = Field(gt=0, le=100_000, description="Amount to refund; at most what was "
                                                        "paid and not yet refunded.")
    reason: str = Field(min_length=3, max_length=500, description="Why, for the audit trail.")


def effective_status(doc: Document, today: str) -> str:
    """The stored status, with an open invoice past its due date shown as overdue."""
    if doc["status"] == "open" and doc["due"] < today:
        return "overdue"
    return str(doc["status"])


def invoice_json(doc: Document, today: str) -> Document:
    """An invoice as callers see it."""
    return {**record_json(doc), "status": effective_status(doc, today)}


def _source(doc: Document) -> Source:
    return Source("invoice", str(doc["_id"]),
                  f"{doc['number']} — {doc.get('member_name', '')} — {doc['total']:.2f}")


def list_invoices(ctx: Context, args: InvoiceList) -> Result:
    """Invoices, newest first, by member and/or state; a member sees only their own."""
    today = ctx.now.date().isoformat()
    flt: Document = member_filter(ctx, args.member, "list invoices")
    if args.status == "overdue":
        flt.update({"status": "open", "due": {"$lt": today}})
    elif args.status is not None:
        flt["status"] = args.status
    docs = list(ctx.scope["invoices"].find(flt, sort=[("seq", -1)], limit=_LIST_LIMIT))
    rows = [{"id": d["_id"], "number": d["number"], "member": {"id": d["member_id"],
             "name": d.get("member_name")}, "total": d["total"], "paid": d["paid"],
             "refunded": d["refunded"], "status": effective_status(d, today),
             "issued": d["issued"], "due": d["due"]} for d in docs]
    return Result({"invoices": rows, "outstanding": money(sum(
        r["total"] - r["paid"] for r in rows if r["status"] in ("open", "overdue")))})


def get_invoice(ctx: Context, args: InvoiceGet) -> Result:
    """One invoice with its lines and refunds (a source)."""
    doc = require(ctx, "invoices", args.invoice, "invoice")
    return Result(invoice_json(doc, ctx.now.date().isoformat()), (_source(doc),))


def authorize_own(ctx: Context, args: InvoiceGet) -> None:
    """A member reads only their own invoices."""
    doc = ctx.scope["invoices"].find_one({"_id": args.invoice}) or {}
    require_self(ctx, doc.get("member_id"), "read invoices")


def preview_issue(ctx: Context, args: InvoiceIssue) -> Preview:
    """Check the total; show the invoice to be issued."""
    member = require(ctx, "members", args.member, "member")
    total = money(sum(line.amount for line in args.lines))
    if total <= 0:
        raise BadInput(f"lines: the total must be above zero (it is {total:.2f})")
    due = (ctx.now.date() + PAYMENT_TERMS).isoformat()
    new = {"member_id": args.member, "member_name": member["name"], "total": total,
           "due": due, "lines": [{"description": ln.description, "amount": money(ln.amount)}
                                 for ln in args.lines]}
    return Preview(f"Issue an invoice of {total:.2f} to {member['name']} "
                   f"({len(args.lines)} line{'s' if len(args.lines) > 1 else ''}, due {due})",
                   {}, new)


def apply_issue(ctx: Context, args: InvoiceIssue, change_id: str) -> Document:
    """Insert the invoice once, with the next free number."""
    coll = ctx.scope["invoices"]
    invoice_id = derived_id(ctx, "inv", change_id)
    for _ in range(5):
        existing = coll.find_one({"_id": invoice_id})
        if existing is not None:
            return {"invoice": invoice_json(existing, ctx.now.date().isoformat())}
        fields = preview_issue(ctx, args).new
        last = next(coll.find({}, sort=[("seq", -1)], limit=1, projection={"seq": 1}), None)
        seq = int(last["seq"]) + 1 if last else 1001
        try:
            coll.insert_one({"_id": invoice_id, **fields, "number": f"INV-{seq}", "seq": seq,
                             "paid": 0.0, "refunded": 0.0, "status": "open", "refunds": [],
                             "issued": ctx.now.date().isoformat(), "change_id": change_id})
        except DuplicateKeyError:
            continue  # another invoice took that number (or this change won a race): look again
        doc = require(ctx, "invoices", invoice_id, "invoice")
        return {"invoice": invoice_json(doc, ctx.now.date().isoformat())}
    raise Conflict("invoices: no free invoice number after 5 tries; try again")


def _refundable(doc: Document) -> float:
    return money(doc["paid"] - doc["refunded"])


def _check_refund(doc: Document, amount: float) -> None:
    if doc["paid"] <= 0:
        raise Conflict(f"invoice: {doc['number']} has not been paid; nothing to refund")
    left = _refundable(doc)
    if money(amount) > left:
        raise BadInput(f"amount: {money(amount):.2f} is more than the {left:.2f} that can "
                       f"still be refunded on {doc['number']} (paid {doc['paid']:.2f}, "
                       f"refunded {doc['refunded']:.2f})")


def _after_refund(doc: Document, amount: float) -> Document:
    refunded = money(doc["refunded"] + amount)
    status = "refunded" if refunded >= money(doc["paid"]) else "partially_refunded"
    return {"refunded": refunded, "status": status}


def preview_refund(ctx: Context, args: InvoiceRefund) -> Preview:
    """Check the amount against what was paid; show refunded total and status after."""
    doc = require(ctx, "invoices", args.invoice, "invoice")
    _check_refund(doc, args.amount)
    new = _after_refund(doc, args.amount)
    old = {"refunded": doc["refunded"], "status": doc["status"]}
    return Preview(f"Refund {money(args.amount):.2f} on {doc['number']} to "
                   f"{doc.get('member_name')}: {args.reason}", old, new)


def apply_refund(ctx: Context, args: InvoiceRefund, change_id: str) -> Document:
    """Record the refund once; the update is guarded by the refunded total it started from."""
    coll = ctx.scope["invoices"]
    doc = require(ctx, "invoices", args.invoice, "invoice")
    if all(r.get("change_id") != change_id for r in doc.get("refunds", [])):
        _check_refund(doc, args.amount)
        refund = {"change_id": change_id, "amount": money(args.amount), "reason": args.reason,
                  "at": ctx.now, "by": ctx.principal.user_id}
        done = coll.update_one(
            {"_id": args.invoice, "refunded": doc["refunded"],
             "refunds.change_id": {"$ne": change_id}},
            {"$set": _after_refund(doc, args.amount), "$push": {"refunds": refund}})
        if done.modified_count != 1:
            raise Conflict(f"invoice: {doc['number']} changed while refunding; try again")
    doc = require(ctx, "invoices", args.invoice, "invoice")
    return {"invoice": invoice_json(doc, ctx.now.date().isoformat())}


def authorize_refund(ctx: Context, args: InvoiceRefund) -> None:
    """Refunds above 500 need an admin."""
    if money(args.amount) > ADMIN_REFUND_ABOVE and Role.ADMIN not in ctx.principal.roles:
        raise Forbidden(f"amount: refunds above {ADMIN_REFUND_ABOVE:.0f} need an admin "
                        f"({money(args.amount):.2f} requested)")


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
              "Refund part or all of a paid invoice; above 500 needs an admin.",
              MANAGERS, "invoices", {"invoice": "invoices"},
              preview=preview_refund, apply=apply_refund, authorize=authorize_refund),
)
