"""A real server process against a hostile or careless tenant admin (issue 18): a guard
pattern that takes a backtracking engine exponential time runs on RE2 in linear time, so
the hostile message is answered and `/health` answers beside it; admin MCP tools refuse a
template filter in other digits as a validation problem, a `true` where a version number
belongs, and a slug with a trailing newline — each in our error shape."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from tests.e2e.app_process import AppServer
from tests.e2e.http_client import stream
from tests.e2e.test_mcp_admin import admin_calls, error_of

HEALTH_BOUND_S = 10.0
"""Generous: RE2 takes microseconds; `re` took 9 s for 27 characters and doubles per one
more, so the 8,000 characters below would never finish."""

HOSTILE_GUARD: dict[str, Any] = {
    "steps": [
        {"id": "guard", "type": "guard", "title": "Cut runs of a", "layer": "safety",
         "description": "A message ending in a's is cut.",
         "rules": [{"patterns": ["(a+)+$"], "action": "block", "text": "Cut by the guard."}]},
        {"id": "reply", "type": "answer", "title": "Reply", "layer": "core",
         "description": "Everything else gets a fixed reply.", "text": "Passed the guard."}],
    "tests": [{"name": "a's are cut", "message": "aaaa",
               "expect": {"steps_ran": ["guard"], "contains": ["Cut by the guard."]}},
              {"name": "the rest passes", "message": "hello!",
               "expect": {"steps_ran": ["guard", "reply"], "contains": ["Passed"]}}],
}


@pytest.mark.timeout(240)
def test_a_catastrophic_guard_pattern_does_not_freeze_the_server(server: AppServer) -> None:
    saved, activated = admin_calls(server, [("harness_set", {"doc": HOSTILE_GUARD}),
                                            ("harness_activate", {"version": 1})])
    assert saved.structured_content["version"] == 1, saved.content
    assert not activated.is_error, activated.content

    hostile = {"message": "a" * 7999 + "!"}  # no match: `re` backtracks 2^7999 ways
    visitor = {"X-Opsgraph-Tenant": "demo"}
    outcome: dict[str, Any] = {}

    def send() -> None:
        with server.client() as client:
            outcome["run"] = stream(client, "/v1/runs", hostile, visitor)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    with httpx.Client(base_url=server.url, timeout=HEALTH_BOUND_S) as health:
        for _ in range(5):  # while the hostile message is in flight, and after it
            assert health.get("/health").json() == {"ok": True}
    sender.join(HEALTH_BOUND_S)
    assert not sender.is_alive(), "the hostile message is still being matched"
    run = outcome["run"]
    assert run.finished["status"] == "completed"
    assert [a["text"] for a in run.of("answer")] == ["Passed the guard."]
    # and the guard still does its job on a message it matches
    with server.client() as client:
        cut = stream(client, "/v1/runs", {"message": "b" + "a" * 7998}, visitor)
    assert [a["text"] for a in cut.of("answer")] == ["Cut by the guard."]


def test_a_backreference_is_refused_over_mcp_naming_its_path(server: AppServer) -> None:
    doc = {**HOSTILE_GUARD, "steps": [
        {**HOSTILE_GUARD["steps"][0], "rules": [{"patterns": [r"(\w+) \1"], "action": "block",
                                                 "text": "Repeated."}]},
        HOSTILE_GUARD["steps"][1]]}
    checked, refused = admin_calls(server, [("harness_validate", {"doc": doc}),
                                            ("harness_set", {"doc": doc})])
    [problem] = checked.structured_content["problems"]
    assert problem["path"] == "steps[0].rules[0].patterns[0]"
    assert "RE2 cannot run it" in problem["message"] and "backreference" in problem["message"]
    assert error_of(refused)["code"] == "invalid"


def test_admin_tools_refuse_other_digits_booleans_and_newlines_in_our_shape(
        server: AppServer) -> None:
    digits = {**HOSTILE_GUARD, "steps": [
        HOSTILE_GUARD["steps"][0],
        {**HOSTILE_GUARD["steps"][1], "text": "{{message | truncate:٣}}"}]}
    checked, refused, saved, as_true, as_text, slug = admin_calls(server, [
        ("harness_validate", {"doc": digits}),
        ("harness_set", {"doc": digits}),
        ("harness_set", {"doc": HOSTILE_GUARD}),
        ("harness_activate", {"version": True}),
        ("harness_activate", {"version": "1", "force": "yes"}),
        ("documents_add", {"slug": "hours\n", "body": "# Hours\n\nSix to ten.\n"}),
    ])
    [problem] = checked.structured_content["problems"]
    assert problem["path"] == "steps[1].text"
    assert "filter 'truncate': '٣' is not a whole number" in problem["message"]
    assert error_of(refused)["code"] == "invalid"
    assert refused.structured_content["error"]["detail"]["problems"] == [problem]

    assert saved.structured_content["version"] == 1
    wrong = error_of(as_true)
    assert wrong["code"] == "invalid" and "version: input should be a valid integer" in (
        wrong["message"])
    both = error_of(as_text)["message"]
    assert "version:" in both and "force: input should be a valid boolean" in both
    [versions] = admin_calls(server, [("harness_versions", {})])
    assert [(r["version"], r["active"]) for r in versions.structured_content["versions"]] == [
        (0, True), (1, False)], "nothing was activated"
    refused_slug = error_of(slug)
    assert refused_slug["code"] == "bad_input" and "slug 'hours\\n' is not valid" in (
        refused_slug["message"])
