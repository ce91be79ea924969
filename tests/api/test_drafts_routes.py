"""The drafts and history routes in-process (Starlette's TestClient, the real store): who
may call them, what a bad request gets, and that a sent draft is a thread its sender and
the managers follow."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from opsgraph.api.app import create_app
from opsgraph.jobs.inbound_email import ingest_email
from opsgraph.principal import Channel
from tests.browser.scripts import email_reply
from tests.e2e.http_client import bearer
from tests.jobs.test_inbound_email import FRIENDLY


def staff() -> dict[str, str]:
    return bearer("staff", user="stf_demo_04")


def manager() -> dict[str, str]:
    return bearer("manager", user="stf_demo_02")


@pytest.fixture
def http(demo_db: Any, script: Any) -> Any:
    with TestClient(create_app(check_registry=False)) as client:
        yield client


def test_drafts_routes_refuse_what_they_must(http: Any, script: Any) -> None:
    draft_id = ingest_email("demo", FRIENDLY.read_bytes(), model=script(email_reply()))["draft_id"]
    member = bearer("member", user="mem_demo_001")
    assert http.get("/v1/drafts", headers=member).status_code == 403
    assert http.get("/v1/drafts").status_code == 403  # a visitor
    assert http.get("/v1/drafts/nope", headers=staff()).status_code == 404
    assert http.get("/v1/drafts?status=lost", headers=staff()).status_code == 400
    email = bearer("staff", user="stf_demo_04", channel=Channel.EMAIL)
    assert http.post(f"/v1/drafts/{draft_id}/send", json={},
                     headers=email).json()["error"]["code"] == "read_only"
    blank = http.put(f"/v1/drafts/{draft_id}", json={"body": ""}, headers=staff())
    assert blank.status_code == 422 and "body" in blank.text
    assert http.put(f"/v1/drafts/{draft_id}", json={"colour": "red"},
                    headers=staff()).status_code == 422

    listed = http.get("/v1/drafts", headers=staff()).json()
    assert listed["open"] == 1 and listed["drafts"][0]["draft_id"] == draft_id
    sent = http.post(f"/v1/drafts/{draft_id}/send", json={"subject": "Re: your booking"},
                     headers=staff())
    assert sent.status_code == 202 and sent.json()["status"] == "awaiting_approval"
    assert sent.json()["subject"] == "Re: your booking"
    for again in (http.post(f"/v1/drafts/{draft_id}/send", json={}, headers=staff()),
                  http.delete(f"/v1/drafts/{draft_id}", headers=staff())):
        assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"

    # the send is a thread its sender and the managers read, with the card waiting
    for who in (staff(), manager()):
        thread = http.get(f"/v1/threads/{draft_id}", headers=who)
        assert thread.status_code == 200, thread.text
    [card] = http.get("/v1/approvals", headers=manager()).json()["changes"]
    assert (card["origin"], card["thread_id"]) == ("draft", draft_id)
    assert [f["label"] for f in card["fields"]] == ["to", "to name", "subject", "body"]


def test_history_route_checks_its_filters_and_roles(http: Any) -> None:
    assert http.get("/v1/approvals/history", headers=staff()).status_code == 403
    bad = http.get("/v1/approvals/history?status=pending", headers=manager())
    assert bad.status_code == 400 and "status: 'pending' is not a final status" in bad.text
    assert http.get("/v1/approvals/history?limit=1000", headers=manager()).status_code == 400
    empty = http.get("/v1/approvals/history", headers=manager())
    assert empty.status_code == 200 and empty.json() == {"changes": [], "next": None}
