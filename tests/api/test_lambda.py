"""The Lambda entry point: cheap keep-warm, HTTP through mangum, no heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from opsgraph.api.lambda_handler import handler


def test_importing_the_handler_pulls_in_nothing_heavy() -> None:
    code = ("import sys, opsgraph.api.lambda_handler; "
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('langgraph', 'langchain_aws', 'langchain_core', 'boto3', 'onnxruntime')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_keep_warm_answers_without_a_store() -> None:
    assert handler({"keep_warm": True}, None) == {"ok": True, "warm": True}


def test_unknown_events_get_a_clear_error() -> None:
    reply = handler({"what": "is this"}, None)
    assert reply["ok"] is False and reply["error"]["code"] == "bad_input"
    assert "keep-warm, job or queue" in reply["error"]["message"]


def test_http_events_go_through_the_app() -> None:
    event = {
        "version": "2.0", "routeKey": "$default", "rawPath": "/health", "rawQueryString": "",
        "headers": {"host": "example.lambda-url.aws"},
        "requestContext": {"http": {"method": "GET", "path": "/health", "sourceIp": "1.2.3.4",
                                    "protocol": "HTTP/1.1", "userAgent": "test"},
                           "domainName": "example.lambda-url.aws", "stage": "$default"},
        "isBase64Encoded": False,
    }
    reply = handler(event, None)
    assert reply["statusCode"] == 200 and json.loads(reply["body"]) == {"ok": True}


def test_queue_records_ingest_email_and_report_failures_one_by_one(
        demo_db: object, script: object, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = {"tasks": [{"id": "t1", "domain": "knowledge", "operation": "search",
                       "instruction": "Opening hours", "depends_on": []}]}
    turns = [{"tool_calls": [{"name": "knowledge_search", "args": {"query": "opening hours"}}]},
             {"content": "6am."}]  # an agent answers from what it read
    model = script({"plan": plan, "turns": {"t1": turns},  # type: ignore[operator]
                    "synthesis": "We open at 6am."})
    monkeypatch.setenv("OPSGRAPH_MODEL", model)
    monkeypatch.setenv("OPSGRAPH_LIGHT_MODEL", model)  # whichever tier the agent is on
    from opsgraph.settings import get_settings

    get_settings.cache_clear()
    raw = ("From: Emily Chen <emily.chen@example.org>\r\nSubject: hours\r\n"
           "Message-ID: <q-1@example.org>\r\n\r\nWhen do you open?\r\n")
    good = {"messageId": "m1", "body": json.dumps({"type": "inbound_email", "tenant": "demo",
                                                   "raw": raw})}
    bad = {"messageId": "m2", "body": "{not json"}
    reply = handler({"Records": [good, bad]}, None)
    assert reply["ok"] is True
    assert [p["status"] for p in reply["processed"]] == ["completed"]
    assert reply["batchItemFailures"] == [{"itemIdentifier": "m2"}]


def test_jobs_over_http_need_an_admin(demo_db: object) -> None:
    from starlette.testclient import TestClient

    from opsgraph.api.app import app
    from opsgraph.auth import issue_token
    from opsgraph.principal import Principal, Role

    with TestClient(app) as client:
        assert client.post("/events", json={"keep_warm": True}).json()["warm"] is True
        refused = client.post("/events", json={"job": "expire_approvals"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
        admin = issue_token(Principal("demo", "root", frozenset({Role.ADMIN})))
        ran = client.post("/events", json={"job": "expire_approvals"},
                          headers={"Authorization": f"Bearer {admin}"})
        assert ran.status_code == 200 and ran.json()["expired"] == 0


def test_visitors_name_an_existing_tenant(demo_db: object) -> None:
    from starlette.testclient import TestClient

    from opsgraph.api.app import app

    with TestClient(app) as client:
        assert len(client.get("/v1/agents", headers={"X-Opsgraph-Tenant": "acme"})
                   .json()["agents"]) == 3
        missing = client.get("/v1/agents", headers={"X-Opsgraph-Tenant": "nowhere"})
        assert missing.status_code == 404 and "nowhere" in missing.json()["error"]["message"]
        bad = client.get("/v1/agents", headers={"X-Opsgraph-Tenant": "a:b"})
        assert bad.status_code == 400
