"""The read-only channel on every write surface of a real server process (issue 18,
finding 2): a token of channel `email` — even an admin's — changes nothing, over HTTP or
over `/mcp/admin`. The walk takes every write route of the route table (checked against
`/openapi.json`) and every admin MCP tool, so a new one is walked as soon as it exists:
each is refused with 403 `read_only` (or, for the two routes whose gate sits deeper, its
write is refused there), and the store is byte for byte what it was."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from starlette.routing import Route

from opsgraph.api.app import ROUTES
from opsgraph.api.mcp_admin import ADMIN_TOOLS
from opsgraph.api.read_only import GATED_BELOW, WRITE_METHODS
from opsgraph.principal import Channel
from tests.e2e.app_process import AppServer
from tests.e2e.flows import big_paid_invoice
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import refund
from tests.e2e.test_mcp_admin import HARNESS, over_admin


def email_admin() -> dict[str, str]:
    """An admin's token on the read-only channel (signed with this test's secret)."""
    return bearer("admin", user="ada", channel=Channel.EMAIL)


RUN_LOG = frozenset({"thread_events", "threads", "runs", "checkpoints", "checkpoint_writes",
                     "thread_leases", "model_budget", "answer_log"})
"""What a read-only run may leave behind: the record of the run itself, no tenant data."""
PATH_VALUES = {"slug": "booking-policy", "change_id": "chg_x", "op_id": "members.update",
               "thread_id": "th_x", "run_id": "run_x", "draft_id": "drf_x", "key": "weekend",
               "version": "1"}
BODIES: dict[str, Any] = {
    "/v1/tenant/models": {"models": {}},
    "/v1/tenant/settings": {"capability_mode": "enforce"},
    "/v1/knowledge/documents/{slug}": {"body": "# Booking policy\n\nAll gone.\n"},
    "/v1/approvals/{change_id}": {"decision": "approve"},
    "/v1/local/sign-in": {"user_id": "stf_demo_01", "role": "admin"},
    "/events": {"job": "expire_approvals"},
}
TOOL_ARGS: dict[str, dict[str, Any]] = {
    "harness_schema": {}, "harness_get": {}, "harness_set": {"doc": HARNESS},
    "harness_validate": {"doc": HARNESS}, "harness_test": {}, "harness_activate": {"version": 0},
    "harness_rollback": {}, "harness_versions": {}, "answer_log": {}, "documents_list": {},
    "documents_add": {"slug": "lockers", "body": "# Lockers\n\nEmptied nightly.\n"},
    "documents_remove": {"slug": "booking-policy"}, "models_get": {}, "models_set": {"models": {}},
    "settings_get": {}, "settings_set": {"capability_mode": "enforce"}, "catalogue": {},
    "catalogue_objects": {}, "catalogue_remove": {"key": "weekend"},
    "catalogue_put": {"key": "weekend", "object": {
        "type": "plan", "name": "Weekend", "membership": "weekend", "monthly_price": 25.0,
        "term_months": 1, "notice_months": 1, "booking_window_days": 7,
        "guest_passes_per_month": 0, "hours": "weekends", "perks": ["courts"]}},
}


def snapshot(db: Any, skip: frozenset[str] = frozenset()) -> dict[str, list[str]]:
    """Every document of every collection, as text, in a stable order."""
    return {name: sorted(repr(sorted(doc.items())) for doc in db[name].find())
            for name in sorted(db.list_collection_names()) if name not in skip}


def write_routes() -> set[tuple[str, str]]:
    """(method, path) of every route of the table that serves a write method."""
    return {(method, route.path) for route in ROUTES if isinstance(route, Route)
            for method in (route.methods or set()) & WRITE_METHODS}


def test_every_write_route_refuses_a_read_only_admin_and_writes_nothing(
        http: httpx.Client, demo_db: Any) -> None:
    documented = {(method.upper(), path)
                  for path, ops in http.get("/openapi.json").json()["paths"].items()
                  for method in ops if method.upper() in WRITE_METHODS}
    assert write_routes() == documented  # the walk below misses no route
    before = snapshot(demo_db)
    walked = []
    for method, path in sorted(write_routes()):
        if path in GATED_BELOW:
            continue
        url = path.format(**PATH_VALUES)
        response = http.request(method, url, json=BODIES.get(path, {}), headers=email_admin())
        assert response.status_code == 403, (method, path, response.text)
        error = response.json()["error"]
        assert error["code"] == "read_only" and "read-only" in error["message"], error
        walked.append(f"{method} {path}")
    print(f"\nrefused to a read-only admin: {', '.join(walked)}")
    assert walked and snapshot(demo_db) == before


def test_the_routes_gated_deeper_keep_a_read_only_caller_to_reads(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    assert frozenset({"/v1/runs", "/v1/operations/{op_id}"}) <= GATED_BELOW
    invoice = big_paid_invoice(demo_db)
    server.write_script(refund(invoice["number"], 100.0))
    before = snapshot(demo_db, skip=RUN_LOG)
    write = http.post("/v1/operations/members.update", headers=email_admin(), json={
        "args": {"member": "Jane Smith", "changes": {"phone": "+44 7700 900001"}}})
    assert write.status_code == 403 and "read-only" in write.json()["error"]["message"]
    read = http.post("/v1/operations/members.search", headers=email_admin(),
                     json={"args": {"query": "Jane"}})
    assert read.status_code == 200, read.text  # reads go through
    run = stream(http, "/v1/runs", {"message": f"Refund 100 on {invoice['number']}"},
                 email_admin())
    assert run.finished["status"] != "awaiting_approval", run.events
    assert not run.of("approval_required")
    assert snapshot(demo_db, skip=RUN_LOG) == before  # no card, no refund, nothing else


def test_every_admin_tool_that_writes_is_refused_to_a_read_only_admin(
        server: AppServer, demo_db: Any) -> None:
    assert set(TOOL_ARGS) == set(ADMIN_TOOLS), "give every admin tool arguments here"
    before = snapshot(demo_db)

    async def body(session: ClientSession) -> dict[str, Any]:
        return {name: await session.call_tool(name, TOOL_ARGS[name]) for name in ADMIN_TOOLS}

    results = over_admin(server, email_admin(), body)
    refused = sorted(n for n, r in results.items()
                     if r.is_error and r.structured_content["error"]["code"] == "read_only")
    print(f"\nadmin tools refused to a read-only admin: {', '.join(refused)}")
    assert refused == sorted(n for n, tool in ADMIN_TOOLS.items() if tool.writes)
    for name in ADMIN_TOOLS.keys() - set(refused):
        assert not results[name].is_error, (name, results[name].content)
    assert snapshot(demo_db) == before


@pytest.mark.parametrize("role", ["admin"])
def test_the_same_admin_on_the_dashboard_channel_still_writes(
        http: httpx.Client, demo_db: Any, role: str) -> None:
    changed = http.put("/v1/tenant/settings", json={"capability_mode": "enforce"},
                       headers=bearer(role))
    assert changed.status_code == 200, changed.text
    assert demo_db["tenants"].find_one({"_id": "demo"})["capability_mode"] == "enforce"


def test_the_token_as_x_api_key_is_as_read_only(http: httpx.Client, demo_db: Any) -> None:
    # the Agent Protocol's clients send the token as X-Api-Key: the same refusal
    token = email_admin()["Authorization"].removeprefix("Bearer ")
    before = snapshot(demo_db)
    response = http.put("/v1/tenant/settings", json={"capability_mode": "enforce"},
                        headers={"X-Api-Key": token})
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "read_only"
    assert snapshot(demo_db) == before
