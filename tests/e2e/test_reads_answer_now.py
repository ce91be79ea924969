"""A read answered now, a change decided later: the paused run's answer says what was read,
the card waits, and the resumed run does not read again (docs/reference.md, "Reads answer
now; dependent changes wait")."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.app_process import AppServer
from tests.e2e.flows import decide
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import EMILY, call, task

READ_ANSWER = "Court 1 is free on Monday 7 January from 17:00 to 22:00."


def availability_and_phone() -> dict[str, Any]:
    """The README's quick-start request: a read and an unrelated write."""
    return {"plan": {"tasks": [
        task("t1", "bookings", "check", "Check Court 1's availability tomorrow evening"),
        task("t2", "members", "update", "Change Emily Chen's phone to +44 7700 900555")]},
        "turns": {
            "t1": [call("bookings_availability", resource="Court 1", date="2030-01-07"),
                   {"content": "Court 1 has free evening slots."}],
            "t2": [call("members_search", query="Emily Chen"),
                   call("members_update", member="Emily Chen",
                        changes={"phone": "+44 7700 900555"}),
                   {"content": "I proposed the phone change."}]},
        "synthesis": READ_ANSWER}


def test_the_paused_run_answers_its_reads_before_the_card_is_decided(
        server: AppServer, http: httpx.Client, demo_db: Any) -> None:
    server.write_script(availability_and_phone())
    run = stream(http, "/v1/runs", {"message": "Is court 1 free tomorrow evening, and update "
                                               "Emily Chen's phone"}, bearer("staff"))
    assert run.finished["status"] == "awaiting_approval", run.events
    [paused] = run.of("answer")
    [card] = run.of("approval_required")[0]["changes"]
    # the availability is in the answer of the run that waits, before it finishes
    assert paused["text"].startswith(READ_ANSWER), paused
    assert f"Waiting for approval: {card['summary']} (card {card['change_id']})." in paused["text"]
    assert run.names.index("answer") < run.names.index("run_finished")
    assert paused["read"] == READ_ANSWER and paused["waiting"] == [card["change_id"]]
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] != "+44 7700 900555"

    resumed = decide(http, card["change_id"], "approve")
    assert resumed.finished["status"] == "completed", resumed.events
    # the read task finished before the pause: it is not run again
    assert [t["task_id"] for t in resumed.of("task_started")] == ["t2"]
    [final] = resumed.of("answer")
    assert final["text"].startswith(READ_ANSWER) and "Done: " in final["text"]
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900555"
