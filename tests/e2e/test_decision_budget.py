"""Decisions under the tenant's daily model-call budget, on a real server process (issue
18, finding 5: three revises at 40/40 each made a model call). A decision that would
resume a run is refused like a run, 429 with `Retry-After`: a `revise` (a request for more
model work) before anything changes; an `approve` is the manager's word and is never
lost — the change is applied all the same, once, and only its run waits, resumed by the
same decision posted again once the budget allows."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.app_process import APPLY_LEASE_S, AppServer
from tests.e2e.flows import (
    DECIDER,
    PROPOSER,
    applies,
    big_paid_invoice,
    change_doc,
    decide,
    propose,
    refunds_of,
    sleep_past,
)
from tests.e2e.http_client import bearer
from tests.e2e.scripts import refund
from tests.e2e.test_http_api import assert_error

BUDGET = 2  # the proposing run's plan and its one agent turn spend it


def post_decision(http: httpx.Client, change_id: str, decision: str,
                  **body: Any) -> httpx.Response:
    return http.post(f"/v1/approvals/{change_id}", json={"decision": decision, **body},
                     headers=bearer("manager", user=DECIDER))


def spent_today(db: Any) -> int:
    return sum(int(d["model_calls"]) for d in db["model_budget"].find({"tenant_id": "demo"}))


@pytest.mark.parametrize("server", [{"OPSGRAPH_TENANT_DAILY_MODEL_CALLS": str(BUDGET)}],
                         indirect=True)
def test_a_spent_budget_refuses_revise_and_holds_an_approved_run_not_its_apply(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    invoice = big_paid_invoice(demo_db)
    _, card = propose(server, http, refund(invoice["number"], 100.0), role="manager",
                      user=PROPOSER)
    change_id = card["change_id"]
    assert spent_today(demo_db) >= BUDGET

    for _ in range(3):  # each revise would have made a model call
        revised = post_decision(http, change_id, "revise", feedback="make it 50")
        assert_error(revised, 429, mentions="model calls")
        assert 0 < int(revised.headers["retry-after"]) <= 24 * 3600
    assert change_doc(demo_db, change_id)["status"] == "pending"  # nothing changed
    calls = spent_today(demo_db)

    approved = post_decision(http, change_id, "approve")
    assert_error(approved, 429, mentions="post the same decision again")
    error = approved.json()["error"]
    assert error["detail"]["status"] == "applied" and error["detail"]["resumed"] is False
    assert 0 < int(approved.headers["retry-after"]) <= 24 * 3600
    held = change_doc(demo_db, change_id)
    assert held["status"] == "applied" and held.get("resumed_at") is None
    assert applies(demo_db, change_id) == 1  # the decision was not lost
    assert refunds_of(demo_db, invoice["_id"], change_id) == 1
    assert spent_today(demo_db) == calls  # no model call was made

    demo_db["model_budget"].delete_many({"tenant_id": "demo"})  # the next UTC day
    sleep_past(held["finished_at"] + timedelta(seconds=APPLY_LEASE_S))
    resumed = decide(http, change_id, "approve")
    assert resumed.status == 200, resumed.error
    assert resumed.finished["status"] == "completed", resumed.events
    assert applies(demo_db, change_id) == 1
    assert refunds_of(demo_db, invoice["_id"], change_id) == 1
    assert change_doc(demo_db, change_id)["resumed_at"] is not None
