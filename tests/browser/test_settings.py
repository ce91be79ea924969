"""Settings (admins): the model of each agent, grouped by tier and named as people know
models, from the deployment's allowed list; and the tenant's settings — capability gate,
off-topic reply, modules, separation of duties, agent-may-force, currency — each read back
through the API, at desktop and phone sizes. Others have no such view."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import opening_hours

pytestmark = pytest.mark.browser
AGENT = "members.update"


def test_an_admin_picks_a_model_for_an_agent_and_sets_the_tenant_s_settings(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(opening_hours())  # a model the deployment allows must exist
    admin_headers = bearer("admin", user="ada")
    allowed = http.get("/v1/tenant/models", headers=admin_headers).json()["allowed"]
    choice = allowed[0]
    agents = http.get("/v1/agents", headers=admin_headers).json()["agents"]
    default = next(a for a in agents if a["name"] == AGENT)["default_model_name"]
    before = http.get("/v1/tenant/settings", headers=admin_headers).json()
    other_mode = "observe" if before["capability_mode"] == "enforce" else "enforce"

    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.get_by_role("link", name="Settings").click()
    model = admin.page.get_by_label(f"Model for {AGENT}")
    expect(model).to_have_value("")  # the deployment's default until a choice is made
    expect(model.locator("option").first).to_have_text(
        f"The deployment’s default ({default})")
    expect(admin.page.locator("tr.group").first).to_contain_text("Agents on the main model")
    group = admin.page.locator("tr.group").first.inner_text()
    assert default in group and "scripted:" not in group  # a model's words, not its spec
    admin.shot("settings")
    model.select_option(choice["spec"])
    expect(model.locator("option:checked")).to_have_text(choice["name"])
    admin.page.get_by_role("button", name="Save models").click()
    expect(admin.page.locator(".toast")).to_contain_text("Models saved")
    assert http.get("/v1/tenant/models", headers=admin_headers).json()["models"] == {
        AGENT: choice["spec"]}

    reply = "We only help with the club: bookings, classes and membership."
    admin.page.get_by_role("radio", name=other_mode.capitalize()).check()
    admin.page.get_by_label("Reply to messages that ask nothing of the club").fill(reply)
    admin.page.get_by_label("safeguarding").check()
    admin.page.get_by_label("Invoices · issue").uncheck()
    admin.page.get_by_label("Members · update").check()
    admin.page.get_by_label("may activate a harness version whose tests fail").check()
    admin.page.get_by_label("Currency").select_option("EUR")
    admin.page.get_by_role("button", name="Save settings").click()
    expect(admin.page.locator(".toast").last).to_contain_text("Settings saved")
    after = http.get("/v1/tenant/settings", headers=admin_headers).json()
    assert {k: after[k] for k in ("capability_mode", "off_topic_reply", "modules",
                                  "separation_of_duties", "harness_agent_may_force",
                                  "currency")} == {
        "capability_mode": other_mode, "off_topic_reply": reply, "modules": ["safeguarding"],
        "separation_of_duties": ["invoices.refund", "members.update"],
        "harness_agent_may_force": True, "currency": "EUR"}
    admin.shot("saved")

    admin.page.reload()  # what the page shows comes from the server
    expect(admin.page.get_by_label(f"Model for {AGENT}")).to_have_value(choice["spec"])
    expect(admin.page.get_by_role("radio", name=other_mode.capitalize())).to_be_checked()
    expect(admin.page.get_by_label("Currency")).to_have_value("EUR")
    expect(admin.page.get_by_label("Members · update")).to_be_checked()
    assert admin.close() == []

    phone = Dashboard(browser, server, camera, "ada-phone", "admin", viewport=PHONE)
    phone.page.goto(f"{server.url}/#/settings")
    expect(phone.page.get_by_label("Currency")).to_be_visible()
    phone.shot("phone")
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    assert phone.close() == []


def test_a_manager_has_no_settings(browser: Any, server: AppServer, camera: Camera) -> None:
    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(manager.page.get_by_role("link", name="Approvals")).to_be_visible()
    expect(manager.page.get_by_role("link", name="Settings")).to_have_count(0)
    manager.page.goto(f"{manager.page.url.split('#')[0]}#/settings")
    expect(manager.page.locator("#view")).to_have_attribute("data-view", "chat")
    manager.shot("settings-typed-by-hand")
    assert manager.close() == []
