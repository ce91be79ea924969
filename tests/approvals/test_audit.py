"""The audit trail: one row per transition, with who, when, what and from which thread."""

from __future__ import annotations

from datetime import timedelta

from pymongo.database import Database

from opsgraph.approvals import decide, history, record_transition
from opsgraph.principal import Principal
from opsgraph.store.scope import Document, TenantScope

from .conftest import T0, Propose, ProposeOp


def test_every_transition_of_an_edit_is_recorded_in_full(
        scope: TenantScope, propose_op: ProposeOp, manager: Principal, jane: str) -> None:
    change = propose_op("members.update", {"member": jane, "changes": {"notes": "a"}})
    at = T0 + timedelta(minutes=3)
    decide(scope, change.change_id, "edit", manager, values={"changes": {"notes": "b"}},
           now=at)
    rows = history(scope, change.change_id)
    assert [(r["from"], r["to"]) for r in rows] == [
        (None, "pending"), ("pending", "executing"), ("executing", "applied")]
    for row in rows:
        assert set(row) == {"tenant_id", "change_id", "operation", "from", "to", "actor",
                            "thread_id", "at", "detail"}
        assert row["tenant_id"] == "demo" and row["change_id"] == change.change_id
        assert row["operation"] == "members.update" and row["thread_id"] == "th-ops"
    assert [r["actor"] for r in rows] == ["staff-bo", "mgr-ada", "mgr-ada"]
    assert [r["at"] for r in rows] == [T0, at, at]
    assert rows[0]["detail"]["agent"] == "members.agent"
    notes = "Prefers evening court slots."  # Jane's notes in the demo data
    assert rows[1]["detail"] == {
        "decision": "edit", "diff": {"changes.notes": {"from": "a", "to": "b"}},
        "old": {"notes": notes}, "new": {"notes": "b"},
        "summary": f"Update Jane Smith: notes {notes!r} → 'b'"}


def test_reject_and_revise_record_the_decision_and_feedback(
        scope: TenantScope, propose: Propose, manager: Principal) -> None:
    at = T0 + timedelta(minutes=1)
    for decision, status in (("reject", "rejected"), ("revise", "superseded")):
        change = propose()
        decide(scope, change.change_id, decision, manager, feedback="why", now=at)
        last = history(scope, change.change_id)[-1]
        assert (last["from"], last["to"], last["actor"]) == ("pending", status, "mgr-ada")
        assert last["detail"] == {"decision": decision, "feedback": "why"}


def test_history_is_seen_only_from_the_changes_tenant(
        store: Database[Document], scope: TenantScope, propose: Propose) -> None:
    change = propose()
    assert len(history(scope, change.change_id)) == 1
    assert history(TenantScope(store, "acme"), change.change_id) == []


def test_an_extra_transition_is_a_row_of_the_same_shape(
        scope: TenantScope, propose: Propose) -> None:
    change = propose()
    record_transition(scope, change.change_id, "pending", "pending", "ops-bot", "th-1",
                      detail={"note": "reminder sent"}, operation=change.operation,
                      now=T0 + timedelta(minutes=9))
    row = history(scope, change.change_id)[-1]
    assert row == {"tenant_id": "demo", "change_id": change.change_id,
                   "operation": "members.update", "from": "pending", "to": "pending",
                   "actor": "ops-bot", "thread_id": "th-1", "at": T0 + timedelta(minutes=9),
                   "detail": {"note": "reminder sent"}}
