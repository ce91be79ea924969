"""Recording pending changes: idempotent by thread, task, attempt and fingerprint."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from pymongo.database import Database

from opsgraph.approvals import fingerprint, get_change, history, list_changes, record_pending
from opsgraph.errors import BadInput, NotFound
from opsgraph.operations.base import Preview
from opsgraph.store.scope import Document, TenantScope

from .conftest import T0, Propose


def test_a_proposal_is_stored_with_everything_the_card_needs(scope: TenantScope,
                                                            propose: Propose) -> None:
    change = propose(task_id="t1")
    assert change.change_id.startswith("chg_") and len(change.change_id) == 20
    assert change.status == "pending"
    assert change.tenant_id == "demo"
    assert change.created_at == T0
    assert change.expires_at == T0 + timedelta(hours=1)
    assert change.fingerprint == fingerprint("members.update", change.args)
    assert change.card() == {
        "change_id": change.change_id,
        "operation": "members.update",
        "summary": "Update Jane",
        "old": {"email": "jane@old.example"},
        "new": {"email": "jane@new.example"},
        "args": change.args,
        "task_id": "t1",
        "expires_at": "2030-01-07T10:00:00+00:00",
    }
    stored = scope["pending_changes"].find_one({"_id": change.change_id})
    assert stored is not None
    assert stored["proposed_by"] == "staff-bo" and stored["agent"] == "members.editor"


def test_recording_the_same_proposal_again_returns_the_same_change(
        scope: TenantScope, propose: Propose) -> None:
    first = propose(task_id="t1")
    again = propose(task_id="t1", args={"changes": {"email": "jane@new.example"},
                                        "member": "mem_1"}, now=T0 + timedelta(minutes=5))
    assert again.change_id == first.change_id
    assert again.created_at == first.created_at
    assert scope["pending_changes"].count({}) == 1
    assert [row["to"] for row in history(scope, first.change_id)] == ["pending"]


def test_other_arguments_task_thread_or_attempt_make_another_change(
        scope: TenantScope, propose: Propose) -> None:
    base = propose(task_id="t1")
    ids = {
        base.change_id,
        propose(task_id="t1", args={"member": "mem_2", "changes": {"phone": "1"}}).change_id,
        propose(task_id="t2").change_id,
        propose(task_id="t1", thread_id="th-2").change_id,
        propose(task_id="t1", attempt=1).change_id,
    }
    assert len(ids) == 5
    assert scope["pending_changes"].count({}) == 5


def test_ten_concurrent_recordings_make_one_change(scope: TenantScope) -> None:
    got: list[str] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(10)

    def record() -> None:
        barrier.wait()
        try:
            got.append(record_pending(
                scope, thread_id="th-race", task_id="t1", agent="members.editor",
                operation="members.update", args={"member": "mem_1", "changes": {"phone": "2"}},
                preview=Preview("Update phone", {"phone": "1"}, {"phone": "2"}),
                proposed_by="staff-bo", now=T0).change_id)
        except BaseException as exc:  # a thread must not swallow a failure silently
            errors.append(exc)

    threads = [threading.Thread(target=record) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(got) == 10 and len(set(got)) == 1
    assert scope["pending_changes"].count({"thread_id": "th-race"}) == 1
    assert scope["audit"].count({"change_id": got[0]}) == 1


def test_the_expiry_comes_from_the_tenant_setting(store: Database[Document],
                                                  propose: Propose) -> None:
    store["tenants"].insert_one({"_id": "demo", "approval_ttl_s": 600})
    change = propose()
    assert change.expires_at == T0 + timedelta(minutes=10)


def test_list_and_get_see_only_this_tenant(store: Database[Document], scope: TenantScope,
                                           propose: Propose) -> None:
    other = TenantScope(store, "acme")
    mine = propose()
    theirs = propose(target=other)
    assert [c.change_id for c in list_changes(scope)] == [mine.change_id]
    assert get_change(scope, mine.change_id).change_id == mine.change_id
    with pytest.raises(NotFound):
        get_change(scope, theirs.change_id)
    assert list_changes(scope, status="applied") == []
    with pytest.raises(BadInput):
        list_changes(scope, status="bogus")  # type: ignore[arg-type]
