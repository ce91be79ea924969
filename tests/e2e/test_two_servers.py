"""Two server processes on one store, as two Lambda instances over one MongoDB: a user's
and a tenant's runs in flight are counted across both (429 past the limit, whichever
process answers), the daily model-call budget is one figure for both, and the run slots
of a process killed mid-run are reclaimed once their lease lapses."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from httpx_sse import ServerSentEvent, connect_sse

from opsgraph.store.run_slots import RUN_SLOTS_COLLECTION
from tests.e2e.app_process import AppServer, server_env, share_cache
from tests.e2e.flows import wait_for
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import opening_hours
from tests.e2e.test_hostile_http import slow_hours
from tests.e2e.test_http_api import assert_error

ASK = {"message": "When do you open?"}


def two_servers(store_env: dict[str, str], tmp_path: Path, ranker_cache: Path,
                extra: dict[str, str]) -> list[AppServer]:
    """Two app processes on the test's database, reading one scripted model file."""
    share_cache(Path(store_env["OPSGRAPH_HOME"]), ranker_cache)
    script = tmp_path / "model.yaml"
    env = {**server_env(store_env, script), **extra}
    return [AppServer(env, script, tmp_path / f"server-{n}.log") for n in "ab"]


@pytest.fixture
def pair(request: pytest.FixtureRequest, demo_db: Any, store_env: dict[str, str],
         tmp_path: Path, ranker_cache: Path) -> Iterator[list[AppServer]]:
    servers = two_servers(store_env, tmp_path, ranker_cache, dict(request.param))
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


def started(stack: ExitStack, server: AppServer, user: str) -> Iterator[ServerSentEvent]:
    """A run of `user` on `server`, held open once its `run_started` has arrived; the rest
    of its events."""
    client = stack.enter_context(server.client())
    source = stack.enter_context(connect_sse(client, "POST", "/v1/runs", json=ASK,
                                             headers=bearer("staff", user=user)))
    assert source.response.status_code == 200, source.response.read()
    events = source.iter_sse()
    assert next(events).event == "run_started"
    return events


def finish(events: Iterator[ServerSentEvent]) -> str:
    """Read a held run to its end; its last event's name."""
    return [sse.event for sse in events if sse.data][-1]


def refused(server: AppServer, user: str, mentions: str) -> None:
    with server.client() as client:
        response = client.post("/v1/runs", json=ASK, headers=bearer("staff", user=user))
    assert_error(response, 429, mentions=mentions)
    assert int(response.headers["retry-after"]) > 0


@pytest.mark.parametrize("pair", [{"OPSGRAPH_USER_RUNS": "2", "OPSGRAPH_TENANT_RUNS": "3",
                                   "OPSGRAPH_TENANT_DAILY_MODEL_CALLS": "1000"}],
                         indirect=True)
def test_runs_in_flight_and_the_daily_budget_hold_across_two_servers(
        pair: list[AppServer], demo_db: Any) -> None:
    a, b = pair
    # the runs' last turns take 30 s: they are still in flight while the test asks for more
    # (a first run on a fresh server also loads the graph and the ranker)
    a.write_script(slow_hours(delay_ms=30_000))
    with ExitStack() as stack:
        held = [started(stack, a, "ana"), started(stack, b, "ana")]
        # ana's two runs are one on each server: a third is refused by either
        refused(a, "ana", "you have 2 runs in flight")
        refused(b, "ana", "you have 2 runs in flight")
        held.append(started(stack, a, "ben"))  # the tenant's third run
        refused(b, "cal", "tenant 'demo' has 3 runs in flight")
        refused(a, "cal", "tenant 'demo' has 3 runs in flight")
        assert [finish(source) for source in held] == ["run_finished"] * 3
    # every slot was given back before its run's `run_finished` went out
    assert demo_db[RUN_SLOTS_COLLECTION].count_documents({}) == 0
    a.write_script(opening_hours())
    with b.client() as client:
        assert stream(client, "/v1/runs", ASK, bearer("staff", user="cal")).finished[
            "status"] == "completed"

    # the day's budget is one figure for both: one call short of it, a run on one server
    # spends it, and the other server refuses the next run
    day = datetime.now(UTC).date().isoformat()
    demo_db["model_budget"].update_one({"_id": f"demo:{day}"},
                                       {"$set": {"model_calls": 999}})
    with a.client() as client:
        assert stream(client, "/v1/runs", ASK, bearer("staff", user="ana")).finished[
            "status"] == "completed"
    refused(b, "ben", "model calls")
    refused(a, "ben", "model calls")


@pytest.mark.parametrize("pair", [{"OPSGRAPH_USER_RUNS": "2",
                                   "OPSGRAPH_RUN_SLOT_LEASE_S": "2"}], indirect=True)
def test_a_killed_servers_run_slots_are_reclaimed_when_their_lease_lapses(
        pair: list[AppServer], demo_db: Any) -> None:
    a, b = pair
    a.write_script(slow_hours(delay_ms=60_000))
    with ExitStack() as stack:
        started(stack, a, "ana")
        started(stack, a, "ana")
        refused(b, "ana", "you have 2 runs in flight")
        a.kill()  # no cleanup: the slots stay in the store, renewed by nobody
    dead = {doc["owner"] for doc in demo_db[RUN_SLOTS_COLLECTION].find(
        {"slot": {"$in": ["user:ana:0", "user:ana:1"]}})}
    assert len(dead) == 2
    a.write_script(opening_hours())

    def run_on_b() -> str | None:
        with b.client() as client:
            answer = stream(client, "/v1/runs", ASK, bearer("staff", user="ana"))
        if answer.status == 429:
            return None
        return str(answer.finished["status"])

    assert wait_for(run_on_b, timeout_s=60) == "completed"
    # the run on b took one of the dead process's lapsed slots and gave it back; the
    # other still names the dead owner, lapsed (swept by the TTL index within the hour)
    left = list(demo_db[RUN_SLOTS_COLLECTION].find(
        {"slot": {"$in": ["user:ana:0", "user:ana:1"]}}))
    assert len(left) == 1 and left[0]["owner"] in dead
