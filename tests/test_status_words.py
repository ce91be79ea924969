"""Statuses in people's words (`opsgraph.status_words`): every status has words, and words
never claim more than happened (a rejected change's task is not "Done", a run with nothing
done is not "Completed")."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from opsgraph.approvals.pending import STATUSES
from opsgraph.engine.state import TaskStatus
from opsgraph.status_words import (
    CHANGE_WORDS,
    RUN_WORDS,
    TASK_WORDS,
    change_label,
    run_label,
    task_label,
)

RUN_STATUSES = ("completed", "completed_with_errors", "awaiting_approval", "cancelled",
                "failed")
SUCCESS = {"Done", "Completed", "Applied", "Decided"}


def changed(outcome: str) -> list[dict[str, Any]]:
    return [{"tool": "members_update", "change": {"change_id": "chg_1", "outcome": outcome}}]


@pytest.mark.parametrize(("status", "words"), [
    ("pending", "Waiting for a manager"), ("executing", "Being applied"),
    ("applied", "Applied"), ("failed", "Failed to apply"), ("rejected", "Rejected"),
    ("superseded", "Sent back for revision"), ("expired", "Expired"),
    ("orphaned", "Can no longer be decided"), ("withdrawn", "Withdrawn")])
def test_each_change_status_has_its_words(status: str, words: str) -> None:
    assert change_label(status) == words


def test_every_change_status_is_mapped() -> None:
    assert set(CHANGE_WORDS) == set(STATUSES)


@pytest.mark.parametrize(("status", "words"), [
    ("completed", "Done"), ("no_proposal", "Nothing proposed"), ("denied", "Not allowed"),
    ("failed", "Failed"), ("skipped", "Skipped"), ("withdrawn", "Withdrawn"),
    ("partial", "Partly done"), ("needs_input", "Asked which")])
def test_each_task_status_has_its_words(status: str, words: str) -> None:
    assert task_label(status) == words
    assert set(TASK_WORDS) == set(get_args(TaskStatus))


@pytest.mark.parametrize(("outcome", "words"), [
    ("applied", "Applied"), ("rejected", "Rejected"), ("expired", "Expired"),
    ("failed", "Failed to apply"), ("revise", "Sent back for revision"),
    ("withdrawn", "Withdrawn")])
def test_a_task_that_proposed_says_what_became_of_its_change(outcome: str,
                                                             words: str) -> None:
    assert task_label("completed", changed(outcome)) == words
    if outcome != "applied":
        assert words not in SUCCESS


@pytest.mark.parametrize(("status", "words"), [
    ("running", "Running"), ("completed", "Completed"),
    ("completed_with_errors", "Partly done"), ("awaiting_approval", "Waiting for approval"),
    ("cancelled", "Stopped"), ("failed", "Failed")])
def test_each_run_status_has_its_words(status: str, words: str) -> None:
    assert run_label(status) == words
    assert set(RUN_STATUSES) <= set(RUN_WORDS)


def test_a_run_is_completed_only_when_its_tasks_did_their_job() -> None:
    read = ("completed", [])
    assert run_label("completed", [read, ("completed", changed("applied"))]) == "Completed"
    # a denied refund, or a rejected change, is not "Completed"
    assert run_label("completed", [("denied", [])]) == "Not done"
    assert run_label("completed", [("completed", changed("rejected"))]) == "Not done"
    assert run_label("completed", [read, ("completed", changed("rejected"))]) == "Partly done"
    assert run_label("cancelled", [read]) == "Stopped"


def test_every_record_status_an_operation_stores_has_words() -> None:
    from typing import get_args

    from opsgraph.operations.communications import InboxStatus
    from opsgraph.operations.invoices import InvoiceStatus
    from opsgraph.operations.members import MemberStatus
    from opsgraph.status_words import RECORD_WORDS, record_label

    for kind in (InvoiceStatus, MemberStatus, InboxStatus):
        assert set(get_args(kind)) <= set(RECORD_WORDS), kind
    assert record_label("partially_refunded") == "Partly refunded"
    assert record_label("confirmed") == "Confirmed"
