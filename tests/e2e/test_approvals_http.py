"""Deciding pending changes over HTTP: approve, edit, revise, reject, expiry, who may decide."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import httpx

from opsgraph.principal import Channel
from tests.e2e.app_process import AppServer
from tests.e2e.flows import (
    PROPOSER,
    applies,
    big_paid_invoice,
    change_doc,
    decide,
    propose,
    refunds_of,
    transitions,
)
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import EMILY, phone_update, refund

OLD_PHONE = "+44 7700 900788"
APPLIED = [(None, "pending"), ("pending", "executing"), ("executing", "applied")]


def phone(db: Any) -> str:
    return str(db["members"].find_one({"_id": EMILY})["phone"])


def pending_ids(http: httpx.Client, status: str = "pending") -> list[str]:
    response = http.get(f"/v1/approvals?status={status}", headers=bearer("manager"))
    assert response.status_code == 200, response.text
    return [c["change_id"] for c in response.json()["changes"]]


def test_approve_applies_once_and_resumes_the_run(server: AppServer, http: httpx.Client,
                                                 demo_db: Any) -> None:
    run, card = propose(server, http, phone_update("+44 7700 900999"))
    cid, thread = card["change_id"], run.finished["thread_id"]
    assert pending_ids(http) == [cid]
    for role in ("staff", "member"):
        assert http.get("/v1/approvals", headers=bearer(role)).status_code == 403
    assert http.get("/v1/approvals").status_code == 403

    resumed = decide(http, cid, "approve")
    assert resumed.status == 200, resumed.error
    assert resumed.finished["status"] == "completed"
    assert resumed.events[0][2]["thread_id"] == thread
    assert [{k: t[k] for k in ("task_id", "agent", "status")}
            for t in resumed.of("task_finished")] == [{"task_id": "t1", "agent": "members.update",
                                            "status": "completed"}]
    assert resumed.of("answer")[0]["text"].startswith("Done: Update Emily Chen")
    assert phone(demo_db) == "+44 7700 900999"
    change = change_doc(demo_db, cid)
    assert change["status"] == "applied" and change["decided_by"] == "sam"
    assert change["resumed_at"] is not None
    assert transitions(demo_db, cid) == APPLIED

    for decision in ("approve", "reject"):
        again = decide(http, cid, decision)
        assert again.status == 409 and again.error and again.error["code"] == "conflict"
    assert applies(demo_db, cid) == 1
    assert pending_ids(http) == []


def test_only_a_manager_or_admin_of_the_tenant_decides(server: AppServer, http: httpx.Client,
                                                      demo_db: Any) -> None:
    _, card = propose(server, http, phone_update("+44 7700 900999"))
    cid = card["change_id"]
    for role in (None, "member", "staff"):
        assert decide(http, cid, "approve", role=role).status == 403, role
    by_email = stream(http, f"/v1/approvals/{cid}", {"decision": "approve"},
                      bearer("manager", channel=Channel.EMAIL))
    assert by_email.status == 403  # the email channel is read-only
    for role in ("manager", "admin"):
        assert decide(http, cid, "approve", role=role, tenant="acme").status == 404, role
    assert change_doc(demo_db, cid)["status"] == "pending"
    assert phone(demo_db) == OLD_PHONE

    done = decide(http, cid, "approve", role="admin")
    assert done.status == 200 and done.finished["status"] == "completed"
    assert phone(demo_db) == "+44 7700 900999"


def test_edited_values_pass_every_check_again(server: AppServer, http: httpx.Client,
                                             demo_db: Any) -> None:
    invoice = big_paid_invoice(demo_db)
    _, card = propose(server, http, refund(invoice["number"], 100), role="manager",
                      user=PROPOSER)
    cid = card["change_id"]
    for values, field in [({"amount": -5}, "amount"), ({"amount": "lots"}, "amount"),
                          ({"reason": ""}, "reason"), ({"invoice": "INV-0000"}, "invoice")]:
        edited = decide(http, cid, "edit", values=values)
        assert edited.status == 422, (values, edited.status, edited.error)
        assert edited.error and field in edited.error["message"], edited.error
    # A manager may not set a refund above 500; the same edit by an admin goes through.
    too_much = decide(http, cid, "edit", values={"amount": 600})
    assert too_much.status == 403 and too_much.error
    assert "admin" in too_much.error["message"]
    assert change_doc(demo_db, cid)["status"] == "pending"
    assert demo_db["invoices"].find_one({"_id": invoice["_id"]})["refunded"] == 0

    done = decide(http, cid, "edit", role="admin", values={"amount": 600})
    assert done.status == 200 and done.finished["status"] == "completed"
    # the answer reports the edited amount that was applied, written from the decision
    assert done.of("answer")[0]["text"].startswith("Done: Refund £600.00 on ")
    after = demo_db["invoices"].find_one({"_id": invoice["_id"]})
    assert after["refunded"] == 600 and refunds_of(demo_db, invoice["_id"], cid) == 1
    change = change_doc(demo_db, cid)
    assert change["status"] == "applied" and change["args"]["amount"] == 600
    assert change["diff"] == {"amount": {"from": 100, "to": 600}}
    executing = demo_db["audit"].find_one({"change_id": cid, "to": "executing"})
    assert executing["detail"]["diff"] == change["diff"]


def test_reject_applies_nothing_and_the_run_completes(server: AppServer, http: httpx.Client,
                                                     demo_db: Any) -> None:
    _, card = propose(server, http, phone_update("+44 7700 900999"))
    cid = card["change_id"]
    rejected = decide(http, cid, "reject", feedback="Wrong number")
    assert rejected.status == 200 and rejected.finished["status"] == "completed"
    assert phone(demo_db) == OLD_PHONE
    change = change_doc(demo_db, cid)
    assert change["status"] == "rejected" and change["feedback"] == "Wrong number"
    assert transitions(demo_db, cid) == [(None, "pending"), ("pending", "rejected")]
    assert decide(http, cid, "approve").status == 409
    assert phone(demo_db) == OLD_PHONE


def test_revise_supersedes_the_card_with_a_new_proposal(server: AppServer, http: httpx.Client,
                                                       demo_db: Any) -> None:
    _, old = propose(server, http, phone_update("+44 7700 900111", "+44 7700 900333"))
    revised = decide(http, old["change_id"], "revise", feedback="The number ends in 333")
    assert revised.status == 200 and revised.finished["status"] == "awaiting_approval"
    [new] = revised.of("approval_required")[0]["changes"]
    assert new["change_id"] != old["change_id"]
    assert new["new"] == {"phone": "+44 7700 900333"}
    assert pending_ids(http) == [new["change_id"]]
    assert pending_ids(http, "superseded") == [old["change_id"]]
    assert decide(http, old["change_id"], "approve").status == 409

    done = decide(http, new["change_id"], "approve")
    assert done.status == 200 and done.finished["status"] == "completed"
    assert phone(demo_db) == "+44 7700 900333"
    assert applies(demo_db, old["change_id"]) == 0 and applies(demo_db, new["change_id"]) == 1


def test_an_expired_change_never_applies(server: AppServer, http: httpx.Client,
                                         demo_db: Any) -> None:
    demo_db["tenants"].update_one({"_id": "demo"}, {"$set": {"approval_ttl_s": 1}})
    _, card = propose(server, http, phone_update("+44 7700 900999"))
    cid = card["change_id"]
    change = change_doc(demo_db, cid)
    assert (change["expires_at"] - change["created_at"]).total_seconds() == 1
    wait = (change["expires_at"] - datetime.now(UTC)).total_seconds()
    time.sleep(max(0.0, wait) + 0.1)

    late = decide(http, cid, "approve")
    assert late.status == 410 and late.error and late.error["code"] == "expired"
    assert phone(demo_db) == OLD_PHONE
    change = change_doc(demo_db, cid)
    assert change["status"] == "expired"
    assert change["resumed_at"] is not None  # the run was told that it expired
    assert transitions(demo_db, cid) == [(None, "pending"), ("pending", "expired")]
    assert decide(http, cid, "approve").status == 410
    assert pending_ids(http) == [] and phone(demo_db) == OLD_PHONE
