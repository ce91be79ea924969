"""`/mcp/admin` of a real server process, through the official MCP client over HTTP: an
external agent runs the harness improvement loop — reads the schema, validates a broken
version (problems with paths), saves one (its change list), tests it, is refused
activation on a failing test (and refused `force` unless the tenant allows agents to
force), activates the fixed version, rolls back, and reads the answer log — and manages
documents and models. Only admins get in: no token is 401, everyone else 403, before any MCP
message."""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from mcp.client.session import ClientSession

from opsgraph.api.mcp_admin import ADMIN_TOOLS
from opsgraph.principal import Channel, Principal, Role
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import opening_hours
from tests.e2e.test_mcp_user import bound_reads, over_mcp

T = TypeVar("T")

SPAM_TEST = {"name": "spam is cut without a model call", "message": "casino bonus!!!",
             "expect": {"steps_ran": ["filter"], "steps_not_ran": ["main"],
                        "contains": ["looks like spam"], "max_model_calls": 0}}
HARNESS: dict[str, Any] = {
    "steps": [
        {"id": "filter", "type": "guard", "title": "Cut spam", "layer": "safety",
         "description": "Casino spam gets a fixed reply and no model call.",
         "rules": [{"patterns": ["\\bcasino\\b"], "action": "block", "text": "@spam_reply"}]},
        {"id": "main", "type": "supervisor", "title": "Agents", "layer": "core",
         "description": "Everything else: plan, run the agents, answer."}],
    "prompts": {"spam_reply": "This looks like spam, so we have not passed it on."},
    "tests": [SPAM_TEST],
    "metadata": {"title": "Spam filter"},
}


def harness(spam_reply: str) -> dict[str, Any]:
    doc = copy.deepcopy(HARNESS)
    doc["prompts"]["spam_reply"] = spam_reply
    return doc


def over_admin(server: AppServer, headers: dict[str, str],
               body: Callable[[ClientSession], Awaitable[T]]) -> T:
    """Connect to `/mcp/admin` with `headers`, initialize, and run `body` on the session."""
    return over_mcp(server, headers, body, link="admin")


def admin_calls(server: AppServer, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The results of these tool calls, made in order in one admin session."""

    async def body(session: ClientSession) -> list[Any]:
        return [await session.call_tool(name, args) for name, args in calls]

    return over_admin(server, bearer("admin", user="ada"), body)


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content
    error: dict[str, Any] = result.structured_content["error"]
    assert result.content[0].text == error["message"]
    return error


def test_an_agent_edits_tests_activates_and_rolls_back_a_harness(server: AppServer,
                                                                 demo_db: Any) -> None:
    broken = harness("This looks like spam.")
    broken["steps"][0]["rules"][0]["text"] = "@no_such_prompt"
    broken["steps"][1]["then"] = "nowhere"
    schema, checked, refused, failing, tested, not_activated, not_forced = admin_calls(server, [
        ("harness_schema", {}),
        ("harness_validate", {"doc": broken}),
        ("harness_set", {"doc": broken}),
        ("harness_set", {"doc": harness("Go away."), "note": "shorter reply"}),
        ("harness_test", {"version": 1}),
        ("harness_activate", {"version": 1}),
        ("harness_activate", {"version": 1, "force": True}),
    ])
    assert {"steps", "prompts", "tests", "budget"} <= set(
        schema.structured_content["properties"])

    problems = checked.structured_content["problems"]
    assert checked.structured_content["valid"] is False and not checked.is_error
    paths = {p["path"] for p in problems}
    assert any(p.startswith("steps[0].rules[0]") for p in paths), problems
    assert any(p.startswith("steps[1]") for p in paths), problems
    assert error_of(refused)["code"] == "invalid"
    assert refused.structured_content["error"]["detail"]["problems"] == problems

    assert failing.structured_content["version"] == 1
    changes = failing.structured_content["changes"]
    assert changes and any("spam_reply" in str(c) for c in changes), changes
    report = tested.structured_content
    assert report["failed"] == 1 and report["passed"] == 0, report
    assert error_of(not_activated)["code"] == "tests_failing"
    assert "spam is cut without a model call" in not_activated.content[0].text
    forbidden = error_of(not_forced)
    assert forbidden["code"] == "forbidden" and "harness_agent_may_force" in forbidden["message"]

    fixed, activated, listed, rolled, after = admin_calls(server, [
        ("harness_set", {"doc": harness("This looks like spam, sorry."), "note": "fixed"}),
        ("harness_activate", {"version": 2}),
        ("harness_versions", {}),
        ("harness_rollback", {}),
        ("harness_get", {}),
    ])
    assert fixed.structured_content["version"] == 2
    assert not activated.is_error and activated.structured_content["version"] == 2
    rows = listed.structured_content["versions"]
    assert [(r["version"], r["active"]) for r in rows] == [(0, False), (1, False), (2, True)]
    assert rolled.structured_content["version"] == 0
    assert after.structured_content["version"] == 0 and after.structured_content["active"]

    demo_db["tenants"].update_one({"_id": "demo"}, {"$set": {"harness_agent_may_force": True}})
    [forced] = admin_calls(server, [("harness_activate", {"version": 1, "force": True})])
    assert not forced.is_error and forced.structured_content["forced"] is True


def test_the_answer_log_shows_what_ran(server: AppServer) -> None:
    server.write_script(opening_hours())
    asked, log = admin_calls(server, [("ask", {"message": "When do you open?"}),
                                      ("answer_log", {"limit": 5})])
    assert asked.structured_content["status"] == "completed", asked.content
    [run] = log.structured_content["runs"]
    assert run["thread_id"] == asked.structured_content["thread_id"]
    assert run["request"] == "When do you open?" and run["outcome"] == "completed"
    assert run["model_calls"] > 0 and log.structured_content["next"] is None
    [bad] = admin_calls(server, [("answer_log", {"limit": 500})])
    assert error_of(bad)["code"] == "invalid" and "limit" in bad.content[0].text


def test_documents_and_models_through_the_same_functions(server: AppServer) -> None:
    body = "# Lost property\n\nKept at reception for 30 days.\n"
    added, listed, removed, gone, models, bad_models, unknown = admin_calls(server, [
        ("documents_add", {"slug": "lost-property-mcp", "body": body}),
        ("documents_list", {}),
        ("documents_remove", {"slug": "lost-property-mcp"}),
        ("documents_remove", {"slug": "lost-property-mcp"}),
        ("models_get", {}),
        ("models_set", {"models": {"no.such_agent": "scripted:x.yaml"}}),
        ("harness_get", {"version": 99}),
    ])
    assert added.structured_content["created"] is True
    assert "lost-property-mcp" in [d["slug"] for d in listed.structured_content["documents"]]
    assert removed.structured_content == {
        "slug": "lost-property-mcp", "removed": True,
        "knowledge_version": added.structured_content["knowledge_version"] + 1}
    assert error_of(gone)["code"] == "not_found"
    assert set(models.structured_content) == {"models", "allowed"}
    assert error_of(bad_models)["code"] == "invalid"
    assert "models.no.such_agent: unknown agent" in bad_models.content[0].text
    assert error_of(unknown)["code"] == "not_found"


def test_the_catalogue_through_the_same_functions(server: AppServer, demo_db: Any) -> None:
    plan = {"type": "plan", "name": "Weekend", "membership": "weekend", "monthly_price": 25.0,
            "term_months": 1, "notice_months": 1, "booking_window_days": 7,
            "guest_passes_per_month": 0, "hours": "weekends", "perks": ["courts"]}
    plans, added, bad, removed = admin_calls(server, [
        ("catalogue_objects", {"type": "plan"}),
        ("catalogue_put", {"key": "weekend", "object": plan, "if_version": 0}),
        ("catalogue_put", {"key": "weekend", "object": {**plan, "monthly_price": -1}}),
        ("catalogue_remove", {"key": "weekend"}),
    ])
    assert {o["type"] for o in plans.structured_content["objects"]} == {"plan"}
    assert added.structured_content["created"] is True
    assert added.structured_content["object"]["version"] == 1
    assert error_of(bad)["code"] == "bad_input" and "monthly_price" in bad.content[0].text
    assert removed.structured_content["removed"] is True
    audit = demo_db["audit"].find({"tenant_id": "demo", "operation": {"$regex": "^catalogue"}})
    assert sorted(r["operation"] for r in audit) == ["catalogue.put", "catalogue.remove"]


def test_admins_get_the_user_tools_and_the_admin_tools(server: AppServer) -> None:
    async def listed(session: ClientSession) -> set[str]:
        return {tool.name for tool in (await session.list_tools()).tools}

    names = over_admin(server, bearer("admin", user="ada"), listed)
    admin = Principal("demo", "ada", frozenset({Role.ADMIN}), Channel.MCP)
    assert names == {*bound_reads(admin), "ask", *ADMIN_TOOLS}
    assert set(ADMIN_TOOLS) == {
        "harness_schema", "harness_get", "harness_set", "harness_validate", "harness_test",
        "harness_activate", "harness_rollback", "harness_versions", "answer_log",
        "documents_list", "documents_add", "documents_remove", "models_get", "models_set",
        "settings_get", "settings_set", "catalogue", "catalogue_objects", "catalogue_put",
        "catalogue_remove"}


@pytest.mark.parametrize("role", ["member", "staff", "manager"])
def test_everyone_but_an_admin_is_refused(server: AppServer, role: str) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}
    headers = {"Accept": "application/json, text/event-stream", **bearer(role)}
    with server.client() as http:
        response = http.post("/mcp/admin", json=initialize, headers=headers)
        assert response.status_code == 403, response.text
        assert response.json()["error"]["code"] == "forbidden"
        assert "admin MCP link needs the admin role" in response.json()["error"]["message"]
        forged = http.post("/mcp/admin", json=initialize, headers={
            **headers, "Authorization": bearer("admin")["Authorization"][:-4] + "AAAA"})
        assert forged.status_code == 401
