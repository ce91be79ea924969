"""Deciding without applying: reject, revise, expiry, who may decide, re-posts, resume claims."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pymongo.database import Database

from opsgraph.approvals import claim_resume, decide, get_change, history, mark_resumed
from opsgraph.errors import BadInput, Conflict, Forbidden, Gone, NotFound, OpsgraphError
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.scope import Document, TenantScope

from .conftest import T0, Propose, person, race

LATER = T0 + timedelta(minutes=1)


def test_reject_closes_the_change_and_the_caller_resumes(scope: TenantScope, propose: Propose,
                                                         manager: Principal) -> None:
    change = propose()
    out = decide(scope, change.change_id, "reject", manager, feedback="not now", now=LATER)
    assert out.outcome == "rejected" and out.must_resume and out.result is None
    assert out.feedback == "not now"
    stored = get_change(scope, change.change_id)
    assert stored.status == "rejected"
    assert stored.decided_by == "mgr-ada" and stored.decided_at == LATER
    assert out.resume_value().outcome == "rejected"


def test_revise_supersedes_and_hands_the_feedback_back(scope: TenantScope, propose: Propose,
                                                       manager: Principal) -> None:
    change = propose()
    out = decide(scope, change.change_id, "revise", manager, feedback="use her work email",
                 now=LATER)
    assert out.outcome == "revise" and out.feedback == "use her work email"
    assert get_change(scope, change.change_id).status == "superseded"


def test_an_unknown_decision_is_bad_input(scope: TenantScope, propose: Propose,
                                          manager: Principal) -> None:
    change = propose()
    with pytest.raises(BadInput, match="decision"):
        decide(scope, change.change_id, "maybe", manager, now=LATER)
    assert get_change(scope, change.change_id).status == "pending"


@pytest.mark.parametrize("role", [Role.VISITOR, Role.MEMBER, Role.STAFF])
def test_only_managers_and_admins_decide(scope: TenantScope, propose: Propose,
                                         role: Role) -> None:
    change = propose()
    for decision in ("approve", "reject"):
        with pytest.raises(Forbidden):
            decide(scope, change.change_id, decision, person(role), now=LATER)
    assert get_change(scope, change.change_id).status == "pending"


def test_a_manager_of_another_tenant_or_on_email_is_refused(scope: TenantScope,
                                                            propose: Propose) -> None:
    change = propose()
    with pytest.raises(Forbidden):
        decide(scope, change.change_id, "reject", person(Role.MANAGER, tenant="acme"),
               now=LATER)
    on_email = Principal("demo", "mgr-ada", frozenset({Role.MANAGER}), Channel.EMAIL)
    with pytest.raises(Forbidden):
        decide(scope, change.change_id, "reject", on_email, now=LATER)
    assert get_change(scope, change.change_id).status == "pending"


def test_another_tenants_change_is_not_found(scope: TenantScope, propose: Propose,
                                             store: Database[Document]) -> None:
    acme = TenantScope(store, "acme")
    theirs = propose(target=acme)
    with pytest.raises(NotFound):
        decide(scope, theirs.change_id, "reject", person(Role.ADMIN), now=LATER)
    with pytest.raises(NotFound):
        decide(scope, "chg_0000000000000000", "approve", person(Role.ADMIN), now=LATER)
    assert get_change(acme, theirs.change_id).status == "pending"


def test_a_late_decision_expires_the_change(scope: TenantScope, propose: Propose,
                                            manager: Principal) -> None:
    change = propose()
    late = change.expires_at + timedelta(seconds=1)
    with pytest.raises(Gone) as caught:
        decide(scope, change.change_id, "approve", manager, now=late)
    assert caught.value.status == 410 and caught.value.detail["thread_id"] == "th-1"
    assert get_change(scope, change.change_id).status == "expired"
    with pytest.raises(Gone):
        decide(scope, change.change_id, "reject", manager, now=late)
    assert [(r["from"], r["to"]) for r in history(scope, change.change_id)] == [
        (None, "pending"), ("pending", "expired")]
    assert claim_resume(scope, change.change_id, now=late)


def test_a_decided_change_answers_409_naming_its_status(scope: TenantScope, propose: Propose,
                                                       manager: Principal) -> None:
    change = propose()
    decide(scope, change.change_id, "reject", manager, now=LATER)
    with pytest.raises(Conflict, match="rejected") as caught:
        decide(scope, change.change_id, "approve", manager, now=LATER)
    assert caught.value.status == 409 and caught.value.detail["status"] == "rejected"


def test_a_repost_before_the_run_resumed_returns_the_outcome_once_the_lease_ran_out(
        scope: TenantScope, propose: Propose, manager: Principal) -> None:
    change = propose()
    decide(scope, change.change_id, "reject", manager, now=LATER)
    # The first caller holds the resume claim for the lease (30 s): a re-post is a 409.
    with pytest.raises(Conflict):
        decide(scope, change.change_id, "reject", manager, now=LATER + timedelta(seconds=5))
    # It crashed before resuming: after the lease a re-post gets the outcome to resume with.
    again = decide(scope, change.change_id, "reject", manager,
                   now=LATER + timedelta(seconds=31))
    assert again.outcome == "rejected" and again.must_resume
    mark_resumed(scope, change.change_id, now=LATER + timedelta(seconds=32))
    with pytest.raises(Conflict):
        decide(scope, change.change_id, "reject", manager, now=LATER + timedelta(minutes=5))
    assert get_change(scope, change.change_id).resumed_at is not None


def test_the_resume_claim_has_one_winner(scope: TenantScope, propose: Propose,
                                         manager: Principal) -> None:
    change = propose()
    with pytest.raises(Conflict):
        mark_resumed(scope, change.change_id)  # nothing to resume while pending
    assert not claim_resume(scope, change.change_id, now=LATER)
    decide(scope, change.change_id, "reject", manager, now=LATER)
    expired_lease = LATER + timedelta(seconds=31)
    wins, errors = race(10, lambda _: claim_resume(scope, change.change_id, now=expired_lease))
    assert errors == [] and wins.count(True) == 1 and wins.count(False) == 9
    mark_resumed(scope, change.change_id, now=expired_lease)
    assert not claim_resume(scope, change.change_id, now=expired_lease + timedelta(hours=1))
    with pytest.raises(NotFound):
        claim_resume(scope, "chg_missing", now=LATER)


def test_of_concurrent_rejects_and_revises_one_wins(scope: TenantScope, propose: Propose,
                                                    manager: Principal) -> None:
    for _ in range(3):
        cid = propose().change_id
        wins, errors = race(20, lambda i, cid=cid: decide(  # type: ignore[misc]
            scope, cid, ("reject", "revise")[i % 2], manager, feedback="no", now=LATER))
        assert len(wins) == 1
        assert len(errors) == 19 and all(isinstance(e, Conflict) for e in errors), errors
        assert isinstance(errors[0], OpsgraphError) and errors[0].status == 409
        rows = history(scope, cid)
        assert [r["from"] for r in rows] == [None, "pending"]
