"""Steps of an approval over HTTP, and how to read its outcome from the store."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.http_client import Streamed, headers_for, stream

T = TypeVar("T")
PROPOSER = "mia"  # the manager who asks for refunds
DECIDER = "sam"  # the manager who decides


def propose(server: AppServer, http: httpx.Client, script: dict[str, Any],
            role: str = "staff", user: str | None = None,
            tenant: str = "demo") -> tuple[Streamed, dict[str, Any]]:
    """Run `script` as `role`; the run pauses on exactly one card, returned with the run."""
    server.write_script(script)
    run = stream(http, "/v1/runs", {"message": "Please see to it."},
                 headers_for(role, tenant, user=user))
    assert run.status == 200, run.error
    assert run.finished["status"] == "awaiting_approval", run.events
    [card] = run.of("approval_required")[0]["changes"]
    return run, card


def decide(http: httpx.Client, change_id: str, decision: str, role: str | None = "manager",
           tenant: str = "demo", **body: Any) -> Streamed:
    """POST a decision (`role=None`: as a visitor) and read the resumed run."""
    return stream(http, f"/v1/approvals/{change_id}", {"decision": decision, **body},
                  headers_for(role, tenant, user=DECIDER if role == "manager" else None))


def transitions(db: Any, change_id: str) -> list[tuple[str | None, str]]:
    """The change's audit trail as (from, to) pairs, in order."""
    rows = db["audit"].find({"change_id": change_id}, sort=[("at", 1), ("_id", 1)])
    return [(row["from"], row["to"]) for row in rows]


def applies(db: Any, change_id: str) -> int:
    """How many times the audit trail says the change was applied."""
    return int(db["audit"].count_documents({"change_id": change_id, "to": "applied"}))


def change_doc(db: Any, change_id: str) -> dict[str, Any]:
    doc: dict[str, Any] = db["pending_changes"].find_one({"_id": change_id})
    return doc


def big_paid_invoice(db: Any, tenant: str = "demo") -> dict[str, Any]:
    """The tenant's paid invoice over 500 (refunds above 500 need an admin)."""
    doc: dict[str, Any] = db["invoices"].find_one(
        {"tenant_id": tenant, "status": "paid", "paid": {"$gt": 600}}, sort=[("_id", 1)])
    assert doc is not None and doc["refunded"] == 0
    return doc


def refunds_of(db: Any, invoice_id: str, change_id: str) -> int:
    """How many refund entries `change_id` left on the invoice (the domain effect)."""
    doc = db["invoices"].find_one({"_id": invoice_id})
    return sum(1 for r in doc.get("refunds", []) if r.get("change_id") == change_id)


def sleep_past(moment: datetime) -> None:
    """A lower bound: wait until `moment` (a lease's end) has passed."""
    time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()) + 0.05)


def wait_for(probe: Callable[[], T | None], timeout_s: float = 30.0) -> T:
    """Poll `probe` until it returns something (a store field another request sets)."""
    deadline = time.monotonic() + timeout_s
    while (found := probe()) is None:
        assert time.monotonic() < deadline, f"nothing after {timeout_s:.0f} s"
        time.sleep(0.02)
    return found
