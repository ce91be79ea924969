"""Statuses and words that tell the truth, in the browser: a rejected change's task says
Rejected (not Done), its chip Rejected, the thread Not done, the decider by name, no
green toast; the diff shows names, not ids; money with the tenant's currency."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.browser.scripts import BOOKING_REQUEST, booking
from tests.e2e.app_process import AppServer
from tests.e2e.flows import big_paid_invoice
from tests.e2e.scripts import refund

pytestmark = pytest.mark.browser
MANAGER = "stf_demo_02"  # a staff record of the demo club: the page names them


def test_a_rejected_booking_says_rejected_everywhere(browser: Any, server: AppServer,
                                                     camera: Camera, demo_db: Any) -> None:
    server.write_script(booking())
    staff = Dashboard(browser, server, camera, "kim", "staff")
    manager = Dashboard(browser, server, camera, "manager", "manager", user=MANAGER)
    name = demo_db["staff"].find_one({"_id": MANAGER})["name"]
    staff.ask(BOOKING_REQUEST)
    turn = staff.turns.last
    expect(turn.locator(".change-chip")).to_contain_text("Waiting for a manager")
    staff.shot("waiting")

    manager.page.get_by_role("link", name="Approvals").click()
    card = manager.card("Court 1")
    expect(card).to_be_visible()
    # the diff names the member and the court; ids stay out of it
    expect(card.locator(".diff")).to_contain_text("Emily Chen")
    expect(card.locator(".diff")).not_to_contain_text("mem_demo_")
    expect(card.locator(".diff")).not_to_contain_text("res_demo_")
    manager.shot("inbox-names-not-ids")
    card.get_by_role("button", name="Reject", exact=True).click()
    card.get_by_label("Reason for the requester").fill("Court 1 is closed that evening")
    card.get_by_role("button", name="Confirm").click()
    expect(card.locator(".settled-note")).to_have_text("Rejected")
    toast = manager.page.locator(".toast")
    expect(toast).to_contain_text("Rejected")
    expect(manager.page.locator(".toast-ok")).to_have_count(0)  # not a green success
    manager.shot("rejected")

    expect(turn.locator(".task")).to_have_attribute("data-state", "not_done")
    expect(turn.locator(".task-state")).to_have_text("Rejected")
    expect(turn.locator(".change-chip .chip-state")).to_have_text("Rejected")
    expect(turn.locator(".bubble.assistant")).to_contain_text(f"rejected by {name}")
    expect(staff.page.locator(".conv-status")).to_have_text("Not done")
    expect(turn.locator(".task-state")).not_to_have_text("Done")
    staff.shot("rejected-outcome")
    assert staff.close() == [] and manager.close() == []


def test_a_refund_card_shows_money_in_the_club_s_currency(
        browser: Any, server: AppServer, camera: Camera, demo_db: Any) -> None:
    invoice = big_paid_invoice(demo_db)
    server.write_script(refund(invoice["number"], 30))
    asker = Dashboard(browser, server, camera, "mia", "manager", user="stf_demo_03")
    asker.ask("Refund £30 of this invoice")
    expect(asker.turns.last.locator(".change-chip")).to_contain_text("£30.00")
    asker.page.get_by_role("link", name="Approvals").click()
    card = asker.card("Refund")
    expect(card.locator(".summary")).to_contain_text("Refund £30.00 on")
    # who asked may not approve their own refund (separation of duties): the card says so
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(card.locator(".card-error")).to_contain_text("someone else must decide it")
    asker.shot("own-refund-refused")
    assert demo_db["pending_changes"].find_one({"operation": "invoices.refund"})["status"] \
        == "pending"
    assert asker.close() == []
