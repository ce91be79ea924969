"""Finding 7 against a real server process: a member cannot learn who is a member by
naming people. Whatever is named (a member, nobody, a name two members share, an email, an
id), the answer to anything but themselves is the same status and the same bytes, but for
the request id."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer


def jane() -> dict[str, str]:
    """Jane Smith's token (mem_demo_001), signed with this test's secret."""
    return bearer("member", user="jane.smith@example.com")

OTHERS = {
    "an existing member": "Emily Chen",
    "an existing member's email": "emily.chen@example.org",
    "an existing member's id": "mem_demo_008",
    "a name two members share": "Tom Baker",
    "a word of several names": "Baker",
    "nobody": "Nobody Atall",
    "an email nobody has": "nobody@example.org",
    "an id nobody has": "mem_demo_999",
}


def _answer(http: httpx.Client, op: str, member: str) -> tuple[int, Any]:
    response = http.post(f"/v1/operations/{op}", headers=jane(),
                             json={"args": {"member": member}})
    body = response.json()
    body["error"].pop("request_id")
    return response.status_code, body


def test_a_member_gets_one_answer_for_anyone_but_themselves(
        server: AppServer, http: httpx.Client) -> None:
    for op in ("members.get", "bookings.list", "invoices.list"):
        answers = {what: _answer(http, op, name) for what, name in OTHERS.items()}
        assert len({repr(a) for a in answers.values()}) == 1, (op, answers)
        status, body = answers["nobody"]
        assert status == 403
        assert body == {"error": {
            "code": "forbidden",
            "message": "member: members may refer only to their own member records"}}


def test_a_member_still_names_themselves(server: AppServer, http: httpx.Client) -> None:
    for me in ("Jane Smith", "jane_smith", "Smith", "JANE.SMITH@example.com", "mem_demo_001"):
        got = http.post("/v1/operations/members.get", headers=jane(),
                        json={"args": {"member": me}})
        assert got.status_code == 200, (me, got.text)
        assert got.json()["result"]["id"] == "mem_demo_001"
    mine = http.post("/v1/operations/bookings.list", headers=jane(),
                     json={"args": {"member": "Jane Smith"}})
    assert mine.status_code == 200
    assert {b["member"]["id"] for b in mine.json()["result"]["bookings"]} <= {"mem_demo_001"}
