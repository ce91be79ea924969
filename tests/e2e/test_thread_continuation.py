"""Who continues a thread, on a real server process (issue 18, finding 9): over MCP `ask`
as over `POST /v1/runs`, a thread id that never existed is refused (MCP made a thread of
any id a caller chose); and a visitor continues only the conversation its own session
started — each visitor session sends a secret of its own (`X-Opsgraph-Visitor`, which the
dashboard makes per tab), and a visitor without one continues none (all visitors shared
one user id, so any visitor could continue another's thread given its id)."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
from mcp.client.session import ClientSession

from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import opening_hours
from tests.e2e.test_http_api import assert_error
from tests.e2e.test_mcp_user import over_mcp

ASK = {"message": "When do you open?"}


def visitor() -> dict[str, str]:
    """The header of a new visitor session."""
    return {"X-Opsgraph-Visitor": secrets.token_urlsafe(24)}


def test_mcp_ask_refuses_a_thread_that_never_existed(server: AppServer,
                                                     demo_db: Any) -> None:
    server.write_script(opening_hours())

    async def made_up(session: ClientSession) -> Any:
        return await session.call_tool("ask", {**ASK, "thread_id": "th_chosen_by_caller"})

    refused = over_mcp(server, bearer("staff"), made_up)
    assert refused.is_error
    assert refused.structured_content["error"]["code"] == "not_found"
    assert "th_chosen_by_caller not found" in refused.content[0].text
    assert demo_db["threads"].find_one({"thread_id": "th_chosen_by_caller"}) is None
    assert demo_db["thread_events"].count_documents({"thread_id": "th_chosen_by_caller"}) == 0


def test_a_visitor_continues_its_own_thread_and_no_other_visitors(
        server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    mine, other = visitor(), visitor()
    first = stream(http, "/v1/runs", ASK, mine)
    assert first.finished["status"] == "completed", first.events
    thread = first.finished["thread_id"]
    follow_up = {"message": "And on Sundays?", "thread_id": thread}
    again = stream(http, "/v1/runs", follow_up, mine)
    assert again.status == 200 and again.finished["status"] == "completed", again.error

    assert_error(http.post("/v1/runs", json=follow_up, headers=other), 404, mentions=thread)
    anonymous = http.post("/v1/runs", json=follow_up)
    assert_error(anonymous, 403, mentions="X-Opsgraph-Visitor")
    assert stream(http, "/v1/runs", ASK, {}).finished["status"] == "completed"  # new: fine
    assert_error(http.post("/v1/runs", json=ASK, headers={"X-Opsgraph-Visitor": "short"}),
                 400, mentions="X-Opsgraph-Visitor")

    async def over_mcp_ask(session: ClientSession) -> Any:
        return await session.call_tool("ask", follow_up)

    assert over_mcp(server, other, over_mcp_ask).is_error  # MCP holds the same line
    assert not over_mcp(server, mine, over_mcp_ask).is_error
