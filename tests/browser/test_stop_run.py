"""The Stop button: shown while a run is in flight, it stops the run; the page says the run
stopped and its card was withdrawn."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.flows import wait_for
from tests.e2e.test_cancel_run import phone_and_slow_read

pytestmark = pytest.mark.browser


def test_stop_ends_the_run_in_flight(browser: Any, server: AppServer, camera: Camera,
                                     demo_db: Any) -> None:
    server.write_script(phone_and_slow_read())
    staff = Dashboard(browser, server, camera, "kim", "staff")
    stop = staff.page.get_by_role("button", name="Stop", exact=True)
    expect(staff.page.get_by_label("Message")).to_be_visible()
    expect(stop).to_be_hidden()
    staff.ask("Change Emily's phone and check court 1")
    expect(stop).to_be_visible()
    wait_for(lambda: demo_db["pending_changes"].find_one({"tenant_id": "demo"}))
    staff.shot("running-with-stop")
    stop.click()
    turn = staff.turns.last
    expect(turn.locator(".bubble.assistant")).to_contain_text("Stopped at your request")
    expect(turn.locator(".bubble.assistant")).to_contain_text("Withdrawn:")
    expect(staff.page.locator(".conv-status")).to_contain_text("Stopped")
    expect(stop).to_be_hidden()
    expect(turn.locator(".task[data-state=running]")).to_have_count(0)
    expect(turn.locator(".task[data-state=stopped]")).to_have_count(1)
    expect(staff.page.locator(".thread-item .pill")).to_have_text("Stopped")
    expect(staff.page.locator(".thread-item .count")).to_have_count(0)
    staff.shot("stopped")
    assert demo_db["pending_changes"].find_one({"tenant_id": "demo"})["status"] == "withdrawn"
    assert staff.close() == []
