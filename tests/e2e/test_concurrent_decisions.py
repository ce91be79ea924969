"""Many managers approve the same change at once, over HTTP: exactly one wins."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.app_process import APPLY_LEASE_S, AppServer
from tests.e2e.flows import (
    PROPOSER,
    applies,
    big_paid_invoice,
    change_doc,
    decide,
    propose,
    refunds_of,
    sleep_past,
    transitions,
    wait_for,
)
from tests.e2e.http_client import Streamed, bearer, stream
from tests.e2e.scripts import phone_update, refund

CHANGES = 5
DECIDERS = 20
AMOUNT = 10.0


def approve_at_once(server: AppServer, change_id: str) -> list[Streamed]:
    """`DECIDERS` managers, one client each, released together by a barrier."""
    barrier = threading.Barrier(DECIDERS)

    def one(n: int) -> Streamed:
        headers = bearer("manager", user=f"manager-{n}")
        with server.client() as client:
            barrier.wait()
            return stream(client, f"/v1/approvals/{change_id}", {"decision": "approve"},
                          headers)

    with ThreadPoolExecutor(DECIDERS) as pool:
        return list(pool.map(one, range(DECIDERS)))


# The default apply lease (30 s), as in production: the one-second lease of the crash tests
# would expose this test to the resume-claim bug shown below.
@pytest.mark.parametrize("server", [{"OPSGRAPH_APPLY_LEASE_S": "30"}], indirect=True,
                         ids=["lease-30s"])
def test_one_of_twenty_concurrent_approvals_wins(server: AppServer, demo_db: Any) -> None:
    invoice = big_paid_invoice(demo_db)
    with server.client() as http:
        # Five different refunds (a retried identical one would take the same card).
        cards = [propose(server, http, refund(invoice["number"], AMOUNT,
                                              reason=f"Charged twice (payment {n + 1})"),
                         role="manager", user=PROPOSER)[1] for n in range(CHANGES)]
    change_ids = [card["change_id"] for card in cards]
    assert len(set(change_ids)) == CHANGES

    figures: Counter[str] = Counter()
    for cid in change_ids:
        results = approve_at_once(server, cid)
        statuses = Counter(r.status for r in results)
        assert statuses == {200: 1, 409: DECIDERS - 1}, statuses
        [winner] = [r for r in results if r.status == 200]
        assert winner.finished["status"] == "completed"
        assert all(r.error and r.error["code"] == "conflict" for r in results if r.status == 409)
        # Applied once: one audit row, one claim, one refund entry on the invoice.
        assert applies(demo_db, cid) == 1
        assert transitions(demo_db, cid).count(("pending", "executing")) == 1
        assert refunds_of(demo_db, invoice["_id"], cid) == 1
        assert change_doc(demo_db, cid)["status"] == "applied"
        figures.update(trials=DECIDERS, applies=applies(demo_db, cid),
                       wins=statuses[200], losers=statuses[409])

    after = demo_db["invoices"].find_one({"_id": invoice["_id"]})
    assert after["refunded"] == CHANGES * AMOUNT
    assert len(after["refunds"]) == CHANGES
    print(f"\nconcurrent approvals: {CHANGES} changes x {DECIDERS} deciders = "
          f"{figures['trials']} trials, {figures['wins']} wins (200), "
          f"{figures['applies']} applies, {figures['losers']} losers (409); "
          f"refunded {after['refunded']:.2f} = {CHANGES} x {AMOUNT:.2f}")


def test_a_second_approval_during_a_long_resume_is_409(server: AppServer, http: httpx.Client,
                                                      demo_db: Any) -> None:
    # The resumed run's last model turn takes twice the one-second lease.
    _, card = propose(server, http, phone_update("+44 7700 900999", final_delay_ms=2000))
    cid = card["change_id"]

    def first_decision() -> Streamed:
        with server.client() as client:
            return decide(client, cid, "approve")

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(first_decision)
        claimed = wait_for(lambda: change_doc(demo_db, cid).get("resume_lease_until"))
        settled = change_doc(demo_db, cid)["finished_at"] + timedelta(seconds=APPLY_LEASE_S)
        sleep_past(max(claimed, settled))  # the first decider is still resuming the run
        posted = datetime.now(UTC)
        second = decide(http, cid, "approve")
        assert first.result().finished["status"] == "completed"
    if change_doc(demo_db, cid)["resumed_at"] <= posted:
        pytest.skip("the machine was too slow: the first resume ended before the second post")
    assert applies(demo_db, cid) == 1
    assert second.status == 409, second.events
