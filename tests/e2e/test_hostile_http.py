"""A real server process against hostile or careless callers (issue 8, findings 1, 5, 6
and 11): bad bytes are a 4xx with a message that says what is wrong, never a 500 with a
traceback; internal words never reach a client; limits answer 413, 400 and 429; an
unknown tenant or thread is 404; a queue record over HTTP stays in the caller's tenant."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer, stream
from tests.e2e.scripts import call, opening_hours, task
from tests.e2e.test_http_api import assert_error

RAW_EMAIL = ("From: Emily Chen <emily.chen@example.org>\r\nSubject: hours\r\n"
             "Message-ID: <{id}@example.org>\r\n\r\nWhen do you open?\r\n")


def slow_hours(delay_ms: int = 4000) -> dict[str, Any]:
    """A read-only run whose last agent turn takes `delay_ms`: a run held in flight."""
    turns = [call("knowledge_search", query="opening hours"),
             {"content": "We open at 6am.", "delay_ms": delay_ms}]
    return {"plan": {"tasks": [task("t1", "knowledge", "search", "Find the opening hours")]},
            "turns": {"t1": turns}, "synthesis": "We open at 6am."}


def with_request_id(response: httpx.Response) -> str:
    """The error's request id, which is also the response's `X-Request-Id`."""
    request_id = response.json()["error"]["request_id"]
    assert request_id and response.headers["x-request-id"] == request_id
    return str(request_id)


def test_bad_bytes_are_4xx_with_a_clear_message_and_no_traceback(
        server: AppServer, http: httpx.Client) -> None:
    staff = bearer("staff")
    json_type = {"content-type": "application/json"}
    deep = "[" * 1000 + "]" * 1000
    cases: list[tuple[str, httpx.Response, int, str]] = [
        ("non-ASCII bearer token", http.get("/v1/agents", headers={
            "Authorization": "Bearer ñañá.ü.ö".encode()}), 401, "token"),
        ("body not UTF-8", http.post("/v1/runs", headers={**staff, **json_type},
                                     content=b'{"message": "caf\xe9"}'), 400, "UTF-8"),
        ("nested 1,000 deep", http.post("/v1/runs", headers={**staff, **json_type},
                                        content=f'{{"message": "hi", "x": {deep}}}'),
         400, "nested"),
        ("a 5,000-digit number", http.post(
            "/v1/operations/invoices.list", headers={**bearer("manager"), **json_type},
            content='{"args": {"status": ' + "9" * 5000 + "}}"), 400, "out of range"),
        ("a 400-digit float", http.post("/v1/runs", headers={**staff, **json_type},
                                        content='{"message": "hi", "n": 1' + "0" * 400
                                        + ".5}"), 400, "out of range"),
        ("NaN", http.post("/v1/runs", headers={**staff, **json_type},
                          content='{"message": "hi", "n": NaN}'), 400, "NaN"),
        ("a lone surrogate", http.post("/v1/runs", headers={**staff, **json_type},
                                       content='{"message": "hello \\ud800 there"}'),
         400, "surrogate"),
        ("availability on 9999-12-31", http.post(
            "/v1/operations/bookings.availability", headers=staff,
            json={"args": {"resource": "Court 1", "date": "9999-12-31"}}), 422, "date"),
        ("events from 9999-12-31", http.post(
            "/v1/operations/events.list", headers=staff,
            json={"args": {"from": "9999-12-31"}}), 422, "from"),
    ]
    failures = []
    for name, response, status, mentions in cases:
        try:
            assert_error(response, status, mentions=mentions)
            with_request_id(response)
        except (AssertionError, KeyError, ValueError) as exc:
            failures.append(f"{name}: {exc!r}")
    assert not failures, "\n".join(failures)
    assert "Traceback" not in server.log.read_text(errors="replace"), server.tail()


PLANNED_READ = "Find Jane Smith's phone number and her bookings this week"
"""A request the planner reads (two asks): a broken model fails the run."""
SINGLE_READ = "Find Jane Smith's phone number"
"""A single lookup, planned by code: its first model call is its agent's, inside a task,
whose failure fails the task (`task_failed`), not the run."""


@pytest.mark.parametrize(("message", "code", "status"), [
    (PLANNED_READ, "internal", "failed"), (SINGLE_READ, "task_failed", "completed_with_errors")])
def test_an_internal_fault_shows_its_request_id_not_its_words(
        server: AppServer, http: httpx.Client, message: str, code: str, status: str) -> None:
    server.script.write_bytes(b"\xff\xfe plan: [")  # a model file the server cannot read
    run = stream(http, "/v1/runs", {"message": message}, bearer("staff"))
    shown = json.dumps(run.error if run.status != 200 else run.events)
    assert "codec" not in shown and "0xff" not in shown and str(server.script) not in shown
    assert run.status == 200, run.error
    [error] = run.of("error")
    assert error["code"] == code and run.finished["status"] == status, run.events
    request_id = error["request_id"]
    assert request_id and (code != "internal" or request_id in error["message"])
    log = server.log.read_text(errors="replace")
    assert f"request {request_id}" in log and "codec" in log, server.tail()


def test_bodies_over_a_mebibyte_are_413(http: httpx.Client) -> None:
    big = {"message": "hi", "padding": "x" * (1 << 20)}
    declared = http.post("/v1/runs", json=big, headers=bearer("staff"))
    assert_error(declared, 413, mentions="bytes")
    with_request_id(declared)  # refused by the middleware, before any route: still an id
    assert_error(http.post("/v1/operations/members.search", json={"args": big},
                           headers=bearer("staff")), 413)

    def chunks() -> Any:  # no Content-Length: the server counts what arrives
        for _ in range(20):
            yield b"x" * 65536

    assert_error(http.post("/v1/runs", content=chunks(), headers=bearer("staff")), 413)


def test_a_message_over_8000_characters_is_400_before_any_model_call(
        server: AppServer, http: httpx.Client) -> None:
    # No model file is written: a model call would fail the run instead.
    response = http.post("/v1/runs", json={"message": "a" * 8001}, headers=bearer("staff"))
    assert_error(response, 400, mentions="8,000")


@pytest.mark.parametrize("server", [{"OPSGRAPH_USER_RUNS": "1", "OPSGRAPH_TENANT_RUNS": "1"}],
                         indirect=True)
def test_runs_in_flight_are_limited_per_user_and_per_tenant(server: AppServer,
                                                            http: httpx.Client) -> None:
    server.write_script(slow_hours())
    ask = {"message": "When do you open?"}
    with connect_sse(http, "POST", "/v1/runs", json=ask, headers=bearer("staff", user="ana")
                     ) as first:
        events = first.iter_sse()
        assert next(events).event == "run_started"
        again = http.post("/v1/runs", json=ask, headers=bearer("staff", user="ana"))
        assert_error(again, 429, mentions="runs in flight")
        assert int(again.headers["retry-after"]) > 0
        other = http.post("/v1/runs", json=ask, headers=bearer("staff", user="ben"))
        assert_error(other, 429, mentions="tenant")
        assert int(other.headers["retry-after"]) > 0
        acme = http.post("/v1/operations/members.search", json={"args": {"query": "x"}},
                         headers=bearer("staff", tenant="acme"))
        assert acme.status_code == 200  # operations are not runs
        assert [sse.event for sse in events][-1] == "run_finished"
    server.write_script(opening_hours())
    assert stream(http, "/v1/runs", ask, bearer("staff", user="ben")).finished[
        "status"] == "completed"


@pytest.mark.parametrize("server", [{"OPSGRAPH_TENANT_DAILY_MODEL_CALLS": "2"}],
                         indirect=True)
def test_a_tenants_daily_model_calls_are_a_budget(server: AppServer,
                                                  http: httpx.Client) -> None:
    server.write_script(opening_hours())
    ask = {"message": "When do you open?"}
    first = stream(http, "/v1/runs", ask, bearer("staff"))
    assert first.finished["status"] == "completed"
    assert first.finished["usage"]["model_calls"] >= 2
    spent = http.post("/v1/runs", json=ask, headers=bearer("staff", user="other"))
    assert_error(spent, 429, mentions="model calls")
    assert 0 < int(spent.headers["retry-after"]) <= 24 * 3600
    # another tenant has a budget of its own
    acme = stream(http, "/v1/runs", ask, bearer("staff", tenant="acme"))
    assert acme.status == 200, acme.error


def test_an_unknown_tenant_is_404_everywhere_and_gets_nothing_written(
        http: httpx.Client, demo_db: Any) -> None:
    ghost = {role: bearer(role, tenant="ghost") for role in ("staff", "manager", "admin")}
    record = {"messageId": "g1", "body": json.dumps(
        {"type": "inbound_email", "tenant": "ghost", "raw": RAW_EMAIL.format(id="g1")})}
    responses = {
        "agents": http.get("/v1/agents", headers=ghost["staff"]),
        "approvals": http.get("/v1/approvals", headers=ghost["manager"]),
        "decide": http.post("/v1/approvals/chg_x", json={"decision": "approve"},
                            headers=ghost["manager"]),
        "models": http.get("/v1/tenant/models", headers=ghost["admin"]),
        "set models": http.put("/v1/tenant/models", json={}, headers=ghost["admin"]),
        "operation": http.post("/v1/operations/members.update", headers=ghost["admin"], json={
            "args": {"member": "Jane Smith", "changes": {"phone": "+44 7700 900001"}}}),
        "run": http.post("/v1/runs", json={"message": "hi"}, headers=ghost["staff"]),
        "events": http.post("/events", json={"Records": [record]}, headers=ghost["admin"]),
        "visitor": http.get("/v1/agents", headers={"X-Opsgraph-Tenant": "ghost"}),
    }
    for name, response in responses.items():
        assert response.status_code == 404, (name, response.text)
        assert "ghost" in response.json()["error"]["message"], name
    written = {name: demo_db[name].count_documents({"tenant_id": "ghost"})
               for name in demo_db.list_collection_names()}
    assert not any(written.values()), written


def test_an_unknown_thread_is_404_and_a_run_without_one_starts_one(
        server: AppServer, http: httpx.Client) -> None:
    server.write_script(opening_hours())
    ask = {"message": "When do you open?"}
    missing = http.post("/v1/runs", json={**ask, "thread_id": "th_never_made"},
                        headers=bearer("staff"))
    assert_error(missing, 404, mentions="th_never_made")
    assert "omit thread_id" in missing.json()["error"]["message"]
    run = stream(http, "/v1/runs", ask, bearer("staff"))
    thread = run.finished["thread_id"]
    again = stream(http, "/v1/runs", {**ask, "thread_id": thread}, bearer("staff"))
    assert again.finished["status"] == "completed"
    # another user's thread does not exist for this caller
    assert_error(http.post("/v1/runs", json={**ask, "thread_id": thread},
                           headers=bearer("staff", user="someone-else")), 404)


def test_a_queue_record_over_http_names_only_the_callers_tenant(
        http: httpx.Client, demo_db: Any) -> None:
    record = {"messageId": "x1", "body": json.dumps(
        {"type": "inbound_email", "tenant": "demo", "raw": RAW_EMAIL.format(id="x1")})}
    refused = http.post("/events", json={"Records": [record]},
                        headers=bearer("admin", tenant="acme"))
    assert_error(refused, 403, mentions="'demo'")
    assert demo_db["inbox"].count_documents({"tenant_id": "demo", "subject": "hours"}) == 0
    assert demo_db["drafts"].count_documents({}) == 0


def test_a_record_whose_run_failed_is_retried_by_the_queue(http: httpx.Client,
                                                           demo_db: Any) -> None:
    # No model file: the run fails, so SQS must deliver the record again.
    record = {"messageId": "f1", "body": json.dumps(
        {"type": "inbound_email", "tenant": "demo", "raw": RAW_EMAIL.format(id="f1")})}
    reply = http.post("/events", json={"Records": [record]}, headers=bearer("admin"))
    assert reply.status_code == 200, reply.text
    assert reply.json()["batchItemFailures"] == [{"itemIdentifier": "f1"}]
    assert demo_db["drafts"].count_documents({}) == 0
