"""A first run with no cloud (issue 9), over HTTP against a real server process.

The server starts as `make run` would on a fresh machine: no `OPSGRAPH_MODEL`, no AWS or
OpenAI settings, no local model server, no `OPSGRAPH_TOKEN_SECRET` (the generated local
secret). It must say it is in demo mode, answer each example request to its end with its
scripted model (the write examples to change cards, then to an answer once decided), refuse
a free-text message with a `demo_mode` error event, and let a visitor of the page sign in as
a demo user. With a configured secret, local sign-in does not exist.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from opsgraph.auth import verify_token
from opsgraph.settings import get_settings
from opsgraph.store.embedded import free_port
from tests.e2e.app_process import AppServer, server_env, share_cache
from tests.e2e.http_client import Streamed, stream

CLOUD_ENV = ("OPSGRAPH_MODEL", "OPSGRAPH_LIGHT_MODEL", "OPSGRAPH_TOKEN_SECRET",
             "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
             "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
             "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "OPENAI_BASE_URL",
             "AWS_LAMBDA_FUNCTION_NAME")


def fresh_machine_env(store_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The test's store, and nothing that names or reaches a model."""
    env = {k: v for k, v in server_env(store_env, tmp_path / "unused.yaml").items()
           if k not in CLOUD_ENV}
    return {**env, "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            # this machine's own Ollama or llama.cpp server, if any, must not count
            "OPSGRAPH_LOCAL_MODEL_URLS": "off"}


@pytest.fixture
def demo(demo_db: Any, store_env: dict[str, str], tmp_path: Path, ranker_cache: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[AppServer]:
    """The app on a fresh machine, in its own process, on the seeded demo tenant."""
    share_cache(Path(store_env["OPSGRAPH_HOME"]), ranker_cache)
    app = AppServer(fresh_machine_env(store_env, tmp_path), tmp_path / "unused.yaml",
                    tmp_path / "server.log")
    app.start()
    # this process signs with the server's generated local secret (same OPSGRAPH_HOME)
    monkeypatch.delenv("OPSGRAPH_TOKEN_SECRET")
    get_settings.cache_clear()
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture
def client(demo: AppServer) -> Iterator[httpx.Client]:
    with demo.client() as http:
        yield http


def sign_in(http: httpx.Client, user_id: str, role: str) -> dict[str, str]:
    response = http.post("/v1/local/sign-in", json={"user_id": user_id, "role": role})
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def info(http: httpx.Client) -> dict[str, Any]:
    response = http.get("/v1/info")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def example(http: httpx.Client, start: str) -> str:
    """The example request that starts with `start`."""
    [found] = [e for e in info(http)["examples"] if e.startswith(start)]
    return found


def ask(http: httpx.Client, message: str, headers: dict[str, str]) -> Streamed:
    run = stream(http, "/v1/runs", {"message": message}, headers)
    assert run.status == 200, run.error
    return run


def test_a_fresh_machine_is_in_demo_mode_and_says_so(client: httpx.Client) -> None:
    body = info(client)
    assert body["mode"] == "demo"
    for setting in ("OPSGRAPH_MODEL", "OPENAI_BASE_URL", "AWS"):
        assert setting in body["message"]
    assert 5 <= len(body["examples"]) <= 8
    assert body["local"] is True
    roles = {u["role"] for u in body["demo_users"]}
    assert roles == {"staff", "manager", "admin", "member"}
    assert all(u["name"] and u["user_id"] for u in body["demo_users"])


def test_local_sign_in_gives_a_token_for_the_demo_user_and_role(client: httpx.Client) -> None:
    [manager] = [u for u in info(client)["demo_users"] if u["role"] == "manager"]
    response = client.post("/v1/local/sign-in", json={"user_id": manager["user_id"],
                                                       "role": "admin"})
    assert response.status_code == 200, response.text
    principal = verify_token(response.json()["token"])
    assert (principal.tenant_id, principal.user_id) == ("demo", manager["user_id"])
    assert {r.value for r in principal.roles} == {"admin"}
    assert client.get("/v1/agents", headers={
        "Authorization": f"Bearer {response.json()['token']}"}).status_code == 200


@pytest.mark.parametrize("body, field", [
    ({"user_id": "nobody", "role": "staff"}, "user_id"),
    ({"user_id": "stf_demo_04", "role": "visitor"}, "role"),
    ({"user_id": "stf_demo_04", "role": "owner"}, "role"),
    ({"user_id": "stf_demo_04"}, "role"),
])
def test_local_sign_in_refuses_an_unknown_user_or_role(client: httpx.Client,
                                                       body: dict[str, str],
                                                       field: str) -> None:
    response = client.post("/v1/local/sign-in", json=body)
    assert response.status_code == 422, response.text
    assert [e["field"] for e in response.json()["error"]["errors"]] == [field]


def test_free_text_in_demo_mode_is_a_demo_mode_error_naming_the_settings(
        client: httpx.Client) -> None:
    staff = sign_in(client, "stf_demo_04", "staff")
    run = ask(client, "Please draft next month's rota for the front desk", staff)
    [error] = run.of("error")
    assert error["code"] == "demo_mode"
    for setting in ("OPSGRAPH_MODEL", "OPENAI_BASE_URL", "AWS"):
        assert setting in error["message"]
    assert run.finished["status"] == "failed"
    # a request code can plan (one agent the ranker is sure of) shows that plan; the task's
    # first model call is the placeholder's refusal, so nothing ran and no model was called
    assert "task_finished" not in run.names and "approval_required" not in run.names
    assert run.finished["usage"]["model_calls"] == 0, run.finished


def test_each_read_example_runs_to_its_answer(client: httpx.Client) -> None:
    staff = sign_in(client, "stf_demo_04", "staff")
    reads = [example(client, start) for start in ("What time", "Who is booked", "Is Court 2")]
    for message in reads:
        run = ask(client, message, staff)
        assert run.finished["status"] == "completed", run.events
        assert not run.of("error"), run.of("error")
        [answer] = run.of("answer")
        assert answer["text"].strip()
    # the two reads of the third example ran as two tasks, side by side
    [plan] = run.of("plan")
    assert [t["depends_on"] for t in plan["tasks"]] == [[], []]
    assert {t["task_id"] for t in run.of("task_finished")} == {"t1", "t2"}
    assert "Court 2" in answer["text"]


def test_the_booking_example_ends_in_cards_and_answers_once_they_are_approved(
        client: httpx.Client) -> None:
    staff = sign_in(client, "stf_demo_04", "staff")
    manager = sign_in(client, "stf_demo_02", "manager")
    run = ask(client, example(client, "Book Jane Smith"), staff)
    assert run.finished["status"] == "awaiting_approval", run.events
    cards = run.of("approval_required")[0]["changes"]
    assert sorted(c["operation"] for c in cards) == ["bookings.create",
                                                      "communications.send_email"]
    last: Streamed | None = None
    for card in cards:
        last = stream(client, f"/v1/approvals/{card['change_id']}", {"decision": "approve"},
                      manager)
        assert last.status == 200, last.error
    assert last is not None and last.finished["status"] == "completed", last.events
    [answer] = last.of("answer")
    assert "Court 1" in answer["text"] and "email" in answer["text"].lower(), answer


@pytest.mark.parametrize("start, operation", [("Refund Jayne", "invoices.refund"),
                                              ("Change Emily", "members.update")])
def test_a_manager_s_write_example_waits_for_a_decision(client: httpx.Client, start: str,
                                                       operation: str) -> None:
    manager = sign_in(client, "stf_demo_02", "manager")
    run = ask(client, example(client, start), manager)
    assert run.finished["status"] == "awaiting_approval", run.events
    [card] = run.of("approval_required")[0]["changes"]
    assert card["operation"] == operation
    decided = stream(client, f"/v1/approvals/{card['change_id']}", {"decision": "approve"},
                     sign_in(client, "stf_demo_01", "admin"))
    assert decided.finished["status"] == "completed", decided.events


def test_a_refund_asked_by_staff_is_refused_by_the_gate(client: httpx.Client) -> None:
    staff = sign_in(client, "stf_demo_04", "staff")
    run = ask(client, example(client, "Refund Jayne"), staff)
    [finished] = run.of("task_finished")
    assert finished["status"] == "denied", run.events
    assert not run.of("approval_required")


def test_tenant_settings_are_the_admin_s(client: httpx.Client, demo_db: Any) -> None:
    admin = sign_in(client, "stf_demo_01", "admin")
    first = client.get("/v1/tenant/settings", headers=admin).json()
    assert settings_of(first) == {
        "capability_mode": "observe", "off_topic_reply": "", "modules": [],
        "harness_agent_may_force": False, "currency": "GBP",
        "separation_of_duties": ["invoices.refund", "invoices.issue"]}
    assert "safeguarding" in first["choices"]["modules"]
    assert "invoices.refund" in first["choices"]["operations"]
    assert "members.get" not in first["choices"]["operations"]  # reads need no second person
    assert first["choices"]["currencies"][0] == "GBP"
    for role in ("manager", "staff", "member"):
        who = sign_in(client, "stf_demo_01", role)
        assert client.get("/v1/tenant/settings", headers=who).status_code == 403
        assert client.put("/v1/tenant/settings", headers=who,
                          json={"capability_mode": "enforce"}).status_code == 403
    assert client.get("/v1/tenant/settings").status_code == 403  # a visitor
    changed = client.put("/v1/tenant/settings", headers=admin,
                         json={"capability_mode": "enforce"})
    enforced = {"capability_mode": "enforce", "off_topic_reply": "", "modules": [],
                "harness_agent_may_force": False, "currency": "GBP",
                "separation_of_duties": ["invoices.refund", "invoices.issue"]}
    assert changed.status_code == 200 and settings_of(changed.json()) == enforced
    assert settings_of(client.get("/v1/tenant/settings", headers=admin).json()) == enforced
    # on the tenant's document, where a run reads its gate's mode (engine.runner)
    assert demo_db["tenants"].find_one({"_id": "demo"})["capability_mode"] == "enforce"
    bad = client.put("/v1/tenant/settings", headers=admin, json={"capability_mode": "strict"})
    assert bad.status_code == 422
    assert [e["field"] for e in bad.json()["error"]["errors"]] == ["capability_mode"]
    # the off-topic reply: set, kept when absent, refused over 500 characters
    reply = "We only help with the club: bookings, classes and membership."
    assert client.put("/v1/tenant/settings", headers=admin, json={
        "capability_mode": "enforce", "off_topic_reply": reply}).json()["off_topic_reply"] == reply
    assert client.put("/v1/tenant/settings", headers=admin, json={
        "capability_mode": "observe"}).json()["off_topic_reply"] == reply
    assert demo_db["tenants"].find_one({"_id": "demo"})["off_topic_reply"] == reply
    long = client.put("/v1/tenant/settings", headers=admin,
                      json={"capability_mode": "observe", "off_topic_reply": "x" * 501})
    assert long.status_code == 422
    assert [e["field"] for e in long.json()["error"]["errors"]] == ["off_topic_reply"]
    # modules: shipped ones only, each named when unknown
    assert client.put("/v1/tenant/settings", headers=admin, json={
        "capability_mode": "observe", "modules": ["safeguarding"]}).json()["modules"] == [
        "safeguarding"]
    unknown = client.put("/v1/tenant/settings", headers=admin,
                         json={"capability_mode": "observe", "modules": ["astrology"]})
    assert unknown.status_code == 400 and "'astrology'" in unknown.json()["error"]["message"]
    assert demo_db["tenants"].find_one({"_id": "demo"})["modules"] == ["safeguarding"]
    # an agent on the admin MCP link may force an activation only when the tenant says so
    allowed = client.put("/v1/tenant/settings", headers=admin, json={
        "capability_mode": "observe", "harness_agent_may_force": True}).json()
    assert allowed["harness_agent_may_force"] is True and allowed["modules"] == ["safeguarding"]
    assert client.put("/v1/tenant/settings", headers=admin, json={
        "capability_mode": "observe", "harness_agent_may_force": "maybe"}).status_code == 422
    # the currency amounts are written in: a three-letter code, kept upper case
    assert client.put("/v1/tenant/settings", headers=admin, json={
        "capability_mode": "observe", "currency": "eur"}).json()["currency"] == "EUR"
    assert demo_db["tenants"].find_one({"_id": "demo"})["currency"] == "EUR"
    euro = client.put("/v1/tenant/settings", headers=admin,
                      json={"capability_mode": "observe", "currency": "EURO"})
    assert euro.status_code == 422
    assert [e["field"] for e in euro.json()["error"]["errors"]] == ["currency"]


def settings_of(body: dict[str, Any]) -> dict[str, Any]:
    """The settings of a settings answer, without the choices the page offers."""
    return {k: v for k, v in body.items() if k != "choices"}


@pytest.fixture
def configured(demo_db: Any, store_env: dict[str, str], tmp_path: Path,
               ranker_cache: Path) -> Iterator[AppServer]:
    """The same fresh machine, with a token secret of its own (a deployment)."""
    share_cache(Path(store_env["OPSGRAPH_HOME"]), ranker_cache)
    env = {**fresh_machine_env(store_env, tmp_path),
           "OPSGRAPH_TOKEN_SECRET": "a-deployment-secret-of-32-bytes!"}
    app = AppServer(env, tmp_path / "unused.yaml", tmp_path / "server.log")
    app.start()
    try:
        yield app
    finally:
        app.stop()


def test_local_sign_in_is_not_found_with_a_configured_secret(configured: AppServer) -> None:
    with configured.client() as http:
        body = info(http)
        assert body["local"] is False and body["demo_users"] == []
        response = http.post("/v1/local/sign-in", json={"user_id": "stf_demo_04",
                                                         "role": "admin"})
        assert response.status_code == 404, response.text


def test_serve_says_which_model_answers_in_one_line(demo_db: Any, store_env: dict[str, str],
                                                    tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "opsgraph.cli", "serve", "--port", str(port)],
        env=fresh_machine_env(store_env, tmp_path), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for raw in iter(proc.stderr.readline, b""):  # until the app is up
            lines.append(raw.decode())
            if "Application startup complete" in lines[-1]:
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    [line] = [x for x in lines if x.startswith("model:")]
    assert line.startswith("model: demo: Demo mode: no model is configured or reachable")
    assert "OPSGRAPH_MODEL" in line


def test_the_phone_example_asked_again_after_its_approval_still_answers(
        client: httpx.Client, demo_db: Any) -> None:
    manager = sign_in(client, "stf_demo_02", "manager")
    message = example(client, "Change Emily")
    run = ask(client, message, manager)
    [card] = run.of("approval_required")[0]["changes"]
    stream(client, f"/v1/approvals/{card['change_id']}", {"decision": "approve"},
           sign_in(client, "stf_demo_01", "admin"))
    again = ask(client, message, manager)  # the number is hers now: nothing to change
    assert again.finished["status"] == "completed", again.events
    assert not again.of("error") and not again.of("approval_required")
    [answer] = again.of("answer")
    assert "already +44 7700 900555" in answer["text"]


def test_the_quick_start_and_the_page_s_example_do_not_break_each_other(
        demo: AppServer, client: httpx.Client, store_env: dict[str, str],
        tmp_path: Path) -> None:
    env = fresh_machine_env(store_env, tmp_path)
    env.pop("OPSGRAPH_MODEL", None)
    root = Path(__file__).resolve().parents[2]
    quick = subprocess.run(
        [sys.executable, "-m", "opsgraph.cli", "chat",
         "Is court 1 free tomorrow evening, and update Emily Chen's phone",
         "--model", "scripted:examples/availability_and_phone.yaml", "--user", "stf_demo_02",
         "--role", "manager"], env=env, cwd=root, capture_output=True, text=True, timeout=180)
    assert quick.returncode == 0, quick.stderr
    assert "Court 1 has free evening slots." in quick.stdout  # answered before the decision
    assert "run awaiting_approval" in quick.stdout
    # the page's phone example, by the same person: a card of its own, and it completes
    manager = sign_in(client, "stf_demo_02", "manager")
    run = ask(client, example(client, "Change Emily"), manager)
    [card] = run.of("approval_required")[0]["changes"]
    assert "+44 7700 900555" in card["summary"]
    decided = stream(client, f"/v1/approvals/{card['change_id']}", {"decision": "approve"},
                     sign_in(client, "stf_demo_01", "admin"))
    assert decided.finished["status"] == "completed", decided.events
    # and `opsgraph chat` answers an example request in demo mode as the page does
    chat = subprocess.run(
        [sys.executable, "-m", "opsgraph.cli", "chat", example(client, "Who is booked")],
        env=env, cwd=root, capture_output=True, text=True, timeout=180)
    assert chat.returncode == 0 and "run completed" in chat.stdout, chat.stderr
    assert "Court 1" in chat.stdout


def test_eval_in_demo_mode_says_it_needs_a_model(demo: AppServer, store_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    env = fresh_machine_env(store_env, tmp_path)
    env.pop("OPSGRAPH_MODEL", None)
    done = subprocess.run([sys.executable, "-m", "opsgraph.cli", "eval"], env=env,
                          cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 2, done.stderr
    assert "--model" in done.stderr and "needs a model" in done.stderr
    for choice in ("bedrock:", "openai:", "llamacpp:", "scripted:"):
        assert choice in done.stderr
    assert "examples.yaml" not in done.stderr and "Extra inputs" not in done.stderr
