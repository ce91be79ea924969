"""The Harness view (admins): the versions, the active version's flowchart — the SVG the
server draws from the version's JSON, nothing fetched from elsewhere — and the JSON itself;
another version shown on request; two versions compared, a version tested, activated past
its failing tests only by a second step naming them, rolled back, and edited into a new
version with its problems shown by path (a step title holding markup stays text). Others
have no such view."""

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
from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.conftest import ROOT
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer

pytestmark = pytest.mark.browser
CLUB_RULES = ROOT / "src" / "opsgraph" / "harness" / "examples" / "club_rules.json"
HOSTILE = '<img src=x onerror="document.body.dataset.owned=1">Cut <b>spam</b>'


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


def test_an_admin_compares_tests_forces_rolls_back_and_edits_a_version(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera,
        demo_db: Any) -> None:
    scope = TenantScope(demo_db, "demo")
    doc = json.loads(CLUB_RULES.read_text(encoding="utf-8"))
    doc["steps"][0]["title"] = HOSTILE
    doc["tests"] = [doc["tests"][0], {"name": "greets the spammer", "message": "casino bonus!!!",
                                      "expect": {"contains": ["hello there"]}}]
    version, _ = versions.save(scope, doc, actor="ada", note="greets")
    admin_headers = bearer("admin", user="ada")

    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.get_by_role("link", name="Harness").click()
    view = admin.page.locator("#view")
    view.get_by_label("From").select_option("0")
    view.get_by_label("to", exact=True).select_option(str(version))
    view.get_by_role("button", name="Compare").click()
    changes = view.locator("table.harness-changes tbody tr")
    expect(changes.filter(has_text="steps.guard")).to_have_count(1)
    expect(changes.filter(has_text="steps.guard")).to_contain_text("Added")

    view.get_by_role("button", name=f"Show version {version}").click()
    expect(view.locator('figure.flowchart svg g.step[data-step="guard"]')).to_have_count(1)
    expect(view.locator(".harness-json pre")).to_contain_text("document.body.dataset.owned")
    assert view.locator("img, .flowchart foreignObject").count() == 0  # markup stays text
    assert admin.page.evaluate("document.body.dataset.owned") is None

    view.get_by_role("button", name=f"Test version {version}").click()
    report = view.locator(".harness-outcome")
    expect(report).to_contain_text("1 passing, 1 failing")
    expect(report.locator(".test-results li.failed")).to_contain_text("greets the spammer")
    admin.shot("tested")

    view.get_by_role("button", name=f"Activate version {version}").click()
    expect(report.locator(".force")).to_contain_text("1 failing test")
    assert http.get("/v1/harness", headers=admin_headers).json()["active"] == 0
    admin.shot("refused-failing-tests")
    view.get_by_role("button", name="Activate anyway, overriding greets the spammer").click()
    expect(view.get_by_text(f"Version {version} is active")).to_be_visible()
    assert http.get("/v1/harness", headers=admin_headers).json()["active"] == version
    [forced] = scope["audit"].find({"operation": "harness.activate"})
    assert forced["detail"]["forced"] and forced["detail"]["failing"] == ["greets the spammer"]

    view.get_by_role("button", name="Roll back").click()
    expect(view.get_by_text("Version 0 is active")).to_be_visible()
    assert http.get("/v1/harness", headers=admin_headers).json()["active"] == 0

    view.get_by_text("as a new version").click()
    broken = {**doc, "steps": [{**doc["steps"][0], "type": "sieve"}, *doc["steps"][1:]]}
    view.get_by_label("The version’s JSON").fill(json.dumps(broken))
    view.get_by_role("button", name="Check").click()
    problems = view.locator(".harness-edit .problems li")
    expect(problems.first).to_contain_text("steps[0]")
    view.get_by_role("button", name="Save as new version").click()
    expect(problems.first).to_contain_text("steps[0]")
    assert len(http.get("/v1/harness", headers=admin_headers).json()["versions"]) == 2
    admin.shot("problems-by-path")
    assert admin.close() == []

    phone = Dashboard(browser, server, camera, "ada-phone", "admin", viewport=PHONE)
    phone.page.goto(f"{server.url}/#/harness")
    expect(phone.page.locator("figure.flowchart svg")).to_be_visible()
    phone.shot("phone")
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    assert phone.close() == []

    # forcing is a second, explicit step: it names the failing tests, and only those
    path = f"/v1/harness/versions/{version}/activate"
    unnamed = http.post(path, json={"force": True}, headers=admin_headers)
    assert unnamed.status_code == 422 and "overriding" in unnamed.json()["error"]["message"]
    wrong = http.post(path, json={"force": True, "overriding": ["spam is blocked"]},
                      headers=admin_headers)
    assert wrong.status_code == 409 and wrong.json()["error"]["code"] == "tests_failing"
    assert http.get("/v1/harness", headers=admin_headers).json()["active"] == 0
    assert http.post("/v1/harness/rollback", headers=bearer("manager")).status_code == 403
