"""The mangum entry (`opsgraph.api.lambda_handler.handler`, the image's `mangum` target):
cheap keep-warm, HTTP through mangum, AWS's events trusted, no heavy imports. Events are the
fixtures of tests/deploy/events, shaped as AWS documents them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from opsgraph.api.lambda_handler import handler
from tests.deploy.events import KNOWLEDGE_SCRIPT, event, message_ids, sqs_batch, with_token


@pytest.fixture(autouse=True)
def main_thread_loop() -> Iterator[None]:
    """An event loop set for the main thread, as a fresh Lambda process has: mangum asks
    `asyncio.get_event_loop()`, which fails once an earlier test in the same worker ran
    `asyncio.run` (it leaves the main thread with no loop set)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        asyncio.set_event_loop(None)
        loop.close()


@pytest.mark.parametrize("entry", ["opsgraph.api.lambda_handler", "opsgraph.api.lambda_web"])
def test_importing_an_entry_pulls_in_nothing_heavy(entry: str) -> None:
    code = (f"import sys, {entry}; "
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


def test_function_url_payloads_go_through_the_app(demo_db: object) -> None:
    from opsgraph.auth import issue_token
    from opsgraph.principal import Principal, Role

    health = handler(event("function_url_get_health"), None)
    assert health["statusCode"] == 200 and json.loads(health["body"]) == {"ok": True}
    token = issue_token(Principal("demo", "sam", frozenset({Role.STAFF})))
    # A base64 body, cookies and a bearer token, as a function URL delivers them.
    found = handler(with_token(event("function_url_post_operation"), token), None)
    assert found["statusCode"] == 200, found
    assert "Jane Smith" in json.dumps(json.loads(found["body"]))
    refused = handler(event("function_url_post_operation"), None)  # "Bearer TOKEN" as sent
    assert refused["statusCode"] == 401


def test_api_gateway_rest_payloads_go_through_the_app(demo_db: object) -> None:
    reply = handler(event("api_gateway_rest_get_agents"), None)
    assert reply["statusCode"] == 200
    assert len(json.loads(reply["body"])["agents"]) == 3  # acme's visitor agents


def test_schedule_payloads_are_trusted_jobs(demo_db: object) -> None:
    assert handler(event("schedule_keep_warm"), None) == {"ok": True, "warm": True}
    for name in ("schedule_expire_approvals", "eventbridge_scheduled_expire_approvals"):
        reply = handler(event(name), None)
        assert reply["ok"] is True and reply["job"] == "expire_approvals", reply


def test_queue_records_ingest_email_and_report_failures_one_by_one(
        demo_db: object, script: object, monkeypatch: pytest.MonkeyPatch) -> None:
    model = script(KNOWLEDGE_SCRIPT)  # type: ignore[operator]
    monkeypatch.setenv("OPSGRAPH_MODEL", model)
    monkeypatch.setenv("OPSGRAPH_LIGHT_MODEL", model)  # whichever tier the agent is on
    from opsgraph.settings import get_settings

    get_settings.cache_clear()
    batch = sqs_batch("acme")  # AWS's own events may name any tenant
    reply = handler(batch, None)
    assert reply["ok"] is True
    assert [p["status"] for p in reply["processed"]] == ["completed"]
    assert reply["batchItemFailures"] == [{"itemIdentifier": message_ids(batch)[1]}]


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
        assert ran.status_code == 200 and ran.json()["job"] == "expire_approvals"


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
