"""Conversation memory: a thread remembers, compacts past 20 messages, and expires."""

from __future__ import annotations

from typing import Any

import pytest

from opsgraph.engine.memory import COMPACT_AFTER, KEEP_VERBATIM, add_history, render_history
from tests.engine.helpers import chat, finished, person
from tests.engine.test_supervisor import task


def turns(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"Message {i}. More."}
            for i in range(n)]


def test_history_is_kept_verbatim_up_to_the_limit() -> None:
    assert add_history(turns(10), turns(10)) == turns(10) + turns(10)


def test_older_turns_fold_into_one_summary_and_the_latest_ten_stay() -> None:
    merged = add_history(turns(COMPACT_AFTER), turns(2))
    assert len(merged) == KEEP_VERBATIM + 1
    assert merged[0]["role"] == "summary"
    assert "user: Message 0." in merged[0]["content"] and "More" not in merged[0]["content"]
    assert merged[1:] == (turns(COMPACT_AFTER) + turns(2))[-KEEP_VERBATIM:]
    # a second compaction keeps the earlier summary inside the new one
    again = add_history(merged, turns(12))
    assert again[0]["role"] == "summary" and "Message 0." in again[0]["content"]
    assert "Earlier in this conversation" in render_history(again)


@pytest.mark.usefixtures("demo_db")
def test_a_thread_remembers_its_earlier_turns(script: Any) -> None:
    from opsgraph.engine.graph import get_graph
    from opsgraph.engine.runner import graph_thread_id

    model = script({"plan": {"tasks": [task("t1", "knowledge", "search", "Opening hours")]},
                    "turns": {"t1": [{"content": "We open at 7am on weekdays."}]},
                    "synthesis": "We open at 7am on weekdays."})
    staff = person("staff")
    assert finished(chat(staff, "when do you open?", model, thread="th-mem"))["status"] == \
        "completed"
    assert finished(chat(staff, "and on sundays?", model, thread="th-mem"))["status"] == \
        "completed"
    state = get_graph().get_state({"configurable": {"thread_id": graph_thread_id(staff,
                                                                                 "th-mem")}})
    assert [t["content"] for t in state.values["history"]] == [
        "when do you open?", "We open at 7am on weekdays.", "and on sundays?",
        "We open at 7am on weekdays."]


@pytest.mark.usefixtures("demo_db")
def test_checkpoints_expire_after_thirty_days(demo_db: Any) -> None:
    from opsgraph.engine.graph import CHECKPOINT_TTL_S, get_graph

    get_graph()
    ttls = [ix.get("expireAfterSeconds") for ix in
            demo_db["checkpoints"].list_indexes()]
    assert CHECKPOINT_TTL_S == 30 * 24 * 3600 and CHECKPOINT_TTL_S in ttls
