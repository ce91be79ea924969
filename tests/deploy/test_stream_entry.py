"""The image's primary command, as a real process: the Dockerfile's default stage's
ENTRYPOINT and environment (uvicorn behind where the Lambda Web Adapter would be), on the
port the adapter forwards to (`AWS_LWA_PORT`). A run streams over SSE through it; the
adapter's pass-through requests (a scheduled event, an SQS batch: `x-amzn-request-context:
null`, as the adapter sends them) are trusted; the same body from a caller is not."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from opsgraph.store.embedded import free_port
from tests.deploy.dockerfile import default_stage
from tests.deploy.events import KNOWLEDGE_SCRIPT, event, message_ids, sqs_batch
from tests.e2e.http_client import bearer, stream

START_TIMEOUT_S = 60.0
IMAGE_ONLY = ("PYTHONPATH", "OPSGRAPH_AGENTS", "OPSGRAPH_HOME", "OPSGRAPH_MODELS")
"""Image paths (/var/task, /tmp): here the checkout's installed package, the test's home and
the machine's derived models."""
# What the adapter puts in x-amzn-request-context: JSON null for a pass-through event, the
# request context (an object) for a function-URL request.
PASS_THROUGH = {"x-amzn-request-context": "null"}
FROM_A_CALLER = {"x-amzn-request-context": json.dumps(
    event("function_url_get_health")["requestContext"])}


def _command(port: int) -> tuple[list[str], dict[str, str]]:
    stage = default_stage()
    command = [*stage.entrypoint, *stage.cmd]
    assert command[0].startswith("python"), command
    env = {k: v for k, v in stage.env.items() if k not in IMAGE_ONLY}
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream"
    return [sys.executable, *command[1:]], {**env, "AWS_LWA_PORT": str(port)}


@pytest.fixture
def entry(demo_db: Any, store_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The primary command running on the test's seeded store; yields its base URL."""
    script = tmp_path / "model.yaml"
    script.write_text(yaml.safe_dump(KNOWLEDGE_SCRIPT, sort_keys=False))
    port = free_port()
    command, image_env = _command(port)
    spec = f"scripted:{script}"
    env = {**store_env, **image_env, "OPSGRAPH_MODEL": spec, "OPSGRAPH_LIGHT_MODEL": spec}
    log = tmp_path / "entry.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # what the adapter's readiness check does
            assert proc.poll() is None, log.read_text(errors="replace")
            try:
                if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def test_a_run_streams_over_sse_through_the_primary_command(entry: str) -> None:
    with httpx.Client(base_url=entry, timeout=60.0) as client:
        run = stream(client, "/v1/runs", {"message": "When do you open?"}, bearer("staff"))
    assert run.names[0] == "run_started" and "plan" in run.names
    assert run.finished["status"] == "completed"
    assert run.of("answer")[0]["text"]


def test_pass_through_events_are_trusted(entry: str) -> None:
    with httpx.Client(base_url=entry, timeout=60.0) as client:
        warm = client.post("/events", json=event("schedule_keep_warm"), headers=PASS_THROUGH)
        assert warm.json() == {"ok": True, "warm": True}
        for name in ("schedule_expire_approvals", "eventbridge_scheduled_expire_approvals"):
            job = client.post("/events", json=event(name), headers=PASS_THROUGH)
            assert job.status_code == 200 and job.json()["job"] == "expire_approvals", job.text
        batch = sqs_batch("acme")  # an AWS event may name any tenant
        queue = client.post("/events", json=batch, headers=PASS_THROUGH)
    assert queue.status_code == 200, queue.text
    assert [p["status"] for p in queue.json()["processed"]] == ["completed"]
    assert queue.json()["batchItemFailures"] == [{"itemIdentifier": message_ids(batch)[1]}]


@pytest.mark.parametrize(("context", "role"), [
    pytest.param({}, None, id="no-request-context"),
    pytest.param(FROM_A_CALLER, None, id="function-url-request"),
    pytest.param(FROM_A_CALLER, "staff", id="function-url-request-not-admin"),
])
def test_the_same_events_from_a_caller_keep_the_http_rules(
        entry: str, context: dict[str, str], role: str | None) -> None:
    headers = {**context, **(bearer(role) if role else {})}
    with httpx.Client(base_url=entry, timeout=60.0) as client:
        warm = client.post("/events", json=event("schedule_keep_warm"), headers=headers)
        assert warm.json() == {"ok": True, "warm": True}  # keep-warm stays open
        for body in (event("schedule_expire_approvals"), sqs_batch("acme")):
            refused = client.post("/events", json=body, headers=headers)
            assert refused.status_code == 403, refused.text


def test_an_admin_caller_names_only_their_own_tenant(entry: str) -> None:
    admin = {**FROM_A_CALLER, **bearer("admin")}  # an admin of demo
    with httpx.Client(base_url=entry, timeout=60.0) as client:
        other = client.post("/events", json=sqs_batch("acme"), headers=admin)
        assert other.status_code == 403 and "acme" in other.json()["error"]["message"]
        own = client.post("/events", json=event("schedule_expire_approvals"), headers=admin)
        assert own.status_code == 200 and own.json()["job"] == "expire_approvals"


def test_a_request_context_header_is_trusted_only_alone_and_null(entry: str) -> None:
    twice = [("x-amzn-request-context", "null"),
             ("x-amzn-request-context", FROM_A_CALLER["x-amzn-request-context"])]
    with httpx.Client(base_url=entry, timeout=60.0) as client:
        doubled = client.post("/events", json=event("schedule_expire_approvals"),
                              headers=httpx.Headers(twice))
        not_null = client.post("/events", json=event("schedule_expire_approvals"),
                               headers={"x-amzn-request-context": "{}"})
    assert doubled.status_code == 403 and not_null.status_code == 403  # a visitor


def test_the_entry_reads_the_adapters_settings_as_the_adapter_does() -> None:
    from opsgraph.api.lambda_web import adapter_port, check_pass_through_path
    from opsgraph.errors import ConfigurationError

    assert adapter_port({}) == 8080
    assert adapter_port({"PORT": "7000"}) == 7000
    assert adapter_port({"AWS_LWA_PORT": "9000", "PORT": "7000"}) == 9000
    with pytest.raises(ConfigurationError, match="AWS_LWA_PORT"):
        adapter_port({"AWS_LWA_PORT": "http"})
    check_pass_through_path({"AWS_LWA_PASS_THROUGH_PATH": "/events"})
    with pytest.raises(ConfigurationError, match="AWS_LWA_PASS_THROUGH_PATH"):
        check_pass_through_path({"AWS_LWA_PASS_THROUGH_PATH": "/lambda"})


def test_an_aws_event_is_bounded_by_lambdas_payload_not_by_the_callers_cap(entry: str) -> None:
    # An SQS batch of large e-mails is over a caller's 1 MiB but within Lambda's 6 MB: it
    # must reach the router (a 413 would send it back to the queue, then to the DLQ).
    padded = {**event("schedule_keep_warm"), "padding": "x" * (2 << 20)}
    with httpx.Client(base_url=entry, timeout=60.0) as client:
        from_aws = client.post("/events", json=padded, headers=PASS_THROUGH)
        from_a_caller = client.post("/events", json=padded, headers=FROM_A_CALLER)
        over_lambda = client.post("/events", headers=PASS_THROUGH,
                                  json={**padded, "padding": "x" * (7 << 20)})
    assert from_aws.status_code == 200, from_aws.text
    assert from_a_caller.status_code == 413 and over_lambda.status_code == 413
