"""The server's log as an on-call engineer reads it: JSON lines (`OPSGRAPH_LOG_FORMAT=json`)
with the request's and the run's ids; one line per run with its outcome and figures, one
per model call; a request id that links the access line, the run line and the error line
of a failed run; and the run's metric points as embedded-metric lines."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.e2e.app_process import AppServer
from tests.e2e.flows import wait_for
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import opening_hours, task


def json_lines(server: AppServer) -> list[dict[str, Any]]:
    """Every line of the server's log that is a JSON object."""
    found = []
    for line in server.log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


def lines_of(server: AppServer, request_id: str) -> list[dict[str, Any]]:
    """The request's lines, once its access line is written (when its response ended,
    which the client may see a moment before)."""
    def found() -> list[dict[str, Any]] | None:
        mine = [d for d in json_lines(server) if d.get("request_id") == request_id]
        return mine if any(d.get("logger") == "opsgraph.access" or "path" in d
                           for d in mine) else None

    return wait_for(found)


JSON_LOGS = {"OPSGRAPH_LOG_FORMAT": "json", "OPSGRAPH_METRICS": "on"}


@pytest.mark.parametrize("server", [JSON_LOGS], indirect=True)
def test_a_runs_line_carries_its_ids_and_figures(server: AppServer,
                                                 http: httpx.Client) -> None:
    server.write_script(opening_hours())
    done = stream(http, "/v1/runs", {"message": "When do you open?"},
                  {**bearer("staff", user="ana"), "X-Request-Id": "req-hours-1"})
    assert done.finished["status"] == "completed"
    thread_id, run_id = done.of("run_started")[0]["thread_id"], done.of("run_started")[0][
        "run_id"]
    mine = lines_of(server, "req-hours-1")
    runs = [d for d in mine if d.get("outcome")]
    assert len(runs) == 1
    run = runs[0]
    assert (run["tenant_id"], run["user_id"], run["thread_id"], run["run_id"]) == (
        "demo", "ana", thread_id, run_id)
    assert run["outcome"] == "completed" and run["level"] == "INFO"
    assert run["model_calls"] == done.finished["usage"]["model_calls"] >= 3
    assert run["tasks"] == 1 and run["cards"] == 0 and run["seconds"] > 0
    calls = [d for d in mine if d.get("stage")]
    assert len(calls) == run["model_calls"]
    # a knowledge question is planned by code (no decompose call) and its agent's own
    # answer is passed on (no synthesis): every model call is the task's
    assert {c["stage"] for c in calls} == {"task"}
    assert all(c["run_id"] == run_id and c["model"].startswith("scripted:")
               and c["throttled"] is False and "ms" in c for c in calls)
    access = [d for d in mine if d.get("path") == "/v1/runs"]
    assert [(a["method"], a["status"]) for a in access] == [("POST", 200)]
    # the run's metric points: an EMF object in the opsgraph namespace, by outcome
    emf = [d for d in json_lines(server) if "_aws" in d and d.get("run_id") == run_id]
    assert len(emf) == 1 and emf[0]["Outcome"] == "completed" and emf[0]["Runs"] == [1.0]
    assert emf[0]["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "opsgraph"


@pytest.mark.parametrize("server", [JSON_LOGS], indirect=True)
def test_a_request_id_links_the_access_line_the_run_line_and_the_error_line(
        server: AppServer, http: httpx.Client) -> None:
    # the agent's script runs out after its first turn: the scripted model fails the run
    server.write_script({"plan": {"tasks": [task("t1", "knowledge", "search", "Find it")]},
                         "turns": {"t1": [{"tool_calls": [{"name": "knowledge_search",
                                                           "args": {"query": "hours"}}]}]},
                         "synthesis": "unused"})
    done = stream(http, "/v1/runs", {"message": "When do you open?"},
                  {**bearer("staff"), "X-Request-Id": "req-broken-1"})
    assert done.finished["status"] == "failed"
    run_id = done.of("run_started")[0]["run_id"]
    mine = lines_of(server, "req-broken-1")
    errors = [d for d in mine if d["level"] == "ERROR"]
    assert errors and all(e["run_id"] == run_id for e in errors)
    assert any("no turn left" in e["message"] for e in errors), errors
    run = [d for d in mine if d.get("outcome")]
    assert [(r["outcome"], r["run_id"]) for r in run] == [("failed", run_id)]
    assert [d["status"] for d in mine if d.get("path") == "/v1/runs"] == [200]


def test_text_is_the_local_default(server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    stream(http, "/v1/runs", {"message": "When do you open?"},
           {**bearer("staff"), "X-Request-Id": "req-text-1"})
    text = server.log.read_text(errors="replace")
    run = [line for line in text.splitlines() if "opsgraph.runs" in line]
    assert run and "run finished outcome=completed" in run[-1]
    assert "request_id=req-text-1" in run[-1]
    assert json_lines(server) == []  # no JSON log lines, and no metric lines either
