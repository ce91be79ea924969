"""Approve and edit: the change applies once, through the operation's own handler."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from pymongo.database import Database

from opsgraph.approvals import Decided, decide, get_change, history, list_changes
from opsgraph.approvals import edits as edits_module
from opsgraph.errors import Conflict, Forbidden, Unprocessable
from opsgraph.operations.base import Operation
from opsgraph.operations.catalogue import get_operation
from opsgraph.principal import Principal, Role
from opsgraph.store.scope import Document, TenantScope

from .conftest import T0, ProposeOp, person, race

LATER = T0 + timedelta(minutes=2)


@pytest.fixture
def apply_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Change id → how many times an operation handler's apply ran (the real handler)."""
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def counted(op_id: str) -> Operation:
        op = get_operation(op_id)
        real = op.apply
        assert real is not None

        def apply(ctx: Any, args: Any, change_id: str) -> dict[str, Any]:
            with lock:
                calls[change_id] = calls.get(change_id, 0) + 1
            return real(ctx, args, change_id)

        return dataclasses.replace(op, apply=apply)

    monkeypatch.setattr(edits_module, "get_operation", counted)
    return calls


def transitions(scope: TenantScope, change_id: str) -> list[tuple[str | None, str]]:
    return [(r["from"], r["to"]) for r in history(scope, change_id)]


def test_approve_applies_the_change_once_and_records_it(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str) -> None:
    change = propose_op("members.update", {"member": "jane.smith@example.com",
                                           "changes": {"email": "jane@new.example"}})
    assert change.args["member"] == jane  # stored resolved
    out = decide(scope, change.change_id, "approve", manager, now=LATER)
    assert out.outcome == "applied" and out.must_resume
    assert out.result is not None and out.result["member"]["email"] == "jane@new.example"
    member = scope["members"].find_one({"_id": jane})
    assert member is not None and member["email"] == "jane@new.example"
    assert member["applied_changes"] == [change.change_id]
    assert scope["members"].count({"email": "jane@new.example"}) == 1
    stored = get_change(scope, change.change_id)
    assert stored.status == "applied" and stored.decided_by == "mgr-ada"
    assert transitions(scope, change.change_id) == [
        (None, "pending"), ("pending", "executing"), ("executing", "applied")]
    assert {r["actor"] for r in history(scope, change.change_id)[1:]} == {"mgr-ada"}
    assert history(scope, change.change_id)[0]["actor"] == "staff-bo"
    with pytest.raises(Conflict):
        decide(scope, change.change_id, "approve", manager, now=LATER)


def test_twenty_concurrent_approvals_apply_exactly_once(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        apply_calls: dict[str, int]) -> None:
    trials, losers = 5, 0
    for n in range(trials):
        change = propose_op("invoices.issue", {"member": jane, "lines": [
            {"description": f"Locker rental {n}", "amount": 20 + n}]})
        cid = change.change_id
        wins, errors = race(20, lambda _i, cid=cid: decide(  # type: ignore[misc]
            scope, cid, "approve", manager, now=LATER))
        assert len(wins) == 1, errors
        assert len(errors) == 19 and all(isinstance(e, Conflict) for e in errors), errors
        losers += len(errors)
        assert apply_calls[cid] == 1
        assert scope["invoices"].count({"change_id": cid}) == 1
        assert scope["invoices"].count({"member_id": jane, "lines.description":
                                        f"Locker rental {n}"}) == 1
        assert transitions(scope, cid) == [
            (None, "pending"), ("pending", "executing"), ("executing", "applied")]
    assert losers == 19 * trials
    assert sum(apply_calls.values()) == trials


def test_an_expired_change_is_never_applied(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        apply_calls: dict[str, int]) -> None:
    from opsgraph.errors import Gone

    change = propose_op("members.update", {"member": jane,
                                           "changes": {"phone": "+44 7700 900555"}})
    with pytest.raises(Gone):
        decide(scope, change.change_id, "approve", manager,
               now=change.expires_at + timedelta(seconds=1))
    assert apply_calls == {}
    assert scope["members"].count({"_id": jane, "phone": "+44 7700 900555"}) == 0
    assert scope["members"].count({"applied_changes": change.change_id}) == 0


def test_an_edit_applies_the_edited_values_and_records_the_diff(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str) -> None:
    change = propose_op("members.update", {"member": jane,
                                           "changes": {"email": "jane@new.example"}})
    out = decide(scope, change.change_id, "edit", manager,
                 values={"changes": {"email": "jane@work.example"}}, now=LATER)
    assert out.outcome == "applied"
    member = scope["members"].find_one({"_id": jane})
    assert member is not None and member["email"] == "jane@work.example"
    stored = get_change(scope, change.change_id)
    assert stored.diff == {"changes.email": {"from": "jane@new.example",
                                             "to": "jane@work.example"}}
    assert stored.values == {"changes": {"email": "jane@work.example"}}
    assert stored.args == {"member": jane, "changes": {"email": "jane@work.example"}}
    assert history(scope, change.change_id)[1]["detail"]["diff"] == stored.diff


def test_an_edit_refreshes_the_stored_card(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str) -> None:
    change = propose_op("members.update", {"member": jane,
                                           "changes": {"email": "jane@new.example"}})
    assert change.new == {"email": "jane@new.example"}
    decide(scope, change.change_id, "edit", manager,
           values={"changes": {"email": "jane@work.example", "phone": "+44 7700 900555"}},
           now=LATER)
    stored = get_change(scope, change.change_id)
    assert stored.old == {"email": "jane.smith@example.com", "phone": "+44 7700 900101"}
    assert stored.new == {"email": "jane@work.example", "phone": "+44 7700 900555"}
    assert "jane@work.example" in stored.summary and "jane@new.example" not in stored.summary
    [listed] = list_changes(scope, None)
    assert (listed.summary, listed.new) == (stored.summary, stored.new)
    audited = history(scope, change.change_id)[1]["detail"]
    assert (audited["summary"], audited["old"], audited["new"]) == (
        stored.summary, stored.old, stored.new)


@pytest.mark.parametrize("values, field", [
    ({"changes": {"email": "not-an-email"}}, "changes.email"),
    ({"changes": {"status": "sleeping"}}, "changes.status"),
    ({"bogus": 1}, "bogus"),
    ({"member": "Nobody Atall"}, "member"),
    ({"member": "Tom Baker"}, "member"),  # two members have that name
    ({"changes": {"email": "tom.baker@example.com"}}, "changes.email"),  # another's email
    ({"changes": {"email": "jane.smith@example.com"}}, "changes"),  # changes nothing
])
def test_an_invalid_edit_is_422_and_leaves_the_change_pending(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        values: dict[str, Any], field: str, apply_calls: dict[str, int]) -> None:
    change = propose_op("members.update", {"member": jane,
                                           "changes": {"email": "jane@new.example"}})
    with pytest.raises(Unprocessable, match=field) as caught:
        decide(scope, change.change_id, "edit", manager, values=values, now=LATER)
    assert caught.value.status == 422
    assert get_change(scope, change.change_id).status == "pending"
    assert transitions(scope, change.change_id) == [(None, "pending")]
    assert apply_calls == {}
    # and the change can still be approved as proposed
    assert decide(scope, change.change_id, "approve", manager, now=LATER).outcome == "applied"


def test_a_business_error_in_apply_settles_the_change_as_failed(
        scope: TenantScope, store: Database[Document], propose_op: ProposeOp,
        manager: Principal, jane: str) -> None:
    change = propose_op("members.update", {"member": jane,
                                           "changes": {"phone": "+44 7700 900555"}})
    store["members"].delete_one({"_id": jane})  # the record went away while waiting
    out = decide(scope, change.change_id, "approve", manager, now=LATER)
    assert out.outcome == "failed" and out.must_resume and out.result is None
    stored = get_change(scope, change.change_id)
    assert stored.status == "failed"
    assert stored.error is not None and stored.error["code"] == "not_found"
    assert transitions(scope, change.change_id)[-1] == ("executing", "failed")


CrashAt = Callable[[str], None]


def test_a_crashed_apply_is_taken_over_once_its_lease_ran_out(
        scope: TenantScope, store: Database[Document], propose_op: ProposeOp,
        manager: Principal, jane: str, apply_calls: dict[str, int]) -> None:
    change = propose_op("invoices.issue", {"member": jane, "lines": [
        {"description": "Court hire", "amount": 30}]})
    # A decider won the CAS and died before (or while) applying: executing, lease set.
    store["pending_changes"].update_one({"_id": change.change_id}, {"$set": {
        "status": "executing", "lease_until": LATER + timedelta(seconds=30),
        "lease_token": "dead", "decision": "approve"}})
    with pytest.raises(Conflict, match="executing"):
        decide(scope, change.change_id, "approve", manager, now=LATER + timedelta(seconds=10))
    assert apply_calls == {}
    out = decide(scope, change.change_id, "approve", manager,
                 now=LATER + timedelta(seconds=31))
    assert out.outcome == "applied" and out.must_resume
    assert apply_calls == {change.change_id: 1}
    assert get_change(scope, change.change_id).takeovers == 1
    assert scope["invoices"].count({"change_id": change.change_id}) == 1
    assert transitions(scope, change.change_id)[-2:] == [
        ("executing", "executing"), ("executing", "applied")]
    with pytest.raises(Conflict):
        decide(scope, change.change_id, "approve", manager, now=LATER + timedelta(seconds=32))


def _crashed_while_executing(store: Database[Document], change_id: str) -> None:
    """A decider won the CAS to executing and died; its lease ran out at LATER."""
    store["pending_changes"].update_one({"_id": change_id}, {"$set": {
        "status": "executing", "lease_until": LATER, "lease_token": "dead",
        "decision": "approve"}})


@pytest.mark.parametrize("decision", ["reject", "revise"])
def test_a_crashed_apply_cannot_be_rejected_or_revised(
        scope: TenantScope, store: Database[Document], propose_op: ProposeOp,
        manager: Principal, jane: str, apply_calls: dict[str, int], decision: str) -> None:
    change = propose_op("members.update", {"member": jane, "changes": {"notes": "VIP"}})
    _crashed_while_executing(store, change.change_id)
    with pytest.raises(Conflict, match="executing"):
        decide(scope, change.change_id, decision, manager, feedback="no",
               now=LATER + timedelta(minutes=1))
    stored = get_change(scope, change.change_id)
    assert (stored.status, stored.takeovers, stored.decision) == ("executing", 0, "approve")
    assert apply_calls == {}
    assert transitions(scope, change.change_id) == [(None, "pending")]


def test_an_edit_may_take_over_a_crashed_apply(
        scope: TenantScope, store: Database[Document], propose_op: ProposeOp,
        manager: Principal, jane: str, apply_calls: dict[str, int]) -> None:
    change = propose_op("members.update", {"member": jane, "changes": {"notes": "VIP"}})
    _crashed_while_executing(store, change.change_id)
    out = decide(scope, change.change_id, "edit", manager,
                 values={"changes": {"notes": "VIP"}}, now=LATER + timedelta(minutes=1))
    assert out.outcome == "applied" and out.change.takeovers == 1
    assert apply_calls == {change.change_id: 1}


@pytest.mark.parametrize(("first", "again", "outcome"), [
    ("approve", "approve", "applied"), ("approve", "edit", None), ("approve", "reject", None),
    ("edit", "edit", "applied"), ("edit", "approve", None),
    ("reject", "reject", "rejected"), ("reject", "approve", None), ("reject", "revise", None),
    ("revise", "revise", "revise"), ("revise", "reject", None), ("revise", "edit", None),
])
def test_a_repost_returns_the_outcome_only_for_the_decision_that_settled_it(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        first: str, again: str, outcome: str | None) -> None:
    change = propose_op("members.update", {"member": jane, "changes": {"notes": "VIP"}})
    values = {"changes": {"notes": "VIP!"}}
    decide(scope, change.change_id, first, manager, feedback="x",
           values=values if first == "edit" else None, now=LATER)

    def repost() -> Decided:  # once the settling decider's lease ran out, run not resumed
        return decide(scope, change.change_id, again, manager, feedback="x",
                      values=values if again == "edit" else None,
                      now=LATER + timedelta(minutes=1))

    if outcome is None:
        with pytest.raises(Conflict):
            repost()
    else:
        out = repost()
        assert out.outcome == outcome and out.must_resume


def test_a_takeover_after_apply_ran_does_not_apply_twice(
        scope: TenantScope, store: Database[Document], propose_op: ProposeOp,
        manager: Principal, jane: str) -> None:
    """The crash came after the handler ran but before the CAS to applied."""
    change = propose_op("invoices.issue", {"member": jane, "lines": [
        {"description": "Court hire", "amount": 30}]})
    op = get_operation("invoices.issue")
    assert op.apply is not None
    from opsgraph.operations.base import Context

    op.apply(Context(scope, manager, LATER), op.input.model_validate(change.args),
             change.change_id)  # the apply that happened before the crash
    store["pending_changes"].update_one({"_id": change.change_id}, {"$set": {
        "status": "executing", "lease_until": LATER, "lease_token": "dead"}})
    out = decide(scope, change.change_id, "approve", manager, now=LATER + timedelta(minutes=1))
    assert out.outcome == "applied"
    assert scope["invoices"].count({"change_id": change.change_id}) == 1


def test_an_edit_cannot_widen_what_the_decider_may_do(
        scope: TenantScope, seeded: Database[Document], propose_op: ProposeOp,
        manager: Principal, apply_calls: dict[str, int]) -> None:
    invoice = scope["invoices"].find_one({"status": "paid", "paid": {"$gt": 600}})
    assert invoice is not None
    change = propose_op("invoices.refund", {"invoice": invoice["number"], "amount": 50,
                                            "reason": "Duplicate charge"}, by=manager)
    with pytest.raises(Forbidden, match="admin") as caught:
        decide(scope, change.change_id, "edit", manager, values={"amount": 600}, now=LATER)
    assert caught.value.status == 403
    assert get_change(scope, change.change_id).status == "pending"
    assert transitions(scope, change.change_id) == [(None, "pending")]
    assert apply_calls == {}
    # an admin may; the refund applies once, with the edited amount
    out = decide(scope, change.change_id, "edit", person(Role.ADMIN, "adm-1"),
                 values={"amount": 600}, now=LATER)
    assert out.outcome == "applied"
    after = scope["invoices"].find_one({"_id": invoice["_id"]})
    assert after is not None  # money is Decimal128 in the store
    assert after["refunded"] == Decimal(str(invoice["refunded"])) + 600
    assert [r["change_id"] for r in after["refunds"]] == [change.change_id]
    assert get_change(scope, change.change_id).diff == {"amount": {"from": 50.0, "to": 600}}


def test_mixed_concurrent_decisions_have_one_winner_and_one_apply_at_most(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str,
        apply_calls: dict[str, int]) -> None:
    kinds = ("approve", "reject", "edit", "revise")
    for n in range(4):
        cid = propose_op("members.update", {"member": jane,
                                            "changes": {"notes": f"note {n}"}}).change_id

        def attempt(i: int, cid: str = cid) -> object:
            values = {"changes": {"notes": f"edited {i}"}} if kinds[i % 4] == "edit" else None
            return decide(scope, cid, kinds[i % 4], manager, feedback="x", values=values,
                          now=LATER)

        wins, errors = race(20, attempt)
        assert len(wins) == 1 and len(errors) == 19
        others = [e for e in errors if not isinstance(e, Conflict)]
        assert not others, [f"{type(e).__name__}: {e}" for e in others]
        status = get_change(scope, cid).status
        assert apply_calls.get(cid, 0) == (1 if status == "applied" else 0)
        assert len(history(scope, cid)) == (3 if status == "applied" else 2)


def test_the_decider_resumes_the_run_once(scope: TenantScope, propose_op: ProposeOp,
                                          manager: Principal, jane: str) -> None:
    from opsgraph.approvals import ResumeValue, claim_resume, mark_resumed

    cid = propose_op("members.update", {"member": jane,
                                        "changes": {"notes": "VIP"}}).change_id
    out = decide(scope, cid, "approve", manager, now=LATER)
    assert out.must_resume
    assert out.resume_value() == ResumeValue(change_id=cid, outcome="applied", result=out.result)
    wins, errors = race(10, lambda _i: claim_resume(scope, cid, now=LATER))
    assert errors == [] and wins.count(True) == 1
    mark_resumed(scope, cid, now=LATER)
    assert get_change(scope, cid).resumed_at == LATER
    with pytest.raises(Conflict, match="applied"):
        decide(scope, cid, "approve", manager, now=LATER + timedelta(hours=2))
    body = get_change(scope, cid).to_json()
    assert body["change_id"] == cid and body["status"] == "applied"
    assert body["resumed_at"] == LATER.isoformat() and "lease_token" not in body
