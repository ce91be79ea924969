"""A run killed mid-way (SIGKILL after it recorded a proposal, as a Lambda timeout does)
on a real server process (issue 18, finding 4): once its thread lease lapses, the thread
is listed `failed`, its event stream ends with the `run_finished {status: failed}` stored
for it (a follower — the dashboard — stops waiting), and its requester continues it with
`POST /v1/runs` (it was listed `running` for ever, and continuing it was 404)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.app_process import AppServer
from tests.e2e.flows import PROPOSER, wait_for
from tests.e2e.http_client import follow, headers_for, stream
from tests.e2e.scripts import opening_hours
from tests.e2e.test_orphaned_changes import KILLED_AFTER_PROPOSING, killed_while_proposing


def listed(http: httpx.Client, thread_id: str) -> dict[str, Any]:
    rows = http.get("/v1/threads", headers=headers_for("manager", user=PROPOSER))
    assert rows.status_code == 200, rows.text
    [row] = [r for r in rows.json() if r["thread_id"] == thread_id]
    return dict(row)


@pytest.mark.parametrize("server", [KILLED_AFTER_PROPOSING], indirect=True)
def test_a_killed_run_is_failed_its_stream_ends_and_its_thread_goes_on(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    _, change_id = killed_while_proposing(server, demo_db)
    thread_id = demo_db["pending_changes"].find_one({"_id": change_id})["thread_id"]
    mine = headers_for("manager", user=PROPOSER)

    # running while the dead run's lease lasts (3 s here), failed once it lapsed
    def settled() -> dict[str, Any] | None:
        row = listed(http, thread_id)
        return row if row["status"] != "running" else None

    row = wait_for(settled)
    print(f"\nkilled run listed as: {row['status']}")
    assert row["status"] == "failed"

    followed = follow(http, thread_id, mine)
    assert followed.finished == {"thread_id": thread_id, "status": "failed",
                                 "interrupted": True}
    [error] = followed.of("error")
    assert error["code"] == "interrupted" and "send the message again" in error["message"]
    assert follow(http, thread_id, mine, last_event_id=followed.events[-1][0]).events == []
    settled = [e for e in followed.events if e[1] == "run_finished"]
    assert len(settled) == 1  # settled once, however many readers looked

    server.write_script(opening_hours())
    again = stream(http, "/v1/runs", {"message": "When do you open?", "thread_id": thread_id},
                   mine)
    assert again.status == 200, again.error
    assert again.finished["status"] == "completed"
    assert listed(http, thread_id)["status"] == "completed"
    detail = http.get(f"/v1/threads/{thread_id}", headers=mine).json()
    assert detail["status"] == "completed" and detail["messages"][-1]["role"] == "assistant"
