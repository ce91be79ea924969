"""A dropped event stream resumes where it stopped: the page reconnects with the last event
id it applied and ends with every event of the thread, each once, in order."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.browser.scripts import BOOK_AND_POLICY_REQUEST, POLICY_ANSWER, booking_and_policy
from tests.e2e.app_process import AppServer
from tests.e2e.flows import wait_for
from tests.e2e.http_client import bearer

pytestmark = pytest.mark.browser


def stored_event_ids(http: httpx.Client, thread_id: str) -> list[str]:
    """The ids of the thread's stored events, as the server replays them."""
    with connect_sse(http, "GET", f"/v1/threads/{thread_id}/events",
                     headers=bearer("staff", user="kim")) as source:
        assert source.response.status_code == 200
        return [event.id for event in source.iter_sse()]


def test_a_dropped_connection_resumes_without_a_missing_or_repeated_event(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(booking_and_policy(synthesis_delay_ms=8000))
    staff = Dashboard(browser, server, camera, "kim", "staff")
    staff.ask(BOOK_AND_POLICY_REQUEST)
    turn = staff.turns.last
    expect(turn.locator(".change-chip")).to_have_count(1)
    thread_id = staff.page.evaluate("location.hash").removeprefix("#/threads/")
    [card] = http.get("/v1/approvals", headers=bearer("manager", user="sam")).json()["changes"]

    decided = http.post(f"/v1/approvals/{card['change_id']}", json={"decision": "approve"},
                        headers=bearer("manager", user="sam"))
    assert decided.status_code == 202, decided.text
    # the resumed run's booking is done; its answer is still being written (for 8 s)
    expect(turn.locator(".task[data-task-id=t1]")).to_have_attribute("data-state", "done")
    staff.context.set_offline(True)
    expect(staff.page.locator(".live-state")).to_have_attribute("data-state", "reconnecting")
    staff.shot("connection-dropped")

    def finished() -> bool | None:
        thread = http.get(f"/v1/threads/{thread_id}", headers=bearer("staff", user="kim"))
        return True if thread.json()["status"] == "completed" else None

    wait_for(finished, timeout_s=120)  # the run ends while the page is cut off
    staff.context.set_offline(False)
    expect(turn.locator(".bubble.assistant")).to_contain_text("Done:")
    expect(turn.locator(".bubble.assistant")).to_contain_text(POLICY_ANSWER)
    expect(staff.page.locator(".live-state")).to_have_text("")
    staff.shot("resumed-and-answered")

    applied = staff.page.locator(".log").get_attribute("data-event-ids") or ""
    stored = stored_event_ids(http, thread_id)
    assert applied.split() == stored
    assert stored == [str(n) for n in range(1, len(stored) + 1)]
    answer = turn.locator(".bubble.assistant").inner_text()
    assert answer.count("Done:") == 1 and answer.count(POLICY_ANSWER) == 1, answer
    assert staff.close() == []
