"""Settings (admins): the model of each agent, from the deployment's allowed list, and the
capability gate's mode; both read back through the API."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import opening_hours

pytestmark = pytest.mark.browser
AGENT = "members.update"


def test_an_admin_picks_a_model_for_an_agent_and_the_gate_mode(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(opening_hours())  # a model the deployment allows must exist
    admin_headers = bearer("admin", user="ada")
    allowed = http.get("/v1/tenant/models", headers=admin_headers).json()["allowed"]
    choice = allowed[0]["spec"]
    before = http.get("/v1/tenant/settings", headers=admin_headers).json()["capability_mode"]
    other_mode = "observe" if before == "enforce" else "enforce"

    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.get_by_role("link", name="Settings").click()
    model = admin.page.get_by_label(f"Model for {AGENT}")
    expect(model).to_have_value("")  # the deployment's default until a choice is made
    admin.shot("settings")
    model.select_option(choice)
    admin.page.get_by_role("button", name="Save models").click()
    expect(admin.page.locator(".toast")).to_contain_text("Models saved")
    assert http.get("/v1/tenant/models", headers=admin_headers).json()["models"] == {
        AGENT: choice}

    admin.page.get_by_role("radio", name=other_mode.capitalize()).check()
    admin.page.get_by_role("button", name="Save gate mode").click()
    expect(admin.page.locator(".toast").last).to_contain_text(other_mode)
    assert http.get("/v1/tenant/settings",
                    headers=admin_headers).json()["capability_mode"] == other_mode
    admin.shot("saved")

    admin.page.reload()  # what the page shows comes from the server
    expect(admin.page.get_by_label(f"Model for {AGENT}")).to_have_value(choice)
    expect(admin.page.get_by_role("radio", name=other_mode.capitalize())).to_be_checked()
    assert admin.close() == []


def test_a_manager_has_no_settings(browser: Any, server: AppServer, camera: Camera) -> None:
    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(manager.page.get_by_role("link", name="Approvals")).to_be_visible()
    expect(manager.page.get_by_role("link", name="Settings")).to_have_count(0)
    manager.page.goto(f"{manager.page.url.split('#')[0]}#/settings")
    expect(manager.page.locator("#view")).to_have_attribute("data-view", "chat")
    manager.shot("settings-typed-by-hand")
    assert manager.close() == []
