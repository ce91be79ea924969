"""The Knowledge view (admins): the documents with their sections, the agents' search,
upload, replace and remove — each checked against the API — at desktop and phone sizes;
a title holding markup is shown as text. Others have no such view and the API refuses
them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer

pytestmark = pytest.mark.browser
HOSTILE = '<img src=x onerror="document.body.dataset.owned=1">Locker <b>rules</b>'


def documents(http: httpx.Client) -> dict[str, Any]:
    return {d["slug"]: d for d in http.get("/v1/knowledge/documents",
                                           headers=bearer("admin")).json()["documents"]}


def test_an_admin_searches_uploads_replaces_and_removes_documents(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera,
        tmp_path: Path) -> None:
    before = documents(http)
    admin = Dashboard(browser, server, camera, "ada", "admin")
    admin.page.get_by_role("link", name="Knowledge").click()
    view = admin.page.locator("#view")
    hours = view.locator('.kb-doc[data-slug="opening-hours"]')
    expect(hours).to_contain_text(before["opening-hours"]["title"])
    hours.get_by_role("button", name="Sections").click()
    expect(hours.locator(".kb-sections li").first).to_be_visible()
    assert hours.locator(".kb-sections li").count() == before["opening-hours"]["sections"]

    view.get_by_label("Search the knowledge base").fill("when does the pool open")
    view.get_by_role("button", name="Search", exact=True).click()
    expect(view.locator(".kb-hits li").first).to_be_visible()
    admin.shot("sections-and-search")

    lockers = tmp_path / "Locker Rules.md"
    lockers.write_text("# Lockers\n\nLockers are free.\n\n## Keys\n\nAsk at reception.\n",
                       encoding="utf-8")
    view.get_by_label("File").set_input_files(str(lockers))
    expect(view.get_by_label("Slug")).to_have_value("locker-rules")
    view.get_by_label("Title (optional)").fill(HOSTILE)
    view.get_by_role("button", name="Upload").click()
    added = view.locator('.kb-doc[data-slug="locker-rules"]')
    expect(added).to_contain_text(HOSTILE)  # the markup as text, nothing made of it
    assert added.locator("img, b").count() == 0
    assert admin.page.evaluate("document.body.dataset.owned") is None
    assert documents(http)["locker-rules"]["title"] == HOSTILE
    assert documents(http)["locker-rules"]["sections"] == 2

    added.get_by_role("button", name="Replace").click()
    lockers.write_text("# Lockers\n\nLockers cost 1 a day.\n", encoding="utf-8")
    view.get_by_label("File").set_input_files(str(lockers))
    expect(view.locator("#kb-upload .note-wait")).to_contain_text("This replaces")
    view.get_by_role("button", name="Replace document").click()
    expect(view.locator('.kb-doc[data-slug="locker-rules"]')).to_contain_text("version 2")
    assert documents(http)["locker-rules"]["version"] == 2

    empty = tmp_path / "empty.txt"
    empty.write_text("   \n", encoding="utf-8")
    view.get_by_label("File").set_input_files(str(empty))
    view.get_by_role("button", name="Upload").click()
    expect(view.locator("#kb-upload .form-error")).to_contain_text("empty document")
    admin.shot("refused-empty-file")

    gone = view.locator('.kb-doc[data-slug="locker-rules"]')
    gone.get_by_role("button", name="Remove").click()
    gone.get_by_role("button", name="Remove document").click()
    expect(view.locator('.kb-doc[data-slug="locker-rules"]')).to_have_count(0)
    assert documents(http).keys() == before.keys()
    assert admin.close() == []

    phone = Dashboard(browser, server, camera, "ada-phone", "admin", viewport=PHONE)
    phone.page.goto(f"{server.url}/#/knowledge")
    expect(phone.page.locator('.kb-doc[data-slug="opening-hours"]')).to_be_visible()
    width = phone.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width  # nothing wider than the screen
    phone.shot("phone")
    assert phone.close() == []

    manager = Dashboard(browser, server, camera, "sam", "manager")
    expect(manager.page.get_by_role("link", name="Approvals")).to_be_visible()
    expect(manager.page.get_by_role("link", name="Knowledge")).to_have_count(0)
    manager.page.goto(f"{server.url}/#/knowledge")
    expect(manager.page.locator("#view")).to_have_attribute("data-view", "chat")
    assert http.get("/v1/knowledge/documents", headers=bearer("manager")).status_code == 403
    assert manager.close() == []
