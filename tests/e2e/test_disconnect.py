"""A client that hangs up mid-stream does not abandon the run it started."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.flows import DECIDER, change_doc, propose, wait_for
from tests.e2e.http_client import headers_for
from tests.e2e.scripts import phone_update


def test_a_decision_whose_client_hangs_up_still_resumes_the_run(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    # The resumed run's last turn takes 1.5 s; the client reads one event and leaves.
    _, card = propose(server, http, phone_update("+44 7700 900777", final_delay_ms=1500))
    cid = card["change_id"]
    headers = headers_for("manager", "demo", user=DECIDER)
    with http.stream("POST", f"/v1/approvals/{cid}", json={"decision": "approve"},
                     headers={**headers, "Accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        first = next(response.iter_lines())
        assert first.startswith("id:") or first.startswith("event:")
    resumed_at = wait_for(lambda: change_doc(demo_db, cid).get("resumed_at"), timeout_s=30)
    assert resumed_at is not None
    assert change_doc(demo_db, cid)["status"] == "applied"
    member = demo_db["members"].find_one({"_id": "mem_demo_008"})
    assert member["phone"] == "+44 7700 900777"
    # The thread moved past its pause: its requester's next message is accepted.
    thread = change_doc(demo_db, cid)["thread_id"]
    server.write_script({"plan": {"tasks": [{"id": "t1", "domain": "knowledge",
                                             "operation": "search", "instruction": "hours",
                                             "depends_on": []}]},
                         "turns": {"t1": [{"content": "We open at 7am on weekdays."}]},
                         "synthesis": "We open at 7am on weekdays."})
    reply = http.post("/v1/runs", json={"message": "thanks", "thread_id": thread},
                      headers=headers_for("staff", "demo"))
    assert reply.status_code == 200, reply.text
    assert "run_finished" in reply.text and '"completed"' in reply.text
