"""`/mcp/user` of a real server process, through the official MCP client over HTTP: the
tools an external agent sees are the built-in agents' tools for the same principal (names,
input schemas, results, refusals), `ask` runs the supervisor, and a bad token is 401.

The agents' side is computed here, in-process, on the same database the server uses: the
agents' binding of the read operations the gates allow (every read tool a registry agent
holds is among them; an operation no agent holds yet, such as a new knowledge tool, is
still offered over MCP, bound the same way)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from opsgraph.gates import operation_decision
from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import CATALOGUE
from opsgraph.operations.invoke import plan_of
from opsgraph.principal import Channel, Principal, Role
from opsgraph.registry.loader import get_registry
from opsgraph.store.scope import TenantScope
from opsgraph.tools.binding import bind_agent_tools
from opsgraph.tools.contract import BoundTool
from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer
from tests.e2e.scripts import call, opening_hours, phone_update, task

T = TypeVar("T")


def over_mcp(server: AppServer, headers: dict[str, str],
             body: Callable[[ClientSession], Awaitable[T]], link: str = "user") -> T:
    """Connect to `/mcp/<link>` with `headers`, initialize, and run `body` on the session."""

    async def go() -> T:
        async with (create_mcp_http_client(headers=headers) as client,
                    streamable_http_client(f"{server.url}/mcp/{link}",
                                           http_client=client) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            return await body(session)

    return anyio.run(go)


def principal(role: Role) -> Principal:
    """Whom `bearer(role)` names, as the MCP link sees them (channel `mcp`)."""
    return Principal("demo", f"{role.value}-1", frozenset({role}), Channel.MCP)


def context(who: Principal) -> Context:
    return Context(TenantScope.of(who), who)


def bound_reads(who: Principal) -> dict[str, BoundTool]:
    """The agents' binding (`bind_agent_tools`) of every read operation of the catalogue
    that the gates let `who` call: what an agent holding those tools is handed."""
    ctx = context(who)
    plan = plan_of(ctx.scope)
    reads = [op.id for op in CATALOGUE.values()
             if op.kind == "read" and operation_decision(who, op, plan)]
    return bind_agent_tools(ctx, reads, plan)


def agents_reads(who: Principal) -> set[str]:
    """The read tools the built-in agents of the registry are bound with for `who`, over
    every agent, that the gates let `who` call."""
    ctx = context(who)
    plan = plan_of(ctx.scope)
    return {name for agent in get_registry().agents.values()
            for name, tool in bind_agent_tools(ctx, agent.tools, plan).items()
            if tool.kind == "read" and operation_decision(who, tool.operation, plan)}


def agent_call(who: Principal, tool_name: str, args: dict[str, Any]) -> str:
    """What an agent's model reads back from calling `tool_name` as `who` (bound as the
    agents bind it, whether or not `who` may call it)."""
    ctx = context(who)
    [tool] = bind_agent_tools(ctx, [tool_name.replace("_", ".", 1)], plan_of(ctx.scope)).values()
    return tool.call(args).for_model()


async def listed(session: ClientSession) -> dict[str, Any]:
    return {tool.name: tool for tool in (await session.list_tools()).tools}


def test_tools_are_the_agents_tools_with_the_same_schemas_results_and_refusals(
        server: AppServer) -> None:
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    availability = {"resource": "Court 1", "date": tomorrow}
    search = {"query": "Emily Chen"}

    for role in (Role.STAFF, Role.MEMBER):
        who = principal(role)
        expected = bound_reads(who)

        async def session_body(session: ClientSession) -> tuple[dict[str, Any], Any, Any]:
            tools = await listed(session)
            avail = await session.call_tool("bookings_availability", availability)
            found = await session.call_tool("members_search", search)
            return tools, avail, found

        tools, avail, found = over_mcp(server, bearer(role.value), session_body)
        assert set(tools) == {*expected, "ask"}, (role, sorted(tools))
        assert agents_reads(who) <= set(tools), (role, agents_reads(who) - set(tools))
        for name, tool in expected.items():
            schema = tool.schema()
            assert tools[name].input_schema == schema["parameters"], (role, name)
            assert tools[name].description == schema["description"], (role, name)

        assert not avail.is_error, avail.content
        assert avail.content[0].text == agent_call(who, "bookings_availability", availability)
        assert avail.structured_content["ok"] is True

        # a member may not search members: the MCP refusal is the agents' guard's, word
        # for word, and it is an error, not data
        assert found.content[0].text == agent_call(who, "members_search", search)
        if role is Role.STAFF:
            assert "members_search" in tools and not found.is_error
            assert found.structured_content["data"], "Emily Chen not found"
        else:
            assert "members_search" not in tools and found.is_error
            assert found.structured_content == {
                "ok": False, "error": "members.search needs one of: manager, staff"}


def test_visitors_get_the_visitor_tools_writes_are_not_tools_and_a_bad_token_is_401(
        server: AppServer) -> None:
    tools = over_mcp(server, {}, listed)
    visitor = Principal.visitor("demo", Channel.MCP)
    assert set(tools) == {*bound_reads(visitor), "ask"}
    assert agents_reads(visitor) <= set(tools)
    assert "bookings_availability" in tools and "members_search" not in tools

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}
    async def refused(session: ClientSession) -> list[Any]:
        return [await session.call_tool(name, args) for name, args in (
            ("members_update", {"member": "Emily Chen", "changes": {"phone": "+44 1"}}),
            ("members_frobnicate", {}))]

    write, unknown = over_mcp(server, bearer("manager"), refused)
    assert write.is_error and "use 'ask'" in write.content[0].text, write.content
    assert unknown.is_error and "no operation 'members_frobnicate'" in unknown.content[0].text

    forged = bearer("staff")["Authorization"][:-4] + "AAAA"
    with server.client() as http:
        for header in (forged, "Bearer nope", "Basic abc"):
            response = http.post("/mcp/user", json=initialize, headers={
                "Authorization": header, "Accept": "application/json, text/event-stream"})
            assert response.status_code == 401, (header, response.text)
            assert response.json()["error"]["code"] == "unauthorized"
        gone = http.post("/mcp/user", json=initialize, headers={
            **bearer("staff", tenant="no_such_tenant"),
            "Accept": "application/json, text/event-stream"})
        assert gone.status_code == 404, gone.text


def test_ask_answers_with_sources_and_a_write_waits_for_a_manager(
        server: AppServer, demo_db: Any) -> None:
    async def ask(session: ClientSession) -> Any:
        return await session.call_tool("ask", {"message": "Please see to it."})

    server.write_script(opening_hours())
    answered = over_mcp(server, bearer("staff"), ask)
    assert not answered.is_error, answered.content
    out = answered.structured_content
    assert out["status"] == "completed", out
    assert out["answer"] == "We open at 6am on weekdays."
    assert out["pending_changes"] == [] and out["thread_id"].startswith("th_")

    async def follow_up(session: ClientSession) -> Any:
        return await session.call_tool("ask", {"message": "And on Sundays?",
                                               "thread_id": out["thread_id"]})

    again = over_mcp(server, bearer("staff"), follow_up).structured_content
    assert again["thread_id"] == out["thread_id"] and again["status"] == "completed", again
    with server.client() as http:
        thread = http.get(f"/v1/threads/{out['thread_id']}", headers=bearer("staff")).json()
    assert [m["content"] for m in thread["messages"] if m["role"] == "user"] == [
        "Please see to it.", "And on Sundays?"]
    # someone else's thread is not theirs to continue, over MCP as over HTTP
    theirs = over_mcp(server, bearer("staff", user="someone-else"), follow_up)
    assert theirs.is_error and f"thread {out['thread_id']} not found" in theirs.content[0].text

    server.write_script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen")]},
        "turns": {"t1": [call("members_get", member="Emily Chen"),
                         {"content": "Emily Chen is a member."}]},
        "synthesis": "Emily Chen is a member."})
    read = over_mcp(server, bearer("staff"), ask).structured_content
    assert read["status"] == "completed" and read["answer"] == "Emily Chen is a member.", read
    assert {"kind": "member", "id": "mem_demo_008"} in [
        {"kind": s["kind"], "id": s["id"]} for s in read["sources"]], read["sources"]

    server.write_script(phone_update("+44 7700 900999"))
    waiting = over_mcp(server, bearer("staff"), ask).structured_content
    assert waiting["status"] == "awaiting_approval", waiting
    [change] = waiting["pending_changes"]
    assert change["operation"] == "members.update" and change["change_id"].startswith("chg_")
    stored = demo_db["pending_changes"].find_one({"_id": change["change_id"]})
    assert stored is not None and stored["status"] == "pending"
    member = demo_db["members"].find_one({"_id": "mem_demo_008"})
    assert member is not None and member.get("phone") != "+44 7700 900999"

    # the gates of chat hold for ask: a member may not change a member record, and a token
    # of the read-only email channel stays read-only over MCP
    for headers, why in ((bearer("member"), "members.update needs one of"),
                         (bearer("staff", channel=Channel.EMAIL),
                          "the email channel is read-only")):
        refused = over_mcp(server, headers, ask).structured_content
        assert refused["pending_changes"] == [], refused
        assert refused["answer"].startswith("Not allowed") and why in refused["answer"], refused
    assert demo_db["pending_changes"].count_documents({}) == 1
