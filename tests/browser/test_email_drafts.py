"""Inbound email to a sent reply, through the page: `opsgraph email ingest` leaves a draft;
a staff member reads it (the original, the reply, its sources), edits and sends it; a
manager approves the pending email change; exactly one email is queued. The email's text
and the member's name are hostile markup, shown as text and never run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import PHONE, Camera, Dashboard
from tests.browser.scripts import email_reply
from tests.e2e.app_process import AppServer
from tests.e2e.flows import wait_for
from tests.e2e.http_client import bearer
from tests.test_cli import ROOT

pytestmark = pytest.mark.browser

MARKUP = "<img src=x onerror=window.__xss=1>"
HOSTILE_NAME = f"Jane {MARKUP}Smith"
SUBJECT = "<b>Court</b> on Thursday?"
BODY = f"Hi,\n<script>window.__xss=2</script>\nCan I cancel a booking? {MARKUP}\nJane"
EDITED = "Hello Jane,\nYes: cancel up to 24 hours ahead, free of charge.\nThe club"


def hostile_email(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.eml"
    path.write_text(f'From: "{HOSTILE_NAME}" <jane.smith@example.com>\r\n'
                    "To: hello@demo.example\r\nSubject: " + SUBJECT + "\r\n"
                    "Message-ID: <xss-0001@example.com>\r\n"
                    "Date: Mon, 02 Mar 2026 09:14:00 +0000\r\n\r\n"
                    + BODY.replace("\n", "\r\n") + "\r\n")
    return path


def no_script_ran(*boards: Dashboard) -> None:
    for board in boards:
        assert board.page.evaluate("window.__xss") is None, board.who


def fits(board: Dashboard) -> None:
    """Nothing is wider than the phone's screen."""
    width = board.page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width


def test_an_inbound_email_draft_is_edited_sent_approved_and_sent_once(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera, demo_db: Any,
        store_env: dict[str, str], tmp_path: Path) -> None:
    demo_db["members"].update_one({"_id": "mem_demo_001", "tenant_id": "demo"},
                                  {"$set": {"name": HOSTILE_NAME}})
    server.write_script(email_reply())
    # the command as a person runs it (a process of its own, cold: a generous timeout)
    done = subprocess.run([sys.executable, "-m", "opsgraph.cli", "email", "ingest",
                           str(hostile_email(tmp_path)), "--tenant", "demo", "--model",
                           f"scripted:{server.script}", "--json"], env=store_env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    draft_id = json.loads(done.stdout)["draft_id"]
    assert draft_id

    staff = Dashboard(browser, server, camera, "kim", "staff", user="stf_demo_04")
    nav = staff.page.get_by_role("link", name="Drafts")
    expect(nav.locator(".badge")).to_have_text("1")
    nav.click()
    detail = staff.page.locator(".draft-detail")
    expect(detail.get_by_role("heading", name=SUBJECT)).to_be_visible()
    expect(detail.locator(".meta")).to_contain_text(HOSTILE_NAME)
    expect(detail.locator(".mail-body").first).to_contain_text("<script>window.__xss=2</script>")
    expect(detail.locator(".reply-body")).to_have_text(email_reply()["synthesis"])
    expect(detail.locator(".draft-sources .source").first).to_be_visible()
    staff.shot("draft")

    detail.get_by_role("button", name="Edit", exact=True).click()
    detail.get_by_label("Reply text").fill(EDITED)
    staff.shot("editing")
    detail.get_by_role("button", name="Save").click()
    expect(detail.locator(".reply-body")).to_have_text(EDITED)
    detail.get_by_role("button", name="Send", exact=True).click()
    expect(detail.locator(".pill")).to_have_text("Waiting for a manager")
    expect(detail.get_by_role("button", name="Send", exact=True)).to_have_count(0)
    expect(nav.locator(".badge")).to_be_hidden()
    staff.shot("sent-for-approval")

    again = http.post(f"/v1/drafts/{draft_id}/send", json={},
                      headers=bearer("staff", user="stf_demo_04"))
    assert again.status_code == 409 and "sent for approval already" in again.text, again.text
    listed = http.get("/v1/approvals", headers=bearer("manager", user="stf_demo_02")).json()
    [change] = listed["changes"]
    assert (change["operation"], change["args"]["body"]) == ("communications.send_email",
                                                             EDITED)

    manager = Dashboard(browser, server, camera, "sam", "manager", user="stf_demo_02")
    manager.page.get_by_role("link", name="Approvals").click()
    card = manager.card("Court")
    expect(card.locator(".diff")).to_contain_text(HOSTILE_NAME)
    manager.shot("inbox")
    card.get_by_role("button", name="Approve", exact=True).click()
    # the card says "Approved", then leaves (a moment: the store is what is awaited)
    wait_for(lambda: demo_db["outbox"].count_documents({"tenant_id": "demo"}) or None)
    manager.shot("approved")
    decided = http.post(f"/v1/approvals/{change['change_id']}", json={"decision": "approve"},
                        headers=bearer("manager", user="stf_demo_02"))
    assert decided.status_code == 409, decided.text
    assert [m["body"] for m in demo_db["outbox"].find({"tenant_id": "demo"})] == [EDITED]

    staff.page.get_by_role("button", name="Refresh").click()
    expect(detail.locator(".pill")).to_have_text("Sent")
    expect(detail.locator(".note")).to_contain_text("Applied by")
    staff.shot("sent")
    gone = http.delete(f"/v1/drafts/{draft_id}", headers=bearer("staff", user="stf_demo_04"))
    assert gone.status_code == 409 and "sent already" in gone.text, gone.text

    manager.page.get_by_role("link", name="History").click()
    row = manager.page.locator(".history-card", has_text="Court")
    expect(row).to_contain_text("Applied by")
    manager.shot("history")

    phone = Dashboard(browser, server, camera, "kim-phone", "staff", user="stf_demo_04",
                      viewport=PHONE)
    phone.page.goto(f"{server.url}/#/drafts/{draft_id}")
    expect(phone.page.locator(".draft-detail .pill")).to_have_text("Sent")
    fits(phone)
    phone.shot("phone-draft")
    no_script_ran(staff, manager, phone)
    assert staff.close() == [] and manager.close() == [] and phone.close() == []
