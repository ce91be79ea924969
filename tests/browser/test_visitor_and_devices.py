"""What a visitor sees, a phone-sized screen, and a request sent with the keyboard only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from opsgraph.auth import issue_token
from opsgraph.principal import Channel, Principal, Role
from tests.browser.dashboard import PHONE, Camera, Dashboard, token_for
from tests.e2e.app_process import AppServer
from tests.e2e.scripts import opening_hours, phone_update

pytestmark = pytest.mark.browser
HOURS = "We open at 6am on weekdays."


def fits_the_screen(page: Any) -> bool:
    """Nothing sticks out sideways (no horizontal scrolling)."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_a_visitor_chats_but_sees_no_inbox_and_no_settings(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(opening_hours())
    visitor = Dashboard(browser, server, camera, "visitor", None)
    expect(visitor.page.get_by_role("heading", name="Sign in")).to_be_visible()
    visitor.shot("sign-in")
    visitor.page.get_by_role("button", name="Continue as a visitor").click()
    expect(visitor.page.locator("#who")).to_have_text("Visitor")
    expect(visitor.page.get_by_role("link", name="Approvals")).to_have_count(0)
    expect(visitor.page.get_by_role("link", name="Settings")).to_have_count(0)
    expect(visitor.page.locator(".thread-list")).to_contain_text("Sign in to keep")

    visitor.ask("When do you open?")
    expect(visitor.turns.last.locator(".bubble.assistant")).to_have_text(HOURS)
    expect(visitor.turns.last.locator(".task")).to_have_attribute("data-state", "done")
    visitor.shot("answered")
    visitor.page.goto(f"{server.url}/#/approvals")  # typed by hand: still the chat
    expect(visitor.page.locator("#view")).to_have_attribute("data-view", "chat")
    expect(visitor.page.locator(".card")).to_have_count(0)
    assert visitor.close() == []


def test_a_request_sent_by_keyboard_alone_on_a_phone(
        browser: Any, server: AppServer, camera: Camera) -> None:
    server.write_script(opening_hours())
    staff = Dashboard(browser, server, camera, "kim", "staff", viewport=PHONE)
    page = staff.page
    expect(page.get_by_label("Message")).to_be_visible()
    page.evaluate("document.activeElement && document.activeElement.blur()")
    for _ in range(40):  # Tab through the page until the message box has the focus
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "message":
            break
    else:
        pytest.fail("the message box cannot be reached with Tab")
    page.keyboard.type("When do you open?")
    page.keyboard.press("Enter")
    expect(staff.turns.last.locator(".bubble.user")).to_have_text("When do you open?")
    expect(staff.turns.last.locator(".bubble.assistant")).to_have_text(HOURS)
    assert fits_the_screen(page)
    staff.shot("phone-answered")
    assert staff.close() == []


def test_the_inbox_on_a_phone_decides_by_keyboard(
        browser: Any, server: AppServer, camera: Camera) -> None:
    server.write_script(phone_update("+44 7700 900444"))
    staff = Dashboard(browser, server, camera, "kim", "staff", viewport=PHONE)
    staff.ask("Change Emily Chen's phone to +44 7700 900444")
    expect(staff.turns.last.locator(".change-chip")).to_have_count(1)
    staff.shot("phone-waiting")

    manager = Dashboard(browser, server, camera, "sam", "manager", viewport=PHONE)
    manager.page.get_by_role("link", name="Approvals").click()
    card = manager.card("900444")
    expect(card.get_by_role("button", name="Approve", exact=True)).to_be_visible()
    assert fits_the_screen(manager.page)
    manager.shot("phone-inbox")
    card.get_by_role("button", name="Revise", exact=True).focus()
    manager.page.keyboard.press("Enter")
    expect(card.get_by_label("What should change?")).to_be_focused()
    manager.page.keyboard.press("Tab")
    expect(card.get_by_role("button", name="Ask for changes")).to_be_focused()
    manager.page.keyboard.press("Tab")
    expect(card.get_by_role("button", name="Cancel")).to_be_focused()
    manager.page.keyboard.press("Enter")  # changed my mind: approve as it is
    approve = card.get_by_role("button", name="Approve", exact=True)
    approve.focus()
    manager.page.keyboard.press("Enter")
    expect(card.locator(".settled-note")).to_contain_text("Approved")
    manager.shot("phone-approved")
    expect(staff.turns.last.locator(".bubble.assistant")).to_contain_text("Done:")
    assert fits_the_screen(staff.page)
    staff.shot("phone-answered")
    assert staff.close() == [] and manager.close() == []


def test_signing_in_with_a_pasted_token_and_again_when_it_expired(
        browser: Any, server: AppServer, camera: Camera) -> None:
    expired = issue_token(Principal("demo", "kim", frozenset({Role.STAFF}), Channel.DASHBOARD),
                          ttl_s=-60)
    person = Dashboard(browser, server, camera, "kim", None)
    page = person.page
    page.goto(f"{server.url}/#token={expired}")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator(".signin .note-error")).to_contain_text("sign in again")
    token = page.get_by_label("Bearer token")
    token.fill("not-a-token")
    page.get_by_role("button", name="Use this token").click()
    expect(page.locator(".signin-token .form-error")).to_contain_text("not accepted")
    person.shot("token-refused")
    token.fill(token_for("staff", "kim"))
    page.get_by_role("button", name="Use this token").click()
    expect(page.locator("#who")).to_contain_text("kim")
    expect(page.get_by_label("Message")).to_be_visible()
    assert person.close() == []
