"""The HTTP surface of a real server process: health, the agent catalogue per caller, JSON
errors with the right status (a body that is not a JSON object is 400, an object with wrong
fields is 422 in one shape) and direct operations. The tenant's model per agent:
test_tenant_models.py."""

from __future__ import annotations

from typing import Any

import httpx

from opsgraph.auth import issue_token
from opsgraph.principal import Principal, Role
from opsgraph.registry.loader import get_registry
from tests.e2e.http_client import bearer, headers_for
from tests.e2e.scripts import EMILY


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
        ("no message", http.post("/v1/runs", json={}, headers=staff), 422,
         "message: field required"),
        ("blank message", http.post("/v1/runs", json={"message": "  "}, headers=staff), 422,
         "message: must not be blank"),
        ("message not a string", http.post("/v1/runs", json={"message": 3}, headers=staff),
         422, "message: input should be a valid string"),
        ("an unknown field", http.post("/v1/runs", json={"message": "hi", "thread": "t"},
                                       headers=staff), 422, "thread: extra inputs"),
        ("a malformed thread_id", http.post("/v1/runs", headers=staff, json={
            "message": "hi", "thread_id": "../x"}), 422, "thread_id"),
        ("unknown route", http.get("/v1/nothing-here", headers=staff), 404, ""),
        ("wrong method", http.get("/v1/runs", headers=staff), 405, ""),
        ("unknown operation", http.post("/v1/operations/members.teleport",
                                        json={"args": {}}, headers=staff), 404, "operation"),
        ("args not an object", http.post("/v1/operations/members.get",
                                         json={"args": [1]}, headers=staff), 422, "args"),
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
                                       headers=bearer("manager")), 422,
         "decision: input should be 'approve', 'edit', 'revise' or 'reject'"),
        ("no decision", http.post("/v1/approvals/chg_nope", json={},
                                  headers=bearer("manager")), 422, "decision"),
        ("values not an object", http.post("/v1/approvals/chg_nope", headers=bearer("manager"),
                                           json={"decision": "edit", "values": [1]}), 422,
         "values"),
        ("unknown status", http.get("/v1/approvals?status=maybe", headers=bearer("manager")),
         400, "status"),
        ("bad override body", http.put("/v1/tenant/models", json={"members.update": 7},
                                       headers=bearer("admin")), 422,
         "models.members.update: input should be a valid string"),
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


def test_a_body_with_wrong_fields_is_one_422_listing_each(http: httpx.Client) -> None:
    response = http.post("/v1/runs", headers=bearer("staff"),
                         json={"message": "", "thread_id": 7, "mood": "grumpy"})
    assert_error(response, 422)
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["request_id"] == response.headers[
        "x-request-id"]
    assert error["errors"] == [
        {"field": "message", "message": "string should have at least 1 character"},
        {"field": "thread_id", "message": "input should be a valid string"},
        {"field": "mood", "message": "extra inputs are not permitted"}]
    assert error["message"] == "; ".join(f"{e['field']}: {e['message']}"
                                         for e in error["errors"])
    # an operation's own arguments fail in the same shape
    args = http.post("/v1/operations/members.update", headers=bearer("staff"), json={
        "args": {"member": EMILY, "changes": {"email": "not-an-email"}}}).json()["error"]
    assert args["code"] == "invalid" and args["errors"][0]["field"] == "changes.email"
