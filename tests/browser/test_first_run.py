"""The first run a newcomer has, in the browser: no model configured, so the page says it
is in demo mode, offers the example requests, signs people in locally, and the whole flow
(a change card, a manager's decision in another browser, the answer) works offline; a
free-text message is told which setting to make."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.test_first_run import demo  # noqa: F401  (the fresh-machine server)

pytestmark = pytest.mark.browser
PHONE_EXAMPLE = "Change Emily Chen's phone number to +44 7700 900555."


def sign_in_locally(person: Dashboard, role: str) -> None:
    page = person.page
    expect(page.get_by_role("heading", name="Try it as someone at the club")).to_be_visible()
    label = page.locator("#signin-user option", has_text=f"({role})").first.inner_text()
    page.get_by_label("Person").select_option(label=label)
    expect(page.get_by_label("Role")).to_have_value(role)  # the person's usual role
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.locator("#who")).to_contain_text(label.split(" (")[0])


def test_demo_mode_from_sign_in_to_an_approved_example(
        browser: Any, demo: AppServer, camera: Camera) -> None:  # noqa: F811
    staff = Dashboard(browser, demo, camera, "staff", None)
    expect(staff.page.locator("#model")).to_contain_text("Demo mode")
    expect(staff.page.locator("#banner")).to_contain_text("Demo mode")
    staff.shot("sign-in-local")
    sign_in_locally(staff, "staff")
    example = staff.page.get_by_role("button", name=PHONE_EXAMPLE)
    expect(example).to_be_visible()
    staff.shot("examples")
    example.click()
    turn = staff.turns.last
    expect(turn.locator(".bubble.user")).to_have_text(PHONE_EXAMPLE)
    expect(turn.locator(".change-chip")).to_have_count(1)
    staff.shot("example-waiting")

    manager = Dashboard(browser, demo, camera, "manager", None)
    sign_in_locally(manager, "manager")
    manager.page.get_by_role("link", name="Approvals").click()
    card = manager.card("900555")
    expect(card.locator(".request")).to_have_text(PHONE_EXAMPLE)
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(card.locator(".settled-note")).to_contain_text("Approved")
    expect(turn.locator(".bubble.assistant")).to_contain_text("Done:")
    staff.shot("example-answered")
    # code proposed the number the example names (no record read, so no source to open):
    # the answer says what changed
    expect(turn.locator(".bubble.assistant")).to_contain_text("+44 7700 900555")

    staff.ask("Hello, can you help me with something else?")
    note = staff.turns.last.locator(".note-error")
    expect(note).to_contain_text("needs a real model")
    expect(note).to_contain_text("OPSGRAPH_MODEL")
    staff.shot("free-text-in-demo-mode")

    # the example asked again once its change is made: it still answers, truthfully
    staff.ask(PHONE_EXAMPLE)
    again = staff.turns.last
    expect(again.locator(".bubble.assistant")).to_contain_text("already +44 7700 900555")
    expect(again.locator(".task-state")).to_have_text("Nothing proposed")
    expect(again.locator(".note-error")).to_have_count(0)
    expect(again.locator(".task[data-state=running]")).to_have_count(0)
    staff.shot("example-asked-again")
    assert staff.close() == [] and manager.close() == []
