"""The MCP links as the 2025-06-18 specification expects them, through the official `mcp`
SDK client: tool annotations from each tool's kind, output schemas the SDK checks every
structured result against, `serverInfo.version`, and a 401 whose `WWW-Authenticate` leads
to the protected-resource metadata (RFC 9728) naming how to get a token."""

from __future__ import annotations

from typing import Any

from mcp.client.auth.utils import extract_resource_metadata_from_www_auth
from mcp.client.session import ClientSession
from mcp.shared.auth import ProtectedResourceMetadata

from opsgraph import __version__
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.test_mcp_user import over_mcp

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


async def _tools_and_calls(session: ClientSession) -> dict[str, Any]:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    # the SDK checks each structured result against the tool's output schema (raises if not)
    search = await session.call_tool("members_search", {"query": "Emily Chen"})
    hours = await session.call_tool("knowledge_outline", {})
    return {"tools": tools, "search": search, "outline": hours}


def test_tools_carry_annotations_and_output_schemas_the_client_checks(
        server: AppServer) -> None:
    seen = over_mcp(server, bearer("staff"), _tools_and_calls)
    tools = seen["tools"]
    reads = [t for name, t in tools.items() if name != "ask"]
    assert reads and all(t.annotations is not None and t.annotations.read_only_hint
                         and t.annotations.destructive_hint is False
                         and t.annotations.idempotent_hint
                         and t.annotations.open_world_hint is False for t in reads)
    assert all(t.output_schema and t.output_schema["required"] == ["ok"] for t in reads)
    ask = tools["ask"]
    assert ask.annotations is not None and ask.annotations.read_only_hint is False
    assert ask.annotations.destructive_hint is False  # it proposes; a manager applies
    assert ask.output_schema and "pending_changes" in ask.output_schema["properties"]
    assert seen["search"].is_error is False
    assert seen["search"].structured_content["ok"] is True
    assert "Emily Chen" in str(seen["search"].structured_content["data"])


def test_server_info_names_the_package_version(server: AppServer) -> None:
    async def info(session: ClientSession) -> Any:
        return session.initialize_result

    for link, headers in (("user", {}), ("admin", bearer("admin"))):
        result = over_mcp(server, headers, info, link=link)
        assert result is not None and result.server_info.version == __version__, link
        assert result.server_info.name == f"opsgraph-{link}"


def test_admin_tools_say_which_replace_tenant_state(server: AppServer) -> None:
    async def listed(session: ClientSession) -> dict[str, Any]:
        return {t.name: t.annotations for t in (await session.list_tools()).tools}

    hints = over_mcp(server, bearer("admin"), listed, link="admin")
    assert hints["harness_get"].read_only_hint is True
    assert hints["harness_activate"].read_only_hint is False
    assert hints["harness_activate"].destructive_hint is True
    assert hints["harness_set"].destructive_hint is False
    assert hints["documents_remove"].destructive_hint is True


def test_a_401_leads_to_the_protected_resource_metadata(server: AppServer) -> None:
    with server.client() as http:
        for link, headers in (("user", {"Authorization": "Bearer nope"}),
                              ("admin", {}),
                              ("admin", {"Authorization": "Bearer nope"})):
            refused = http.post(f"/mcp/{link}", json=INITIALIZE, headers={**ACCEPT, **headers})
            assert refused.status_code == 401, (link, refused.text)
            where = extract_resource_metadata_from_www_auth(refused)
            assert where == f"{server.url}/.well-known/oauth-protected-resource/mcp/{link}"
            document = http.get(where)
            assert document.status_code == 200
            metadata = ProtectedResourceMetadata.model_validate(document.json())
            assert str(metadata.resource) == f"{server.url}/mcp/{link}"
            assert metadata.bearer_methods_supported == ["header"]
            assert "opsgraph token" in document.json()["token_instructions"]
        root = http.get("/.well-known/oauth-protected-resource").json()
        assert root["resource"] == f"{server.url}/mcp/user"
        assert http.get("/.well-known/oauth-protected-resource/v1/runs").status_code == 404
        # a visitor is welcome on the user link: no 401 there without a token
        assert http.post("/mcp/user", json=INITIALIZE, headers=ACCEPT).status_code == 200


def test_an_admin_agent_runs_the_tenants_settings_and_reads_its_catalogue(
        server: AppServer, demo_db: Any) -> None:
    async def run(session: ClientSession) -> dict[str, Any]:
        return {
            "before": await session.call_tool("settings_get", {}),
            "set": await session.call_tool("settings_set", {
                "capability_mode": "enforce", "off_topic_reply": "Ask us about the club."}),
            "force": await session.call_tool("settings_set", {
                "capability_mode": "observe", "harness_agent_may_force": True}),
            "catalogue": await session.call_tool("catalogue", {}),
        }

    seen = over_mcp(server, bearer("admin", user="ada"), run, link="admin")
    assert seen["before"].structured_content["capability_mode"] == "observe"
    assert {k: v for k, v in seen["set"].structured_content.items() if k != "choices"} == {
        "capability_mode": "enforce", "off_topic_reply": "Ask us about the club.",
        "modules": [], "harness_agent_may_force": False,
        "separation_of_duties": ["invoices.refund", "invoices.issue"], "currency": "GBP"}
    assert "invoices.refund" in seen["set"].structured_content["choices"]["operations"]
    assert seen["force"].is_error  # an agent may not let itself force activations
    assert "harness_agent_may_force" in seen["force"].content[0].text
    tenant = demo_db["tenants"].find_one({"_id": "demo"})
    assert tenant["capability_mode"] == "enforce"
    assert tenant.get("harness_agent_may_force") is not True
    agents = seen["catalogue"].structured_content["agents"]
    assert {"members.update", "knowledge.opening_hours"} <= {a["name"] for a in agents}
