"""Crash and resume: the server process dies (SIGKILL) at each point of a decision, starts
again, and the decision is finished: exactly one apply, and the same final state as a run
that was never killed.

The flow is a manager's refund (its effect adds up, so a second apply would show as money):
propose → pause → approve → apply → settle → resume → answer. Crash points
(`OPSGRAPH_CRASH_AT`, see `opsgraph.faults`): `after_cas` (claimed, not applied),
`after_apply` (applied, still executing), `after_settle` (applied, run not resumed).

The run that is never killed is the same flow on a twin tenant (the demo data set under
another tenant id) in the same database, decided on the restarted server.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import httpx
import pytest

from opsgraph.store.seed import seed
from tests.e2e.app_process import APPLY_LEASE_S, AppServer, armed
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
    transitions,
)
from tests.e2e.http_client import Streamed, bearer
from tests.e2e.scripts import refund

AMOUNT = 100.0
TWIN = "twin"
TAKEOVER = ("executing", "executing")
_UNSTABLE = frozenset({"change_id", "at", "thread_id", "run_id", "usage", "tenant_id",
                       "resumed"})  # run_started of a resumed run: the change ids


@dataclass(frozen=True)
class Outcome:
    """What a finished decision leaves behind, without ids, clocks and the tenant's name."""

    invoice: Any
    change: Any
    transitions: list[tuple[str | None, str]]
    resumed_events: list[tuple[str, Any]]
    takeovers: int


@dataclass(frozen=True)
class Refund:
    """One refund proposal: whose, on which invoice, under which change."""

    tenant: str
    invoice_id: str
    change_id: str


def scrub(value: Any, tenant: str) -> Any:
    """`value` without what differs between two equal runs: ids, clocks, the tenant."""
    if isinstance(value, dict):
        return {k: scrub(v, tenant) for k, v in value.items() if k not in _UNSTABLE}
    if isinstance(value, list):
        return [scrub(v, tenant) for v in value]
    if isinstance(value, str):
        return value.replace(f"_{tenant}_", "_<tenant>_")  # record ids: inv_demo_1130
    return value


def outcome_of(db: Any, refund_: Refund, resumed: Streamed) -> Outcome:
    change = change_doc(db, refund_.change_id)
    trail = transitions(db, refund_.change_id)
    fields = ("status", "decision", "decided_by", "args", "old", "new", "result", "error")
    return Outcome(
        invoice=scrub(db["invoices"].find_one({"_id": refund_.invoice_id}), refund_.tenant),
        change=scrub({k: change.get(k) for k in fields}, refund_.tenant),
        transitions=[t for t in trail if t != TAKEOVER],
        resumed_events=[(name, scrub(data, refund_.tenant)) for _, name, data in resumed.events],
        takeovers=trail.count(TAKEOVER),
    )


def propose_refund(server: AppServer, http: httpx.Client, db: Any,
                   tenant: str = "demo") -> Refund:
    """A manager asks for a refund; the run pauses on its card."""
    invoice = big_paid_invoice(db, tenant)
    _, card = propose(server, http, refund(invoice["number"], AMOUNT), role="manager",
                      user=PROPOSER, tenant=tenant)
    return Refund(tenant, invoice["_id"], card["change_id"])


def approve_completes(http: httpx.Client, refund_: Refund) -> Streamed:
    resumed = decide(http, refund_.change_id, "approve", tenant=refund_.tenant)
    assert resumed.status == 200, resumed.error
    assert resumed.finished["status"] == "completed", resumed.events
    return resumed


def approve_dies(server: AppServer, refund_: Refund) -> None:
    """POST an approval to a server armed with a crash point: it dies mid-request."""
    with server.client() as client, pytest.raises(httpx.TransportError):
        client.post(f"/v1/approvals/{refund_.change_id}", json={"decision": "approve"},
                    headers=bearer("manager", refund_.tenant, user=DECIDER))
    assert server.wait_exit() == -9  # SIGKILL, by its own hand


def never_killed(server: AppServer, http: httpx.Client, db: Any) -> Outcome:
    """The same flow on the twin tenant, on a server that stays up throughout."""
    seed(db, tenant=TWIN)
    twin = propose_refund(server, http, db, TWIN)
    outcome = outcome_of(db, twin, approve_completes(http, twin))
    assert outcome.takeovers == 0 and applies(db, twin.change_id) == 1
    return outcome


def report(point: str, db: Any, refund_: Refund, result: Outcome) -> None:
    print(f"\ncrash {point}: 1 kill, applies={applies(db, refund_.change_id)}, "
          f"refund entries={refunds_of(db, refund_.invoice_id, refund_.change_id)}, "
          f"takeovers={result.takeovers}, status={result.change['status']}, "
          f"run={result.resumed_events[-1][1]['status']}")


def test_killed_while_paused_resumes_after_restart(server: AppServer, http: httpx.Client,
                                                  demo_db: Any) -> None:
    mine = propose_refund(server, http, demo_db)
    server.kill()  # the interrupt is checkpointed: the stream ended awaiting approval
    server.restart()
    result = outcome_of(demo_db, mine, approve_completes(http, mine))
    report("while paused", demo_db, mine, result)
    assert result == never_killed(server, http, demo_db)
    assert refunds_of(demo_db, mine.invoice_id, mine.change_id) == 1


@pytest.mark.parametrize(("server", "effects_at_crash"),
                         [armed("after_cas", 0), armed("after_apply", 1)], indirect=["server"])
def test_killed_while_executing_applies_once_after_restart(
        server: AppServer, http: httpx.Client, demo_db: Any, effects_at_crash: int) -> None:
    point = str(server.crash_at)
    mine = propose_refund(server, http, demo_db)
    approve_dies(server, mine)
    claimed = change_doc(demo_db, mine.change_id)
    assert claimed["status"] == "executing"  # claimed; applied or not, never settled
    assert refunds_of(demo_db, mine.invoice_id, mine.change_id) == effects_at_crash
    assert applies(demo_db, mine.change_id) == 0

    server.restart()  # same port, unarmed
    reference = never_killed(server, http, demo_db)
    sleep_past(claimed["lease_until"])  # the dead decider's claim must lapse first
    result = outcome_of(demo_db, mine, approve_completes(http, mine))
    report(point, demo_db, mine, result)
    assert result == replace(reference, takeovers=1)  # the one extra row: the takeover
    assert applies(demo_db, mine.change_id) == 1
    assert refunds_of(demo_db, mine.invoice_id, mine.change_id) == 1
    assert demo_db["invoices"].find_one({"_id": mine.invoice_id})["refunded"] == AMOUNT


@pytest.mark.parametrize("server", [armed("after_settle")], indirect=True)
def test_killed_after_settling_resumes_without_a_second_apply(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    mine = propose_refund(server, http, demo_db)
    approve_dies(server, mine)
    settled = change_doc(demo_db, mine.change_id)
    assert settled["status"] == "applied" and settled.get("resumed_at") is None
    assert applies(demo_db, mine.change_id) == 1

    server.restart()
    reference = never_killed(server, http, demo_db)
    # A re-posted decision finishes a settled change once the settler's lease is over.
    sleep_past(settled["finished_at"] + timedelta(seconds=APPLY_LEASE_S))
    result = outcome_of(demo_db, mine, approve_completes(http, mine))
    report("after_settle", demo_db, mine, result)
    assert result == reference
    assert applies(demo_db, mine.change_id) == 1
    assert refunds_of(demo_db, mine.invoice_id, mine.change_id) == 1
    assert change_doc(demo_db, mine.change_id)["resumed_at"] is not None
    assert decide(http, mine.change_id, "approve").status == 409
