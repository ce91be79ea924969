"""The dashboard on a phone and in club staff's words (issues 19 and 20).

On a 390×844 screen the conversation has the screen (the list of conversations behind a
button), the demo banner is one line until opened, the signed-in name stays, and no word
wraps in the middle; the desktop keeps the list beside the conversation. A token signed
elsewhere (not the local sign-in) shows the person's name and role, not the user id. A
task's tool calls show their arguments as labelled values (the raw data behind a toggle),
and a knowledge source opens as its document's title, headings and text; tenant text
(document titles, headings, arguments) is shown as text, never run as HTML.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.dashboard import DESKTOP, PHONE, Camera, Dashboard
from tests.browser.test_first_run import PHONE_EXAMPLE, sign_in_locally
from tests.browser.test_visitor_and_devices import fits_the_screen
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import call, task
from tests.e2e.test_first_run import demo  # noqa: F401  (the fresh-machine server)

pytestmark = pytest.mark.browser
HOURS_EXAMPLE = "What time does the club open at the weekend?"
MANAGER = "stf_demo_02"  # the demo manager's staff record: the header names them
HOSTILE = '<img src=x onerror="window.__xss=1">'
TITLE = f"House rules {HOSTILE}"
HEADING = "Guests <script>window.__xss=2</script>"
TEXT = "Guests sign in at the front desk <b>and</b> wear a wristband."
QUERY = f"guest rules {HOSTILE}"
FIRST_ANSWER_MS = 180_000
"""A bound on a server's first answer (its models load then), not a measure: the machine's
two cores are shared with the rest of the suite."""

BROKEN_WORDS = """() => {
  // every word of visible text that the layout split over two lines, though it would fit
  // on one (a word wider than its box has to break)
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || !parent.checkVisibility() || parent.closest("pre")) continue;
    for (const match of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      const tops = new Set(rects.map((r) => Math.round(r.top)));
      const width = rects.reduce((sum, r) => sum + r.width, 0);
      let box = parent;  // the block the line is in
      while (getComputedStyle(box).display === "inline" && box.parentElement) {
        box = box.parentElement;
      }
      if (tops.size > 1 && width <= box.clientWidth) broken.push(match[0]);
    }
  }
  return broken;
}"""


def broken_words(page: Any) -> list[str]:
    return list(page.evaluate(BROKEN_WORDS))


def height(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None, locator
    return float(box["height"])


def test_on_a_phone_the_conversation_has_the_screen(
        browser: Any, demo: AppServer, camera: Camera) -> None:  # noqa: F811
    staff = Dashboard(browser, demo, camera, "staff", None, viewport=PHONE)
    page = staff.page
    sign_in_locally(staff, "staff")
    banner = page.locator("#banner")
    expect(banner).to_contain_text("Demo mode")
    expect(banner.get_by_text("OPSGRAPH_MODEL", exact=False)).to_be_hidden()  # behind the toggle
    assert height(banner) < 40  # one line
    expect(page.locator("#who .who-name")).to_be_visible()
    expect(page.locator(".threads")).to_be_hidden()
    staff.shot("phone-start")
    banner.locator("summary").click()
    expect(banner.get_by_text("OPSGRAPH_MODEL", exact=False)).to_be_visible()
    staff.shot("phone-banner-open")
    banner.locator("summary").click()

    page.get_by_role("button", name=HOURS_EXAMPLE).click()
    expect(staff.turns.last.locator(".bubble.assistant")).to_contain_text(
        "08:00", timeout=FIRST_ANSWER_MS)
    assert height(page.locator(".conversation")) > 0.8 * PHONE["height"]
    assert fits_the_screen(page) and broken_words(page) == []
    staff.shot("phone-answered")
    toggle = page.get_by_role("button", name="Conversations")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    threads = page.locator(".threads")
    expect(threads.locator(".thread-item")).to_have_count(1)
    staff.shot("phone-conversations")
    threads.locator(".thread-item").click()  # the one on screen: back to it
    expect(threads).to_be_hidden()
    expect(staff.turns.last.locator(".bubble.assistant")).to_be_visible()

    page.set_viewport_size(DESKTOP)  # the desktop keeps both side by side
    expect(threads).to_be_visible()
    expect(toggle).to_be_hidden()
    assert broken_words(page) == []
    staff.shot("desktop-answered")

    manager = Dashboard(browser, demo, camera, "manager", None, viewport=PHONE)
    sign_in_locally(manager, "manager")
    manager.page.get_by_role("button", name=PHONE_EXAMPLE).click()
    expect(manager.turns.last.locator(".change-chip")).to_have_count(1)
    manager.page.get_by_role("link", name="Approvals").click()
    card = manager.card("900555")
    expect(card.locator(".diff")).to_be_visible()
    assert fits_the_screen(manager.page) and broken_words(manager.page) == []  # "NO W"
    manager.shot("phone-inbox")
    assert staff.close() == [] and manager.close() == []


def knowledge_read(slug: str) -> dict[str, Any]:
    """One knowledge task that searches, then reads the section HEADING of `slug`."""
    turns = [call("knowledge_search", query=QUERY),
             call("knowledge_read_section", document=slug, section=HEADING),
             {"content": "Guests sign in at the front desk."}]
    return {"plan": {"tasks": [task("t1", "knowledge", "search", "Find the guest rules")]},
            "turns": {"t1": turns}, "synthesis": "Guests sign in at the front desk."}


def test_sources_and_arguments_in_words_and_tenant_text_as_text(
        browser: Any, server: AppServer, http: httpx.Client, camera: Camera) -> None:
    body = f"# {TITLE}\n\nWhat members and guests agree to.\n\n## {HEADING}\n\n{TEXT}\n"
    put = http.put("/v1/knowledge/documents/house-rules", json={"title": TITLE, "body": body},
                   headers=bearer("admin"))
    assert put.status_code == 200, put.text
    server.write_script(knowledge_read("house-rules"))
    name = http.get("/v1/me", headers=bearer("manager", user=MANAGER)).json()["name"]
    assert name != MANAGER

    sam = Dashboard(browser, server, camera, "sam", "manager", user=MANAGER)
    page = sam.page
    page.evaluate("window.__xss = undefined")
    expect(page.locator("#who .who-name")).to_have_text(name)  # not the user id
    expect(page.locator("#who .who-role")).to_have_text("manager")
    sam.ask("What are the guest rules?")
    turn = sam.turns.last
    expect(turn.locator(".bubble.assistant")).to_contain_text("front desk",
                                                              timeout=FIRST_ANSWER_MS)
    expect(turn.locator(".source").first).to_have_text(TITLE)  # the titles, as text
    source = turn.locator(".source", has_text=HEADING)
    expect(source).to_have_text(f"{TITLE} — {HEADING}")

    turn.locator(".task-head").click()
    sam.shot("desktop-arguments")
    tools = turn.locator(".tool")
    search = tools.filter(has=page.get_by_text(QUERY, exact=True))
    expect(search.locator(".tool-name")).to_have_text("Knowledge · search")
    expect(search.locator(".labelled dt")).to_have_text(["Query"])
    expect(search.locator(".labelled dd")).to_have_text([QUERY])
    raw = search.locator("details.raw")
    expect(raw.locator("pre")).to_have_count(2)  # arguments and what came back, as sent
    expect(raw.locator("pre").first).to_be_hidden()  # behind the toggle
    read = tools.filter(has=page.get_by_text(HEADING, exact=True))
    expect(read.locator(".tool-name")).to_have_text("Knowledge · read section")
    expect(read.locator(".labelled dt")).to_have_text(["Document", "Section"])
    raw.locator("summary").click()
    expect(raw.locator("pre").first).to_contain_text('"query": "guest rules')
    sam.shot("desktop-raw-data")

    source.click()
    record = page.get_by_role("dialog")
    expect(record.locator("#record-title")).to_have_text(TITLE)
    expect(record.locator(".record-where")).to_have_text(HEADING)
    expect(record.locator(".record-text")).to_have_text(TEXT)
    expect(record).not_to_contain_text("level")
    expect(record).not_to_contain_text("house-rules#")
    sam.shot("desktop-source")
    page.set_viewport_size(PHONE)
    assert fits_the_screen(page)
    sam.shot("phone-source")
    record.get_by_role("button", name="Close").click()
    assert broken_words(page) == []
    sam.shot("phone-arguments")

    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src=x], #view script, #record script, #view b").count() == 0
    assert sam.close() == []
