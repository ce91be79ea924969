"""The page of a thread whose run was killed mid-way (issue 18, finding 4: it polled the
thread's events for ever): once the dead run's lease lapses, the page shows it failed,
says why, stops following, and the conversation goes on."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.flows import PROPOSER, wait_for
from tests.e2e.http_client import bearer
from tests.e2e.scripts import opening_hours
from tests.e2e.test_orphaned_changes import KILLED_AFTER_PROPOSING, killed_while_proposing

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("server", [KILLED_AFTER_PROPOSING], indirect=True)
def test_the_page_of_a_killed_run_shows_it_failed_and_stops_waiting(
        browser: Any, server: AppServer, http: httpx.Client, demo_db: Any,
        camera: Camera) -> None:
    _, change_id = killed_while_proposing(server, demo_db)
    thread_id = demo_db["pending_changes"].find_one({"_id": change_id})["thread_id"]
    page = Dashboard(browser, server, camera, PROPOSER, "manager")
    page.page.evaluate(f"location.hash = '#/threads/{thread_id}'")

    # the dead run's lease lapses (3 s), a reader settles it, the replay ends with it
    expect(page.page.locator(".live-state")).to_have_attribute("data-state", "closed",
                                                               timeout=60_000)
    expect(page.page.locator(".log")).to_contain_text("the run stopped before it finished")
    expect(page.page.locator(".pill-failed").first).to_be_visible()
    page.shot("interrupted-run-failed")

    def listed_failed() -> bool | None:
        rows = http.get("/v1/threads", headers=bearer("manager", user=PROPOSER)).json()
        return True if [r["status"] for r in rows if r["thread_id"] == thread_id] == [
            "failed"] else None

    wait_for(listed_failed)
    server.write_script(opening_hours())
    page.ask("When do you open?")  # the same thread goes on
    expect(page.turns.last.locator(".bubble.assistant")).to_contain_text("6am")
    assert page.close() == []
