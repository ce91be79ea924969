"""Every entry that starts a run (`POST /v1/runs`, MCP `ask`, the Agent Protocol's
`POST /threads/{id}/runs`, `POST /ag-ui`) takes a run slot, and gives it back when the run
never starts: a demo script that fails to load leaves the caller's one slot free, so the
next run is not refused with 429."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from opsgraph.api import mcp_user
from opsgraph.api.app import create_app
from opsgraph.api.limits import RUN_SLOTS
from opsgraph.models import demo
from opsgraph.principal import Channel, Principal, Role
from opsgraph.settings import get_settings
from opsgraph.store.run_slots import RUN_SLOTS_COLLECTION
from tests.e2e.http_client import bearer

STAFF = Principal("demo", "stf_demo_04", frozenset({Role.STAFF}), Channel.DASHBOARD)


def staff() -> dict[str, str]:
    return bearer("staff", user=STAFF.user_id)


class ScriptBroke(RuntimeError):
    """What the patched demo `script_for` raises: a fault before the run starts."""


@pytest.fixture
def http(demo_db: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("OPSGRAPH_USER_RUNS", "1")
    get_settings.cache_clear()

    def broken(principal: Principal, message: str) -> str | None:
        raise ScriptBroke("the demo script could not be written")

    monkeypatch.setattr(demo, "script_for", broken)
    with TestClient(create_app(check_registry=False), raise_server_exceptions=False) as client:
        yield client


def _v1_runs(http: TestClient) -> int:
    return http.post("/v1/runs", json={"message": "When do you open?"},
                     headers=staff()).status_code


def _protocol_run(http: TestClient) -> int:
    thread = http.post("/threads", json={"thread_id": "th_admission01",
                                             "if_exists": "do_nothing"}, headers=staff())
    assert thread.status_code == 200, thread.text
    return http.post("/threads/th_admission01/runs", headers=staff(), json={
        "assistant_id": "opsgraph",
        "input": {"messages": [{"type": "human", "content": "When do you open?"}]}},
    ).status_code


def _agui_run(http: TestClient) -> int:
    return http.post("/ag-ui", headers=staff(), json={
        "threadId": "th_admission02", "runId": "run-1", "state": {}, "tools": [],
        "context": [], "forwardedProps": {},
        "messages": [{"id": "m1", "role": "user", "content": "When do you open?"}],
    }).status_code


def _mcp_ask(http: TestClient) -> int:
    try:
        mcp_user.ask(STAFF, "When do you open?", None)
    except ScriptBroke:
        return 500
    raise AssertionError("ask ran although its script broke")


@pytest.mark.parametrize("start", [_v1_runs, _protocol_run, _agui_run, _mcp_ask],
                         ids=["v1-runs", "agent-protocol", "ag-ui", "mcp-ask"])
def test_a_run_that_never_starts_gives_its_slot_back(
        http: TestClient, demo_db: Any, start: Callable[[TestClient], int]) -> None:
    assert start(http) == 500
    # the one slot (OPSGRAPH_USER_RUNS=1) is free again: the same fault, not a 429
    assert start(http) == 500
    assert (STAFF.tenant_id, STAFF.user_id) not in RUN_SLOTS._held
    assert demo_db[RUN_SLOTS_COLLECTION].count_documents({}) == 0


def test_every_entry_refuses_a_message_over_the_cap_before_a_slot(
        http: TestClient, demo_db: Any) -> None:
    # start_run checks the cap for every entry (the Agent Protocol's message reader no
    # longer checks it itself); nothing is taken, nothing is run
    from opsgraph.api.limits import MAX_MESSAGE_CHARS
    from opsgraph.errors import BadInput

    long = "x" * (MAX_MESSAGE_CHARS + 1)
    thread = http.post("/threads", json={"thread_id": "th_admission03",
                                             "if_exists": "do_nothing"}, headers=staff())
    assert thread.status_code == 200, thread.text
    answer = http.post("/threads/th_admission03/runs", headers=staff(), json={
        "assistant_id": "opsgraph", "input": {"messages": [{"type": "human", "content": long}]}})
    assert answer.status_code == 400 and "the limit is" in answer.text, answer.text
    assert http.post("/v1/runs", json={"message": long}, headers=staff()).status_code == 400
    with pytest.raises(BadInput, match="the limit is"):
        mcp_user.ask(STAFF, long, None)
    assert demo_db[RUN_SLOTS_COLLECTION].count_documents({}) == 0
