"""The Harness view (admins): the versions, the active version's flowchart — the SVG the
server draws from the version's JSON, nothing fetched from elsewhere — and the JSON itself;
another version shown on request. Others have no such view."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from opsgraph.evals.harness_tests import activate_checked
from opsgraph.harness import versions
from opsgraph.harness.validate import validate
from opsgraph.store.scope import TenantScope
from tests.browser.dashboard import Camera, Dashboard
from tests.conftest import ROOT
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer

pytestmark = pytest.mark.browser
CLUB_RULES = ROOT / "src" / "opsgraph" / "harness" / "examples" / "club_rules.json"


def test_an_admin_sees_the_versions_the_flowchart_and_the_json(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera,
        demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    doc = json.loads(CLUB_RULES.read_text(encoding="utf-8"))
    version, _ = versions.save(scope, doc, actor="ada", note="club rules")
    activate_checked(scope, version, actor="ada")
    steps = validate(doc).steps
    requests: list[str] = []

    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.on("request", lambda r: requests.append(r.url))
    admin.page.get_by_role("link", name="Harness").click()
    view = admin.page.locator("#view")
    expect(view.get_by_role("heading", name=f"Version {version}: Club rules")).to_be_visible()
    rows = view.locator("table.versions tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_contain_text("club rules")
    expect(rows.nth(1)).to_contain_text("Active")
    chart = view.locator("figure.flowchart svg")
    expect(chart).to_be_visible()
    for step in steps:  # every step of the JSON is a node of the picture, titled
        node = chart.locator(f'g.step[data-step="{step.id}"]')
        expect(node).to_have_count(1)
        expect(node).to_contain_text(step.title[:12])
    view.get_by_text(f"Version {version} as JSON").click()
    shown = json.loads(view.locator(".harness-json pre").inner_text())
    assert shown == http.get("/v1/harness", headers=bearer("admin")).json()["doc"]
    assert [s["id"] for s in shown["steps"]] == [s.id for s in steps]
    admin.shot("active-version")

    view.get_by_role("button", name="Show version 0").click()
    expect(view.get_by_role("heading", name="Version 0: Built-in")).to_be_visible()
    expect(view.locator('figure.flowchart svg g.step[data-step="main"]')).to_have_count(1)
    expect(view.locator("figure.flowchart svg g.step")).to_have_count(1)
    admin.shot("built-in-version")
    assert all(url.startswith(server.url) for url in requests), requests
    assert admin.close() == []


def test_a_manager_has_no_harness_view(browser: Any, server: AppServer, http: httpx.Client,
                                       camera: Camera) -> None:
    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(manager.page.get_by_role("link", name="Approvals")).to_be_visible()
    expect(manager.page.get_by_role("link", name="Harness")).to_have_count(0)
    manager.page.goto(f"{manager.page.url.split('#')[0]}#/harness")
    expect(manager.page.locator("#view")).to_have_attribute("data-view", "chat")
    refused = http.get("/v1/harness", headers=bearer("manager"))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert http.get("/v1/harness?version=x", headers=bearer("admin")).status_code == 400
    assert http.get("/v1/harness?version=7", headers=bearer("admin")).status_code == 404
    assert manager.close() == []
