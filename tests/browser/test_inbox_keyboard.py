"""The approvals inbox by keyboard alone, cards arriving while it is open, and the history
of what was decided: who decided and when, by name, money with the tenant's currency and
statuses in words — on a desktop and on a phone."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.flows import PROPOSER, big_paid_invoice, change_doc, propose, wait_for
from tests.e2e.scripts import phone_update, refund

pytestmark = pytest.mark.browser


def focused_card(board: Dashboard) -> str:
    """The summary of the card that has the keyboard focus ('' when none has)."""
    text: str = board.page.evaluate(
        "document.activeElement.closest('.card')?.querySelector('.summary')?.textContent || ''")
    return text


def test_a_manager_decides_by_keyboard_alone_and_reads_the_history(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera,
        demo_db: Any) -> None:
    invoice = big_paid_invoice(demo_db)
    _, refund_card = propose(server, http, refund(invoice["number"], 30), role="manager",
                             user=PROPOSER)
    _, phone_card = propose(server, http, phone_update("+447700900123"), user="stf_demo_04")
    manager = Dashboard(browser, server, camera, "sam", "manager", user="stf_demo_02")
    page = manager.page
    page.goto(f"{server.url}/#/approvals")
    cards = page.locator(".card")
    expect(cards).to_have_count(2)
    expect(page).to_have_title("(2) opsgraph · operations assistant")
    refund_row = manager.card("Refund").locator(".diff tbody tr").first  # refunded
    expect(refund_row).to_contain_text("£0.00")
    expect(refund_row).to_contain_text("£30.00")
    expect(manager.card("Refund").locator(".diff")).to_contain_text("Partly refunded")
    expect(page.locator("#inbox-keys")).to_contain_text("a approve")
    manager.shot("inbox")

    for _ in range(40):  # Tab from the top of the page to the first card
        page.keyboard.press("Tab")
        if focused_card(manager):
            break
    first = focused_card(manager)
    assert first, "no card took the focus"
    page.keyboard.press("j")
    second = focused_card(manager)
    assert second and second != first
    page.keyboard.press("k")
    assert focused_card(manager) == first
    page.keyboard.press("ArrowDown")
    assert focused_card(manager) == second
    page.keyboard.press("ArrowUp")
    assert focused_card(manager) == first

    # reject the refund: x opens the reason, Esc closes it, x again, type, Tab, Enter
    while "Refund" not in focused_card(manager):
        page.keyboard.press("j")
    page.keyboard.press("x")
    reason = manager.card("Refund").get_by_label("Reason for the requester")
    expect(reason).to_be_focused()
    page.keyboard.press("Escape")
    expect(reason).to_have_count(0)
    assert "Refund" in focused_card(manager)
    page.keyboard.press("x")
    page.keyboard.type("Not this month")
    manager.shot("rejecting")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(manager.card("Refund").locator(".settled-note")).to_contain_text("Rejected")
    assert "phone" in focused_card(manager)  # the focus went on to the next card
    page.keyboard.press("a")  # its card says so, then leaves (a moment: not asserted on)
    wait_for(lambda: change_doc(demo_db, phone_card["change_id"])["status"] == "applied"
             or None)
    assert change_doc(demo_db, refund_card["change_id"])["status"] == "rejected"
    expect(cards).to_have_count(0)
    expect(page).to_have_title("opsgraph · operations assistant")
    manager.shot("decided")

    # a card that arrives while the page is open is announced
    propose(server, http, phone_update("+447700900999"), user="stf_demo_04")
    expect(cards).to_have_count(1)
    expect(page.locator(".inbox [aria-live]")).to_contain_text("New change to decide")
    expect(page).to_have_title("(1) opsgraph · operations assistant")
    manager.shot("arrived")

    page.get_by_role("link", name="History").click()
    rows = page.locator(".history-card")
    expect(rows).to_have_count(2)
    refund_done = page.locator(".history-card", has_text="Refund")
    expect(refund_done).to_contain_text("Rejected by")
    expect(refund_done).not_to_contain_text("stf_demo_02")
    expect(refund_done).to_contain_text("Not this month")
    expect(refund_done.locator(".diff")).to_contain_text("£30.00")
    manager.shot("history")
    page.get_by_label("Outcome").select_option("applied")
    page.get_by_role("button", name="Apply filters").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Applied by")
    page.get_by_label("From", exact=True).fill("2030-01-02")
    page.get_by_label("To", exact=True).fill("2030-01-01")
    page.get_by_role("button", name="Apply filters").click()
    expect(page.locator(".history .form-error")).to_contain_text("since: must be before until")
    manager.shot("history-bad-filter")

    phone = Dashboard(browser, server, camera, "sam-phone", "manager", user="stf_demo_02",
                      viewport=PHONE)
    phone.page.goto(f"{server.url}/#/history")
    expect(phone.page.locator(".history-card")).to_have_count(2)
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    phone.shot("phone-history")
    phone.page.goto(f"{server.url}/#/approvals")
    expect(phone.page.locator(".card")).to_have_count(1)
    phone.shot("phone-inbox")
    assert manager.close() == [] and phone.close() == []
