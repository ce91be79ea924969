"""The API's views of a pending change (`approvals.views`) describe what is sent: every
field a view names is in the card, the listing or the history row, typed as sent."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from opsgraph.api.inbox_models import DecidedChange
from opsgraph.api.response_models import Card, Change, Open
from opsgraph.approvals.decided import _row
from opsgraph.approvals.pending import CARD, PendingChange
from opsgraph.approvals.views import change_view

AT = datetime(2030, 1, 7, 9, 0, tzinfo=UTC)
ENDED = PendingChange.model_validate({
    "_id": "chg_1", "tenant_id": "demo", "thread_id": "th_1", "task_id": "t1",
    "agent": "members", "operation": "members.update", "args": {"member": "mem-1"},
    "old": {"phone": "1"}, "new": {"phone": "2"}, "summary": "Update Jane's phone",
    "status": "applied", "created_at": AT, "expires_at": AT, "fingerprint": "fp",
    "proposed_by": "stf-bo", "proposed_by_name": "Bo", "decision": "approve",
    "decided_by": "mgr-ada", "decided_at": AT, "finished_at": AT, "lease_token": "x"})


def test_the_card_and_the_listing_carry_every_field_their_views_name() -> None:
    card, listed = ENDED.card(), ENDED.to_json()
    assert list(card) == list(CARD)
    assert listed.items() >= card.items()  # the listing is every field, the card's among them
    assert set(Card.model_fields) <= set(card)
    assert set(Change.model_fields) <= set(listed) and "lease_token" not in listed
    Card.model_validate(card)
    Change.model_validate(listed)


def test_a_history_row_is_a_decided_change() -> None:
    row = _row(ENDED, {"mgr-ada": "Ada Lovelace"})
    assert set(DecidedChange.model_fields) <= set(row)
    DecidedChange.model_validate(row)
    assert row["decided_by"] == {"user_id": "mgr-ada", "name": "Ada Lovelace"}


def test_a_view_takes_each_type_from_the_stored_change() -> None:
    view = change_view("Sample", ("summary", "created_at", "decided_at", "status",
                                  "status_label", "waits_for"), base=Open, doc=None)
    schema = view.model_json_schema()["properties"]
    assert schema["created_at"] == {"title": "Created At", "type": "string"}
    assert schema["decided_at"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert schema["status"] == {"title": "Status", "type": "string"}
    assert schema["waits_for"]["items"] == {"type": "string"}
    assert schema["status_label"]["description"] == "The status in people's words."
    assert view.model_json_schema()["required"] == list(schema)


def test_a_view_names_only_fields_of_the_change() -> None:
    with pytest.raises(ValueError, match="'colour' is not a field of a pending change"):
        change_view("Wrong", ("summary", "colour"), base=Open, doc=None)
