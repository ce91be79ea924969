"""Separation of duties over HTTP: the manager who asked for a refund may not approve it
(403 `own_change`); another manager may; an admin chooses the operations it covers in
`/v1/tenant/settings` (docs/reference.md, "Separation of duties")."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.flows import PROPOSER, big_paid_invoice, change_doc, propose
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import phone_update, refund


def _decide_as(http: httpx.Client, change_id: str, user: str, role: str = "manager") -> Any:
    return stream(http, f"/v1/approvals/{change_id}", {"decision": "approve"},
                  bearer(role, user=user))


def test_a_requester_cannot_approve_their_own_refund(server: AppServer, http: httpx.Client,
                                                     demo_db: Any) -> None:
    invoice = big_paid_invoice(demo_db)
    _, card = propose(server, http, refund(invoice["number"], 30), role="manager",
                      user=PROPOSER)
    own = _decide_as(http, card["change_id"], PROPOSER)
    assert own.status == 403, own
    assert own.error["code"] == "own_change"
    assert "someone else must decide it" in own.error["message"]
    assert "invoices.refund" in own.error["message"]
    assert change_doc(demo_db, card["change_id"])["status"] == "pending"
    assert demo_db["invoices"].find_one({"_id": invoice["_id"]})["refunded"] == 0

    other = _decide_as(http, card["change_id"], "sam")
    assert other.status == 200 and other.finished["status"] == "completed", other.events
    assert demo_db["invoices"].find_one({"_id": invoice["_id"]})["refunded"] == 30


def test_the_setting_names_the_operations_it_covers(server: AppServer, http: httpx.Client,
                                                    demo_db: Any) -> None:
    admin = bearer("admin", user="ada")
    settings = http.get("/v1/tenant/settings", headers=admin).json()
    assert settings["separation_of_duties"] == ["invoices.refund", "invoices.issue"]
    bad = http.put("/v1/tenant/settings", headers=admin,
                   json={"capability_mode": "observe", "separation_of_duties": ["members.get"]})
    assert bad.status_code == 400 and "members.get" in bad.json()["error"]["message"]
    # a phone change is not covered by default: its requester may decide it
    _, card = propose(server, http, phone_update("+44 7700 900111"), role="manager",
                      user=PROPOSER)
    put = http.put("/v1/tenant/settings", headers=admin,
                   json={"capability_mode": "observe", "separation_of_duties": ["members.update"]})
    assert put.status_code == 200 and put.json()["separation_of_duties"] == ["members.update"]
    refused = _decide_as(http, card["change_id"], PROPOSER)
    assert refused.status == 403 and refused.error["code"] == "own_change"
    http.put("/v1/tenant/settings", headers=admin,
             json={"capability_mode": "observe", "separation_of_duties": []})
    allowed = _decide_as(http, card["change_id"], PROPOSER)
    assert allowed.status == 200 and allowed.finished["status"] == "completed"
