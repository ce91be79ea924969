"""A staff member's request, a manager's decision in another browser, and the staff
member's page showing the outcome without a reload."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.browser.scripts import BOOKING_DAY, BOOKING_REQUEST, booking
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer

pytestmark = pytest.mark.browser


def bookings_on_court_1(http: httpx.Client) -> list[dict[str, Any]]:
    """Emily Chen's bookings on the day, read through the API as a manager."""
    response = http.post("/v1/operations/bookings.list",
                         json={"args": {"member": "Emily Chen", "date": BOOKING_DAY}},
                         headers=bearer("manager", user="sam"))
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    rows: list[dict[str, Any]] = result["bookings"] if isinstance(result, dict) else result
    return rows


def test_a_booking_edited_and_approved_reaches_the_staff_members_page(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(booking())
    staff = Dashboard(browser, server, camera, "kim", "staff")
    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(staff.page.get_by_label("Message")).to_be_visible()
    staff.shot("signed-in")

    staff.ask(BOOKING_REQUEST)
    turn = staff.turns.last
    expect(turn.locator(".task")).to_have_count(1)
    expect(turn.locator(".task")).to_have_attribute("data-state", "approval")
    expect(turn.locator(".change-chip")).to_contain_text("Waiting for a manager")
    expect(staff.page.locator(".note-wait")).to_be_visible()
    staff.shot("waiting-for-approval")

    manager.page.get_by_role("link", name="Approvals").click()
    card = manager.card("Court 1")
    expect(card).to_be_visible()
    expect(card.locator(".request")).to_have_text(BOOKING_REQUEST)
    expect(card.locator(".meta")).to_contain_text("kim")
    expect(card.locator(".expiry")).to_contain_text("expires in")
    expect(card.locator(".diff ins").first).to_be_visible()
    manager.shot("inbox")

    card.get_by_role("button", name="Edit", exact=True).click()
    start = card.get_by_label("Start")
    end = card.get_by_label("End")
    expect(start).to_have_value(f"{BOOKING_DAY}T18:00:00+00:00")
    start.fill("tomorrow evening")  # refused in the page: not a date and time
    card.get_by_role("button", name="Apply changes").click()
    expect(card.locator(".field[data-path=start] .field-error")).to_contain_text("date and time")
    manager.shot("edit-invalid-in-page")
    start.fill(f"{BOOKING_DAY}T19:00:00")
    end.fill(f"{BOOKING_DAY}T18:30:00")  # refused by the API (422): the end is before the start
    card.get_by_role("button", name="Apply changes").click()
    expect(card.locator(".field[data-path=end] .field-error")).to_contain_text("after start")
    manager.shot("edit-refused-by-api")
    end.fill(f"{BOOKING_DAY}T20:00:00")
    card.get_by_role("button", name="Apply changes").click()
    expect(card.locator(".settled-note")).to_contain_text("Edited and approved")
    manager.shot("edited-and-approved")

    [made] = [b for b in bookings_on_court_1(http) if b.get("status") == "confirmed"]
    assert made["start"].startswith(f"{BOOKING_DAY}T19:00"), made
    assert made["end"].startswith(f"{BOOKING_DAY}T20:00"), made

    # the staff member's page, never reloaded, shows the resumed run's answer
    expect(turn.locator(".bubble.assistant")).to_contain_text("Done:")
    expect(turn.locator(".bubble.assistant")).to_contain_text("19:00")
    expect(turn.locator(".task")).to_have_count(1)  # one row per task, not one per resume
    expect(turn.locator(".task")).to_have_attribute("data-state", "done")
    expect(staff.page.locator(".note-wait")).to_have_count(0)
    staff.shot("answered-after-approval")
    turn.locator(".task-head").click()  # the task's tools, with arguments and results
    expect(turn.locator(".tool-name")).to_have_text(["bookings_availability",
                                                      "bookings_create"])
    staff.shot("task-expanded")
    expect(manager.page.locator(".card")).to_have_count(0)
    manager.shot("inbox-empty")
    assert staff.close() == [] and manager.close() == []
