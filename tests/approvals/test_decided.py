"""The approvals history: changes that ended, newest first, filtered, searched and paged."""

from __future__ import annotations

from datetime import timedelta

import pytest

from opsgraph.approvals import decide
from opsgraph.approvals.decided import decided_changes, parse_query
from opsgraph.approvals.dependents import withdraw_change
from opsgraph.approvals.expiry import expire_change
from opsgraph.approvals.fields import change_fields
from opsgraph.errors import BadInput
from opsgraph.operations.base import Preview
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope
from tests.approvals.conftest import T0, Propose


def listed(scope: TenantScope, **params: str) -> list[str]:
    return [c["summary"] for c in decided_changes(scope, parse_query(params))["changes"]]


@pytest.fixture
def ended(scope: TenantScope, propose: Propose, manager: Principal) -> TenantScope:
    """Four ended changes (rejected, revised, expired, withdrawn) and one still pending."""
    scope["staff"].insert_many([{"_id": "mgr-ada", "name": "Ada Lovelace"},
                                {"_id": "stf-bo", "name": "Bo"}])
    refund = Preview("Refund £30.00 on INV-7", {"refunded": 0.0, "status": "paid"},
                     {"refunded": 30.0, "status": "partially_refunded"})
    first = propose(preview=refund, operation="invoices.refund", proposed_by="stf-bo")
    decide(scope, first.change_id, "reject", manager, feedback="Not this month",
           now=T0 + timedelta(minutes=1))
    second = propose(preview=Preview("Update Jane's phone", {}, {"phone": "+447700900123"}))
    decide(scope, second.change_id, "revise", manager, feedback="Use her mobile",
           now=T0 + timedelta(minutes=2))
    third = propose(preview=Preview("Update Emily's email", {}, {"email": "e@x.example"}))
    expire_change(scope, third, "system:expiry", T0 + timedelta(hours=2))
    fourth = propose(preview=Preview("Email Jane", {}, {"subject": "Hi"}),
                     operation="communications.send_email")
    withdraw_change(scope, fourth, "staff-bo", "its run was cancelled", T0 + timedelta(hours=3))
    propose(preview=Preview("Still waiting", {}, {}))
    return scope


def test_history_lists_ended_changes_newest_first_with_who_decided(ended: TenantScope) -> None:
    page = decided_changes(ended, parse_query({}))
    assert [c["summary"] for c in page["changes"]] == [
        "Email Jane", "Update Emily's email", "Update Jane's phone", "Refund £30.00 on INV-7"]
    refund = page["changes"][-1]
    assert refund["decided_by"] == {"user_id": "mgr-ada", "name": "Ada Lovelace"}
    assert refund["status_label"] == "Rejected" and refund["feedback"] == "Not this month"
    assert refund["fields"] == [
        {"field": "refunded", "label": "refunded", "old": "£0.00", "new": "£30.00",
         "changed": True},
        {"field": "status", "label": "status", "old": "Paid", "new": "Partly refunded",
         "changed": True}]
    assert page["changes"][0]["withdrawn_reason"] == "its run was cancelled"
    assert page["changes"][1]["decided_by"] is None and page["next"] is None


def test_filters_and_search(ended: TenantScope) -> None:
    assert listed(ended, status="rejected,superseded") == [
        "Update Jane's phone", "Refund £30.00 on INV-7"]
    assert listed(ended, operation="invoices.refund") == ["Refund £30.00 on INV-7"]
    assert listed(ended, requester="bo") == ["Refund £30.00 on INV-7"]
    assert len(listed(ended, requester="staff-bo")) == 3
    assert listed(ended, q="MOBILE") == ["Update Jane's phone"]
    assert listed(ended, q="(") == []  # text, not a pattern
    day = T0.date().isoformat()
    assert len(listed(ended, since=day, until=day)) == 4
    assert listed(ended, since=(T0 + timedelta(hours=2, minutes=30)).isoformat()) == [
        "Email Jane"]


def test_pages_follow_the_cursor(ended: TenantScope) -> None:
    seen, cursor = [], ""
    while True:
        page = decided_changes(ended, parse_query({"limit": "3", **(
            {"cursor": cursor} if cursor else {})}))
        seen += [c["summary"] for c in page["changes"]]
        if not page["next"]:
            break
        cursor = page["next"]
    assert seen == listed(ended) and len(seen) == 4


@pytest.mark.parametrize(("params", "problem"), [
    ({"status": "pending"}, "status: 'pending' is not a final status"),
    ({"operation": "members.fly"}, "operation: unknown operation"),
    ({"since": "yesterday"}, "since: 'yesterday' is not an ISO 8601 date"),
    ({"since": "2026-12-02", "until": "2026-12-01"}, "since: must be before until"),
    ({"limit": "0"}, "limit: a whole number from 1 to 100"),
    ({"cursor": "not-one"}, "cursor: not a cursor"),
    ({"q": "x" * 201}, "q: at most 200 characters"),
    ({"requester": "a\x00b"}, "requester: at most 200 characters of text on one line"),
    ({"colour": "red"}, "colour: unknown filter"),
])
def test_bad_filters_are_refused_naming_them(params: dict[str, str], problem: str) -> None:
    with pytest.raises(BadInput, match=problem.replace("(", r"\(")):
        parse_query(params)


def test_fields_in_words_for_other_currencies_and_nested_changes() -> None:
    rows = change_fields({}, {"total": 12.5, "lines": [{"description": "Court hire",
                                                        "amount": 12.5}],
                              "member_id": "mem_1", "changes": {"phone": "+44"}}, "CHF")
    assert [(r["field"], r["new"]) for r in rows] == [
        ("total", "12.50 CHF"), ("lines", "Court hire 12.50 CHF"), ("changes.phone", "+44")]
