"""The same Agent Protocol flow from the JS `@langchain/langgraph-sdk` under node (pinned in
`tests/e2e/js/package.json`, installed by `make test` with `npm ci`): a read, a write that
pauses, its interrupt in `threads.getState` and `threads.search({status: "interrupted"})`,
a manager's resume that applies it once, and a second resume refused."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from opsgraph.auth import issue_token
from opsgraph.principal import Channel, Principal, Role
from tests.e2e.app_process import AppServer
from tests.e2e.flows import DECIDER, applies, change_doc
from tests.e2e.scripts import EMILY, opening_hours, phone_update

JS = Path(__file__).parent / "js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not (JS / "node_modules" / "@langchain" / "langgraph-sdk").is_dir(),
    reason="needs node and `npm ci --prefix tests/e2e/js` (make test runs it when npm is there)")


def key(role: str, user: str | None = None) -> str:
    return issue_token(Principal("demo", user or f"{role}-1", frozenset({Role(role)}),
                                 Channel.API))


def node(step: str, server: AppServer, api_key: str, *rest: str) -> dict[str, Any]:
    assert NODE is not None
    done = subprocess.run([NODE, str(JS / "flow.mjs"), step, server.url, api_key, *rest],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_the_js_client_reads_writes_and_resumes_once(server: AppServer, demo_db: Any) -> None:
    server.write_script(opening_hours())
    read = node("ask", server, key("staff"))
    assert read["parts"][0]["event"] == "metadata"
    assert read["parts"][0]["data"]["thread_id"] == read["thread_id"]
    tokens = [p["data"][0]["content"] for p in read["parts"] if p["event"] == "messages"]
    assert "".join(tokens).strip() == "We open at 6am on weekdays."
    final = [p["data"] for p in read["parts"] if p["event"] == "values"][-1]
    assert [m["type"] for m in final["messages"]] == ["human", "ai"]

    server.write_script(phone_update("+44 7700 900999"))
    write = node("ask", server, key("staff"))
    thread_id = write["thread_id"]
    [interrupt] = [p["data"] for p in write["parts"] if p["event"] == "values"][-1][
        "__interrupt__"]
    seen = node("state", server, key("manager", DECIDER), thread_id)
    assert [i["id"] for i in seen["state"]["interrupts"]] == [interrupt["id"]]
    assert seen["state"]["interrupts"][0]["value"][0]["config"]["allow_edit"] is True
    assert seen["interrupted"] == [thread_id]

    resumed = node("resume", server, key("manager", DECIDER), thread_id)
    assert "error" not in resumed, resumed
    finished = [p["data"]["data"] for p in resumed["parts"]
                if p["event"] == "custom" and p["data"]["event"] == "run_finished"]
    assert finished[-1]["status"] == "completed"
    assert demo_db["members"].find_one({"_id": EMILY})["phone"] == "+44 7700 900999"
    again = node("resume", server, key("manager", DECIDER), thread_id)
    assert again["error"]["status"] == 409, again
    assert applies(demo_db, interrupt["change_id"]) == 1
    assert change_doc(demo_db, interrupt["change_id"])["status"] == "applied"
