"""A harness `clarify` step in the dashboard: its options are buttons named by their text,
and choosing one sends it as the next message of the same conversation; an answer that
carries a `warning` (the tenant's harness failed, the built-in one answered) shows it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from opsgraph.evals.harness_tests import activate_checked
from opsgraph.harness import versions
from opsgraph.store.scope import TenantScope
from tests.browser.dashboard import Camera, Dashboard
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import opening_hours

pytestmark = pytest.mark.browser
QUESTION = "Which court do you mean?"
OPTIONS = ["Court 1", "Court 2"]


def step(step_id: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "type": kind, "title": step_id.replace("_", " ").capitalize(),
            "description": f"The {step_id} step.", "layer": "core", **fields}


def activate(demo_db: Any, doc: dict[str, Any], *, force: bool = False) -> int:
    scope = TenantScope(demo_db, "demo")
    version, _ = versions.save(scope, doc, actor="ada")
    activate_checked(scope, version, actor="ada", force=force)
    return version


CLARIFY = {
    "steps": [
        step("which", "switch", cases=[{"if": {"var": "message", "matches": "^Court [12]$"},
                                        "goto": "main"}], default="ask"),
        step("ask", "clarify", question=QUESTION, options=OPTIONS),
        step("main", "supervisor")],
    "tests": [{"name": "a vague request is asked about", "message": "book me a court",
               "expect": {"steps_ran": ["which", "ask"], "contains": [QUESTION],
                          "max_model_calls": 0}}],
}


def test_options_are_buttons_that_send_their_text_on_the_same_thread(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera,
        demo_db: Any) -> None:
    activate(demo_db, CLARIFY)
    server.write_script(opening_hours())  # what the supervisor answers once a court is chosen
    staff = Dashboard(browser, server, camera, "kim", "staff")
    staff.ask("book me a court")
    first = staff.turns.nth(0)
    expect(first.locator(".bubble.assistant")).to_have_text(QUESTION)
    buttons = first.get_by_role("group", name="Choose an answer").get_by_role("button")
    expect(buttons).to_have_text(OPTIONS)
    staff.shot("options")

    first.get_by_role("button", name="Court 2", exact=True).click()
    expect(staff.turns).to_have_count(2)
    second = staff.turns.nth(1)
    expect(second.locator(".bubble.user")).to_have_text("Court 2")
    expect(second.locator(".bubble.assistant")).to_have_text("We open at 6am on weekdays.")
    expect(first.get_by_role("button", name="Court 1", exact=True)).to_be_disabled()
    staff.shot("option-sent")

    thread_id = staff.page.url.rsplit("/", 1)[-1]
    thread = http.get(f"/v1/threads/{thread_id}", headers=bearer("staff", user="kim")).json()
    assert [m["content"] for m in thread["messages"] if m["role"] == "user"] == [
        "book me a court", "Court 2"]
    assert staff.close() == []


def test_a_fallback_answer_shows_its_warning(browser: Any, server: AppServer,
                                            camera: Camera, demo_db: Any) -> None:
    # an llm step whose replies are not JSON fails at run time (twice off its schema): the
    # run falls back to the built-in harness, whose answer carries the warning
    broken = {"steps": [step("draft", "llm", prompt="@draft", input="{{message}}",
                             output_schema={"type": "object"}, save_as="reply"),
                        step("reply", "answer", text="{{reply.text | default:\"-\"}}")],
              "prompts": {"draft": "Answer briefly."}}
    version = activate(demo_db, broken)
    server.write_script({**opening_hours(), "harness": {"draft": "not json"}})
    staff = Dashboard(browser, server, camera, "kim", "staff")
    staff.ask("When do you open?")
    turn = staff.turns.last
    expect(turn.locator(".bubble.assistant")).to_have_text("We open at 6am on weekdays.")
    warning = turn.locator(".note-warning")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text(f"harness version {version} failed at step draft")
    expect(turn.get_by_role("group", name="Choose an answer")).to_be_hidden()
    staff.shot("warning")
    assert staff.close() == []
