"""Scripted-model files for the end-to-end runs (docs/reference.md, "Scripted model files")."""

from __future__ import annotations

from typing import Any

EMILY = "mem_demo_008"
EMILY_ANSWER = "Emily Chen's phone change is handled."
"""The scripted synthesis: a write-only run's answer is written by code, not by it."""
REFUND_ANSWER = "The refund is handled."


def task(tid: str, domain: str, verb: str, instruction: str) -> dict[str, Any]:
    return {"id": tid, "domain": domain, "operation": verb, "instruction": instruction,
            "depends_on": []}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


def phone_update(*phones: str, final_delay_ms: int = 0) -> dict[str, Any]:
    """One task proposing Emily Chen's new phone; each further phone is the proposal the
    agent makes after a `revise` decision."""
    first, *revised = phones
    turns = [call("members_search", query="Emily Chen"),
             call("members_get", member="Emily Chen"),
             call("members_update", member="Emily Chen", changes={"phone": first}),
             *(call("members_update", member="Emily Chen", changes={"phone": p})
               for p in revised),
             {"content": "I updated Emily Chen's phone.", "delay_ms": final_delay_ms}]
    return {"plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone")]},
            "turns": {"t1": turns}, "synthesis": EMILY_ANSWER}


def phone_revision(first: str, *revised: str) -> dict[str, Any]:
    """Emily Chen's new phone when the request names it (`first`): code proposes it with no
    model turn — turn 0, since a scripted model counts the assistant turns before it — so
    the model's first turn is the proposal it makes after a `revise`."""
    turns = [call("members_update", member="Emily Chen", changes={"phone": first}),
             *(call("members_update", member="Emily Chen", changes={"phone": p})
               for p in revised),
             {"content": "I updated Emily Chen's phone."}]
    return {"plan": {"tasks": [task("t1", "members", "update", "Change Emily Chen's phone")]},
            "turns": {"t1": turns}, "synthesis": EMILY_ANSWER}


def refund(invoice: str, amount: float, reason: str = "Charged twice") -> dict[str, Any]:
    """One task proposing a refund on `invoice` (the refund agent is for managers)."""
    turns = [call("invoices_get", invoice=invoice),
             call("invoices_refund", invoice=invoice, amount=amount, reason=reason),
             {"content": f"I refunded {amount:.2f} on {invoice}."}]
    return {"plan": {"tasks": [task("t1", "invoices", "refund", f"Refund {invoice}")]},
            "turns": {"t1": turns}, "synthesis": REFUND_ANSWER}


def opening_hours() -> dict[str, Any]:
    """A read-only run: one knowledge task, no proposal."""
    turns = [call("knowledge_search", query="opening hours"),
             call("knowledge_read", document="opening-hours"),
             {"content": "We open at 6am on weekdays."}]
    return {"plan": {"tasks": [task("t1", "knowledge", "search", "Find the opening hours")]},
            "turns": {"t1": turns}, "synthesis": "We open at 6am on weekdays."}
