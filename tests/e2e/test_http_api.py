"""The HTTP surface of a real server process: health, the agent catalogue per caller, JSON
errors with the right status, direct operations and the tenant's model overrides."""

from __future__ import annotations

from typing import Any

import httpx

from opsgraph.auth import issue_token
from opsgraph.principal import Principal, Role
from opsgraph.registry.loader import get_registry
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer, headers_for, stream
from tests.e2e.scripts import EMILY, call, task


def agent_names(http: httpx.Client, headers: dict[str, str]) -> set[str]:
    response = http.get("/v1/agents", headers=headers)
    assert response.status_code == 200, response.text
    return {row["name"] for row in response.json()["agents"]}


def assert_error(response: httpx.Response, status: int, *, mentions: str = "") -> None:
    """A JSON `{"error": {"code", "message"}}` with `status`; the message names `mentions`."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert isinstance(error["code"], str) and error["code"]
    assert mentions in error["message"], error["message"]


def test_health_and_the_agents_each_caller_may_use(http: httpx.Client) -> None:
    health = http.get("/health")
    assert health.status_code == 200 and health.json() == {"ok": True}

    registry = get_registry().agents
    visitor_agents = {name for name, spec in registry.items() if spec.visitor}
    assert len(visitor_agents) == 4

    basic_features = {"core", "bookings", "members", "knowledge"}
    assert agent_names(http, {}) == visitor_agents
    assert agent_names(http, {"X-Opsgraph-Tenant": "acme"}) == {
        name for name in visitor_agents if registry[name].entitlement in basic_features}

    staff = agent_names(http, bearer("staff"))
    assert "members.update" in staff and "bookings.create" in staff
    assert "invoices.refund" not in staff  # managers and admins only
    assert not any(name.startswith("reports.") for name in staff)  # demo is on pro, not enterprise
    assert "invoices.refund" in agent_names(http, bearer("manager"))

    basic = agent_names(http, bearer("staff", tenant="acme"))
    assert basic and all(registry[name].entitlement in basic_features for name in basic)
    assert "members.update" in basic and "invoices.issue" not in basic
    assert basic < staff


def test_bad_input_gets_a_json_error_never_a_500(http: httpx.Client) -> None:
    staff = bearer("staff")
    expired = issue_token(Principal("demo", "sam", frozenset({Role.MANAGER})), ttl_s=-60)
    forged = bearer("admin")["Authorization"][:-4] + "AAAA"
    cases: list[tuple[str, httpx.Response, int, str]] = [
        *((f"bad token {token!r}", http.get("/v1/agents", headers={"Authorization": token}),
           401, "") for token in ("Bearer garbage", "Bearer a.b", "Bearer Zm9v.YmFy", forged,
                                  "Basic eDp5", "Bearer")),
        ("expired token", http.get("/v1/approvals", headers={"Authorization": f"Bearer {expired}"}),
         401, "expired"),
        ("bad JSON", http.post("/v1/runs", content=b"{not json", headers=staff), 400, "body"),
        ("not an object", http.post("/v1/runs", json=["hi"], headers=staff), 400, "body"),
        ("no message", http.post("/v1/runs", json={}, headers=staff), 400, "message"),
        ("blank message", http.post("/v1/runs", json={"message": "  "}, headers=staff), 400,
         "message"),
        ("message not a string", http.post("/v1/runs", json={"message": 3}, headers=staff),
         400, "message"),
        ("unknown route", http.get("/v1/nothing-here", headers=staff), 404, ""),
        ("wrong method", http.get("/v1/runs", headers=staff), 405, ""),
        ("unknown operation", http.post("/v1/operations/members.teleport",
                                        json={"args": {}}, headers=staff), 404, "operation"),
        ("args not an object", http.post("/v1/operations/members.get",
                                         json={"args": [1]}, headers=staff), 400, "args"),
        ("invalid args", http.post("/v1/operations/members.update", headers=staff, json={
            "args": {"member": EMILY, "changes": {"email": "not-an-email"}}}), 422,
         "changes.email"),
        ("missing arg", http.post("/v1/operations/members.get", json={"args": {}},
                                  headers=staff), 422, "member"),
        ("visitor writes", http.post("/v1/operations/members.update", json={
            "args": {"member": EMILY, "changes": {"phone": "1"}}}), 403, ""),
        ("unknown change", http.post("/v1/approvals/chg_nope", json={"decision": "approve"},
                                     headers=bearer("manager")), 404, "chg_nope"),
        ("unknown decision", http.post("/v1/approvals/chg_nope", json={"decision": "maybe"},
                                       headers=bearer("manager")), 400, "decision"),
        ("no decision", http.post("/v1/approvals/chg_nope", json={},
                                  headers=bearer("manager")), 400, "decision"),
        ("values not an object", http.post("/v1/approvals/chg_nope", headers=bearer("manager"),
                                           json={"decision": "edit", "values": [1]}), 400,
         "values"),
        ("unknown status", http.get("/v1/approvals?status=maybe", headers=bearer("manager")),
         400, "status"),
        ("bad override body", http.put("/v1/tenant/models", json={"members.update": 7},
                                       headers=bearer("admin")), 400, "members.update"),
    ]
    failures = []
    for name, response, status, mentions in cases:
        try:
            assert_error(response, status, mentions=mentions)
        except AssertionError as exc:
            failures.append(f"{name}: {exc}")
    assert not failures, "\n".join(failures)


def test_staff_operation_applies_at_once(http: httpx.Client, demo_db: Any) -> None:
    body = {"args": {"member": "Emily Chen", "changes": {"phone": "+44 7700 900555"}}}
    response = http.post("/v1/operations/members.update", json=body, headers=bearer("staff"))
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["applied"] is True
    assert result["old"] == {"phone": "+44 7700 900788"}
    assert result["new"] == {"phone": "+44 7700 900555"}
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900555"
    audit = demo_db["audit"].find_one({"change_id": result["change_id"]})
    assert audit["to"] == "applied" and audit["actor"] == "staff-1"

    read = http.post("/v1/operations/members.get", json={"args": {"member": EMILY}},
                     headers=bearer("staff"))
    assert read.status_code == 200
    assert read.json()["result"]["phone"] == "+44 7700 900555"
    assert {"kind": "member", "id": EMILY, "title": "Emily Chen"} in read.json()["sources"]


def test_refused_operations_change_nothing(http: httpx.Client, demo_db: Any) -> None:
    write = {"args": {"member": EMILY, "changes": {"phone": "+44 7700 900556"}}}
    # The operation's roles: neither a visitor nor a member may update a member record.
    for role in (None, "member"):
        response = http.post("/v1/operations/members.update", json=write,
                             headers=headers_for(role, user=EMILY))
        assert_error(response, 403)
    # Another tenant's record, by id or by name, is not found in the caller's tenant.
    acme_staff = bearer("staff", tenant="acme")
    for member in (EMILY, "Emily Chen"):
        body = {"args": {"member": member, "changes": {"phone": "+1 555 0100"}}}
        assert_error(http.post("/v1/operations/members.update", json=body,
                               headers=acme_staff), 404)
    assert_error(http.post("/v1/operations/members.get", json={"args": {"member": EMILY}},
                           headers=acme_staff), 404)
    # The tenant's plan: events are on demo's plan (pro), not on acme's (basic).
    assert http.post("/v1/operations/events.list", json={"args": {}}).status_code == 200
    assert_error(http.post("/v1/operations/events.list", json={"args": {}},
                           headers={"X-Opsgraph-Tenant": "acme"}), 403)
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900788"
    assert demo_db["audit"].count_documents({}) == 0


def test_model_overrides_are_for_admins_and_change_the_model(server: AppServer,
                                                             http: httpx.Client) -> None:
    for role in ("manager", "staff", None):
        assert_error(http.get("/v1/tenant/models", headers=headers_for(role)), 403)
    assert_error(http.put("/v1/tenant/models", json={}, headers=bearer("manager")), 403)
    admin = bearer("admin")
    assert http.get("/v1/tenant/models", headers=admin).json() == {"models": {}}
    assert_error(http.put("/v1/tenant/models", json={"members.teleport": "scripted:x.yaml"},
                          headers=admin), 400, mentions="members.teleport")

    # Default model: the lookup reads Emily Chen; the override's file reads Raj Mehta.
    server.write_script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up a member")]},
        "turns": {"t1": [call("members_get", member="Emily Chen"), {"content": "Found."}]},
        "synthesis": "Here is the member."})
    override = server.script.with_name("override.yaml")
    override.write_text(
        "turns:\n  t1:\n    - tool_calls: [{name: members_get, args: {member: Raj Mehta}}]\n"
        "    - content: Found.\n")
    models = {"members.lookup": f"scripted:{override}"}
    put = http.put("/v1/tenant/models", json=models, headers=admin)
    assert put.status_code == 200 and put.json() == {"models": models}
    assert http.get("/v1/tenant/models", headers=admin).json() == {"models": models}
    assert http.get("/v1/tenant/models", headers=bearer("admin", tenant="acme")).json() == {
        "models": {}}

    run = stream(http, "/v1/runs", {"message": "look up the member"}, bearer("staff"))
    assert run.finished["status"] == "completed"
    [answer] = run.of("answer")
    assert [s["title"] for s in answer["sources"]] == ["Raj Mehta"]
