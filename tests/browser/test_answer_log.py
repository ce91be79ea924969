"""The Answer log view (admins): finished runs newest first, filtered by outcome and by
words of the request; one run opened to its plan, tools called, sources, model calls and
outcome, as the API reports them — at desktop and phone sizes. A request holding markup
is shown as text. Others have no such view and the API refuses them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import opening_hours

pytestmark = pytest.mark.browser
HOSTILE = 'When do you open? <img src=x onerror="document.body.dataset.owned=1">'


def test_an_admin_filters_the_log_and_opens_a_run(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    server.write_script(opening_hours())
    staff = bearer("staff", user="stf_demo_04")
    for message in ("What time do you open on Monday?", HOSTILE):
        assert stream(http, "/v1/runs", {"message": message}, staff).finished["status"] == (
            "completed")
    log = http.get("/v1/answer-log", headers=bearer("admin")).json()["runs"]
    assert [r["request"] for r in log] == [HOSTILE, "What time do you open on Monday?"]
    run = http.get(f"/v1/answer-log/{log[0]['run_id']}", headers=bearer("admin")).json()

    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.get_by_role("link", name="Answer log").click()
    view = admin.page.locator("#view")
    rows = view.locator("table.log-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text(HOSTILE)  # newest first, the markup as text
    assert rows.first.locator("img").count() == 0
    view.get_by_label("Request contains").fill("monday")
    expect(rows).to_have_count(1)
    view.get_by_label("Request contains").fill("")
    view.get_by_label("Outcome").select_option("failed")
    expect(view.locator(".log-table")).to_have_count(0)
    expect(view).to_contain_text("No finished runs match.")
    view.get_by_label("Outcome").select_option("completed")
    expect(rows).to_have_count(2)
    admin.shot("filtered")

    rows.first.get_by_role("button", name="Open").click()
    detail = view.locator(".log-detail")
    expect(detail.get_by_role("heading", name="Plan")).to_be_visible()
    expect(detail.locator(".log-plan li")).to_have_count(len(run["plan"]))
    for tool in run["tools"]:
        expect(detail.locator(".log-tools")).to_contain_text(tool)
    for source in run["sources"]:
        expect(detail.locator(".log-sources")).to_contain_text(source["title"])
    expect(detail).to_contain_text(f"model calls{run['model_calls']}")
    assert run["sources"] and run["tools"] and run["model_calls"] > 0
    assert admin.page.evaluate("document.body.dataset.owned") is None
    admin.shot("run")
    assert admin.close() == []

    phone = Dashboard(browser, server, camera, "ada-phone", "admin", viewport=PHONE)
    phone.page.goto(f"{server.url}/#/answer-log")
    phone.page.locator("table.log-table tbody tr").first.get_by_role(
        "button", name="Open").click()
    expect(phone.page.locator(".log-detail .log-plan")).to_be_visible()
    phone.shot("phone")
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    assert phone.close() == []

    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(manager.page.get_by_role("link", name="Approvals")).to_be_visible()
    expect(manager.page.get_by_role("link", name="Answer log")).to_have_count(0)
    assert http.get("/v1/answer-log", headers=bearer("manager")).status_code == 403
    assert http.get(f"/v1/answer-log/{log[0]['run_id']}",
                    headers=bearer("manager")).status_code == 403
    assert http.get("/v1/answer-log?outcome=great", headers=bearer("admin")).status_code == 400
    assert http.get("/v1/answer-log/run_nope", headers=bearer("admin")).status_code == 404
    assert manager.close() == []
