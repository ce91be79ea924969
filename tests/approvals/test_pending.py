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
        "created_at": "2030-01-07T09:00:00+00:00",
        "status": "pending",
        "status_label": "Waiting for a manager",  # opsgraph.status_words
        "thread_id": "th-1",
        # who asked, by name where the tenant has a record of them (here it has none)
        "requested_by": {"user_id": "staff-bo", "name": "staff-bo"},
        "request": "",  # noted when the run pauses (engine.thread_log)
        "waits_for": [],  # the changes it depends on (approvals.dependents)
        "origin": "run",  # an agent's run proposed it (not a reply draft)
        # each field in words (approvals.fields), amounts in the change's currency
        "fields": [{"field": "email", "label": "email", "old": "jane@old.example",
                    "new": "jane@new.example", "changed": True}],
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


def test_other_arguments_task_attempt_or_requester_make_another_change(
        scope: TenantScope, propose: Propose) -> None:
    base = propose(task_id="t1")
    ids = {
        base.change_id,
        propose(task_id="t1", args={"member": "mem_2", "changes": {"phone": "1"}}).change_id,
        propose(task_id="t2").change_id,
        propose(task_id="t1", attempt=1).change_id,
        propose(task_id="t1", thread_id="th-2", proposed_by="staff-cy").change_id,
    }
    assert len(ids) == 5
    assert scope["pending_changes"].count({}) == 5


def test_the_same_request_asked_again_on_another_thread_is_the_same_card(
        scope: TenantScope, propose: Propose) -> None:
    first = propose(task_id="t1", thread_id="th-killed")
    retry = propose(task_id="t3", thread_id="th-retry", now=T0 + timedelta(minutes=20),
                    preview=Preview("Update Jane", {"email": "jane@fresh.example"},
                                    {"email": "jane@new.example"}))
    assert retry.change_id == first.change_id
    assert scope["pending_changes"].count({}) == 1
    # the card moves to the run that asked last, with its preview and a fresh expiry
    assert (retry.thread_id, retry.task_id, retry.status) == ("th-retry", "t3", "pending")
    assert retry.old == {"email": "jane@fresh.example"}
    assert retry.expires_at == T0 + timedelta(minutes=80)
    assert retry.run_threads() == ["th-retry", "th-killed"]
    assert [(r["from"], r["to"], r["thread_id"]) for r in history(scope, first.change_id)] == [
        (None, "pending", "th-killed"), ("pending", "pending", "th-retry")]
    # each run replaying its proposal on resume finds the same change again, unmoved
    assert propose(task_id="t1", thread_id="th-killed").change_id == first.change_id
    assert propose(task_id="t3", thread_id="th-retry").change_id == first.change_id
    assert get_change(scope, first.change_id).thread_id == "th-retry"


def test_a_decided_or_expired_change_is_not_asked_again(scope: TenantScope,
                                                         propose: Propose) -> None:
    expired = propose(task_id="t1", thread_id="th-a")
    later = propose(task_id="t1", thread_id="th-b", now=expired.expires_at)
    assert later.change_id != expired.change_id
    scope["pending_changes"].update_one({"_id": later.change_id},
                                        {"$set": {"status": "applied"}})
    again = propose(task_id="t1", thread_id="th-c", now=expired.expires_at)
    assert again.change_id not in (expired.change_id, later.change_id)


def test_an_orphaned_change_proposed_again_by_its_run_is_pending_again(
        scope: TenantScope, propose: Propose) -> None:
    from opsgraph.approvals import orphan_change

    change = propose(task_id="t1", thread_id="th-a")
    assert orphan_change(scope, change, "mgr-ada", T0 + timedelta(minutes=1))
    assert get_change(scope, change.change_id).status == "orphaned"
    assert not orphan_change(scope, change, "mgr-ada", T0 + timedelta(minutes=1))
    elsewhere = propose(task_id="t1", thread_id="th-b", now=T0 + timedelta(minutes=2))
    assert elsewhere.change_id != change.change_id  # an orphan is never taken by a retry
    again = propose(task_id="t1", thread_id="th-a", now=T0 + timedelta(minutes=3))
    assert again.change_id == change.change_id and again.status == "pending"
    assert again.orphaned_at is None
    assert [(r["from"], r["to"]) for r in history(scope, change.change_id)] == [
        (None, "pending"), ("pending", "orphaned"), ("orphaned", "pending")]


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
