"""A staff member's request, a manager's decision in another browser, and the staff
member's page showing the outcome without a reload."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.browser.scripts import BOOKING_DAY, BOOKING_REQUEST, booking
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import phone_revision, phone_update

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
    expect(start).to_have_value(re.compile(rf"^{BOOKING_DAY}T18:00:00(Z|\+00:00)$"))
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
    expect(turn.locator(".tool-name")).to_have_text(["Bookings · availability",
                                                      "Bookings · create"])
    staff.shot("task-expanded")
    expect(manager.page.locator(".card")).to_have_count(0)
    manager.shot("inbox-empty")

    # the thread read back from the server: the same conversation, drawn from its events
    staff.page.reload()
    again = staff.turns
    expect(again).to_have_count(1)
    expect(again.first.locator(".bubble.user")).to_have_text(BOOKING_REQUEST)
    expect(again.first.locator(".task")).to_have_count(1)
    expect(again.first.locator(".task")).to_have_attribute("data-state", "done")
    expect(again.first.locator(".bubble.assistant")).to_contain_text("Done:")
    expect(staff.page.locator(".thread-item.active")).to_contain_text("Completed")
    staff.shot("reloaded")
    # the manager may read the thread that carried a change they decided
    manager.page.get_by_role("link", name="Conversations").click()
    manager.page.locator(".thread-item", has_text="kim").click()
    expect(manager.turns.first.locator(".bubble.assistant")).to_contain_text("Done:")
    expect(manager.page.locator(".reading")).to_contain_text("reading kim’s conversation")
    expect(manager.page.get_by_label("Message")).to_be_hidden()
    manager.shot("requesters-thread")
    assert staff.close() == [] and manager.close() == []


def emily(http: httpx.Client) -> dict[str, Any]:
    response = http.post("/v1/operations/members.get", json={"args": {"member": "Emily Chen"}},
                         headers=bearer("manager", user="sam"))
    assert response.status_code == 200, response.text
    member: dict[str, Any] = response.json()["result"]
    return member


def test_a_revision_then_a_rejection_reach_the_staff_members_page(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    phone_before = emily(http)["phone"]
    # the request names the number: code proposes it, the agent's first turn is the revision
    server.write_script(phone_revision("+44 7700 900111", "+44 7700 900333"))
    staff = Dashboard(browser, server, camera, "kim", "staff")
    manager = Dashboard(browser, server, camera, "sam", "manager")
    staff.ask("Change Emily Chen's phone to +44 7700 900111")
    turn = staff.turns.last
    expect(turn.locator(".change-chip")).to_have_count(1)

    manager.page.get_by_role("link", name="Approvals").click()
    first = manager.card("900111")
    first.get_by_role("button", name="Revise", exact=True).click()
    first.get_by_role("button", name="Ask for changes").click()  # feedback is needed
    expect(first.locator(".card-error")).to_contain_text("Say what should change")
    first.get_by_label("What should change?").fill("The number ends in 333")
    manager.shot("revise-feedback")
    first.get_by_role("button", name="Ask for changes").click()
    expect(first.locator(".settled-note")).to_contain_text("Sent back for revision")

    # the revised proposal: a new card in the inbox and a second chip on the staff page
    second = manager.card("900333")
    expect(second).to_be_visible()
    expect(turn.locator(".change-chip")).to_have_count(2)
    expect(turn.locator(".change-chip[data-state=decided]")).to_have_count(1)
    staff.shot("revised-proposal-waiting")
    manager.shot("revised-card")
    second.get_by_role("button", name="Reject", exact=True).click()
    second.get_by_label("Reason for the requester").fill("We call members, not text them")
    second.get_by_role("button", name="Confirm").click()
    expect(second.locator(".settled-note")).to_contain_text("Rejected")
    manager.shot("rejected")

    expect(turn.locator(".bubble.assistant")).to_contain_text("rejected by")
    # each chip says what became of its change (the resumed run's task reported both)
    expect(turn.locator(".change-chip[data-state=not_applied]")).to_have_count(2)
    expect(turn.locator(".change-chip .chip-state")).to_have_text(
        ["Sent back for revision", "Rejected"])
    expect(turn.locator(".task-state")).to_have_text("Rejected")
    expect(turn.locator(".task")).to_have_count(1)
    staff.shot("answered-after-rejection")
    assert emily(http)["phone"] == phone_before
    assert staff.close() == [] and manager.close() == []


def test_two_managers_deciding_at_once_one_is_told_who_decided_first(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(phone_update("+44 7700 900222"))
    staff = Dashboard(browser, server, camera, "kim", "staff")
    sam = Dashboard(browser, server, camera, "sam", "manager")
    mia = Dashboard(browser, server, camera, "mia", "manager")
    staff.ask("Change Emily Chen's phone to +44 7700 900222")
    expect(staff.turns.last.locator(".change-chip")).to_have_count(1)
    for manager in (sam, mia):
        manager.page.get_by_role("link", name="Approvals").click()
        expect(manager.card("900222")).to_be_visible()

    sam.card("900222").get_by_role("button", name="Approve", exact=True).click()
    expect(sam.card("900222").locator(".settled-note")).to_contain_text("Approved")
    mia.card("900222").get_by_role("button", name="Approve", exact=True).click()
    expect(mia.card("900222").locator(".settled-note")).to_contain_text(
        re.compile("already decided by sam", re.IGNORECASE))
    mia.shot("already-decided")
    assert emily(http)["phone"] == "+44 7700 900222"
    expect(staff.turns.last.locator(".bubble.assistant")).to_contain_text("Done:")
    assert staff.close() == [] and sam.close() == [] and mia.close() == []
