"""A run killed (SIGKILL) after one of its two tasks recorded a proposal, before the run
paused: no checkpoint holds the card, so no run waits for it.

Approving that change applies nothing and answers 410 `orphaned` (it used to apply the
refund and answer 409 "its run was already resumed"). The same request asked again takes
that very card instead of making a second one, and approving it applies once.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.app_process import AppServer
from tests.e2e.flows import (
    PROPOSER,
    applies,
    big_paid_invoice,
    change_doc,
    decide,
    refunds_of,
    transitions,
)
from tests.e2e.http_client import Streamed, bearer, headers_for, stream
from tests.e2e.scripts import call, refund, task

AMOUNT = 100.0
# Armed to die once a proposal is recorded; a short thread lease, so the killed run's lease
# on its thread lapses soon after the restart.
KILLED_AFTER_PROPOSING = pytest.param(
    {"OPSGRAPH_CRASH_AT": "after_propose", "OPSGRAPH_THREAD_LEASE_S": "3"},
    id="after_propose")


def refund_and_hours(invoice: str) -> dict[str, Any]:
    """Two tasks: the refund (a proposal) and a read of the opening hours."""
    script = refund(invoice, AMOUNT)
    script["plan"]["tasks"].append(task("t2", "knowledge", "search", "Find the opening hours"))
    script["turns"]["t2"] = [call("knowledge_search", query="opening hours"),
                             {"content": "We open at 6am on weekdays."}]
    return script


def ask(client: httpx.Client, invoice: dict[str, Any]) -> Streamed:
    """The manager's request: the refund, and the opening hours."""
    message = (f"Refund {AMOUNT:.2f} on {invoice['number']}, it was charged twice, and "
               "tell me the opening hours.")
    return stream(client, "/v1/runs", {"message": message},
                  headers_for("manager", user=PROPOSER))


def killed_while_proposing(server: AppServer, db: Any) -> tuple[dict[str, Any], str]:
    """Ask for the refund on the armed server: it dies after recording the proposal.
    Restarts it unarmed; (the invoice, the change left pending)."""
    invoice = big_paid_invoice(db)
    server.write_script(refund_and_hours(invoice["number"]))
    with server.client() as client, pytest.raises(httpx.TransportError):
        ask(client, invoice)
    assert server.wait_exit() == -9  # SIGKILL, by its own hand
    [left] = db["pending_changes"].find({"tenant_id": "demo", "status": "pending"})
    server.restart()
    return invoice, str(left["_id"])


def pending_ids(http: httpx.Client) -> list[str]:
    listed = http.get("/v1/approvals", headers=bearer("manager", user="sam"))
    assert listed.status_code == 200, listed.text
    return [c["change_id"] for c in listed.json()["changes"]]


@pytest.mark.parametrize("server", [KILLED_AFTER_PROPOSING], indirect=True)
def test_a_change_left_by_a_killed_run_is_refused_and_never_applies(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    invoice, change_id = killed_while_proposing(server, demo_db)
    assert pending_ids(http) == [change_id]

    refused = decide(http, change_id, "approve")
    print(f"\norphan decided: {refused.status} {refused.error}")
    assert refused.status == 410 and refused.error is not None
    assert refused.error["code"] == "orphaned"
    assert "Nothing was applied" in refused.error["message"]
    assert refunds_of(demo_db, invoice["_id"], change_id) == 0
    assert applies(demo_db, change_id) == 0
    assert change_doc(demo_db, change_id)["status"] == "orphaned"
    assert pending_ids(http) == []
    assert decide(http, change_id, "approve").status == 410  # the same answer, again
    assert transitions(demo_db, change_id) == [(None, "pending"), ("pending", "orphaned")]


@pytest.mark.parametrize("server", [KILLED_AFTER_PROPOSING], indirect=True)
def test_asked_again_the_request_takes_the_same_card_and_applies_once(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    invoice, change_id = killed_while_proposing(server, demo_db)

    retried = ask(http, invoice)
    assert retried.finished["status"] == "awaiting_approval", retried.events
    [card] = retried.of("approval_required")[0]["changes"]
    assert card["change_id"] == change_id  # not a second card
    assert pending_ids(http) == [change_id]

    resumed = decide(http, change_id, "approve")
    assert resumed.status == 200, resumed.error
    assert resumed.finished["status"] == "completed", resumed.events
    print(f"\nretried: applies={applies(demo_db, change_id)}, "
          f"refund entries={refunds_of(demo_db, invoice['_id'], change_id)}")
    assert applies(demo_db, change_id) == 1
    assert refunds_of(demo_db, invoice["_id"], change_id) == 1
    assert decide(http, change_id, "approve").status == 409
