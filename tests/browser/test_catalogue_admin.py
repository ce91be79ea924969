"""The Catalogue view (admins): objects listed by type, one added (its wrong fields named
first), edited and removed — each checked against the API and the audit trail — at
desktop and phone sizes; a name holding markup is shown as text. Others have no such
view and the API refuses them."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from opsgraph.store.scope import TenantScope
from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer

pytestmark = pytest.mark.browser
HOSTILE = '<img src=x onerror="document.body.dataset.owned=1">Padel <i>court</i>'


def objects(http: httpx.Client) -> dict[str, Any]:
    listed = http.get("/v1/catalogue", headers=bearer("admin")).json()["objects"]
    return {o["key"]: o for o in listed}


def test_an_admin_adds_edits_and_removes_a_catalogue_object(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera,
        demo_db: Any) -> None:
    before = objects(http)
    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.get_by_role("link", name="Catalogue").click()
    view = admin.page.locator("#view")
    view.get_by_label("Type", exact=True).select_option("plan")
    expect(view.locator("table.cat-table tbody tr")).to_have_count(
        sum(1 for o in before.values() if o["type"] == "plan"))
    admin.shot("plans")

    view.get_by_label("Type", exact=True).select_option("resource")
    view.get_by_role("button", name="Add an object").click()
    view.get_by_label("Key").fill("padel-court")
    fields = json.loads(view.get_by_label("Fields (JSON)").input_value())
    assert fields["name"] == "" and "capacity" in fields  # a resource's fields to fill in
    view.get_by_label("Fields (JSON)").fill(json.dumps({**fields, "name": HOSTILE,
                                                        "capacity": 0}))
    view.get_by_role("button", name="Add object").click()
    problems = view.locator(".cat-editor .problems li")
    expect(problems.first).to_contain_text("capacity")
    assert "padel-court" not in objects(http)
    admin.shot("wrong-field-named")

    view.get_by_label("Fields (JSON)").fill(json.dumps({**fields, "name": HOSTILE,
                                                        "capacity": 4}))
    view.get_by_role("button", name="Add object").click()
    row = view.locator('tr[data-key="padel-court"]')
    expect(row).to_contain_text(HOSTILE)  # the markup as text, nothing made of it
    assert row.locator("img, i").count() == 0
    assert admin.page.evaluate("document.body.dataset.owned") is None
    assert objects(http)["padel-court"]["capacity"] == 4

    row.get_by_role("button", name="Edit").click()
    edited = json.loads(view.get_by_label("Fields (JSON)").input_value())
    view.get_by_label("Fields (JSON)").fill(json.dumps({**edited, "name": "Padel Court",
                                                        "capacity": 6}))
    view.get_by_role("button", name="Save changes").click()
    expect(view.locator('tr[data-key="padel-court"]')).to_contain_text("Padel Court")
    assert objects(http)["padel-court"]["version"] == 2
    admin.shot("edited")

    row = view.locator('tr[data-key="padel-court"]')
    row.get_by_role("button", name="Remove").click()
    row.get_by_role("button", name="Remove object").click()
    expect(view.locator('tr[data-key="padel-court"]')).to_have_count(0)
    assert objects(http).keys() == before.keys()
    audit = TenantScope(demo_db, "demo")["audit"]
    assert [(r["operation"], r["actor"]) for r in audit.find(
        {"operation": {"$regex": "^catalogue"}}, sort=[("at", 1)])] == [
        ("catalogue.put", "ada"), ("catalogue.put", "ada"), ("catalogue.remove", "ada")]
    assert admin.close() == []

    phone = Dashboard(browser, server, camera, "ada-phone", "admin", viewport=PHONE)
    phone.page.goto(f"{server.url}/#/catalogue")
    expect(phone.page.locator('tr[data-key="court-1"]')).to_be_visible()
    phone.page.locator('tr[data-key="court-1"]').get_by_role("button", name="Edit").click()
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    phone.shot("phone")
    assert phone.close() == []

    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(manager.page.get_by_role("link", name="Approvals")).to_be_visible()
    expect(manager.page.get_by_role("link", name="Catalogue")).to_have_count(0)
    assert http.get("/v1/catalogue", headers=bearer("manager")).status_code == 403
    assert http.put("/v1/catalogue/court-1", json={"object": {}},
                    headers=bearer("manager")).status_code == 403
    assert manager.close() == []

    admin_headers = bearer("admin")
    court = {k: v for k, v in before["court-1"].items() if k not in ("key", "version")}

    def put(key: str, body: dict[str, Any]) -> httpx.Response:
        return http.put(f"/v1/catalogue/{key}", json=body, headers=admin_headers)

    assert put("Court_1", {"object": court}).status_code == 400
    assert put("court-1", {}).status_code == 422  # no object
    stale = put("court-1", {"object": court, "if_version": 99})
    assert stale.status_code == 409 and "version 1 is stored" in stale.json()["error"]["message"]
    wrong = put("court-1", {"object": {**court, "capacity": 0, "indoor": "sometimes"}})
    assert wrong.status_code == 400
    assert {e["field"] for e in wrong.json()["error"]["detail"]["errors"]} == {
        "capacity", "indoor"}
    assert http.get("/v1/catalogue?type=courts", headers=admin_headers).status_code == 400
    assert objects(http)["court-1"] == before["court-1"]  # nothing written by any of them
