"""A tenant's model per agent over HTTP (issue 8, finding 2), against a real server process:
a tenant admin chooses only from the deployment's list (`OPSGRAPH_ALLOWED_MODELS`; unset,
the default and light tier models), so a spec naming a server file tells nothing about the
file; a choice that cannot run here is refused when it is made; GET and PUT answer one
shape, `{"models", "allowed"}`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.app_process import AppServer
from tests.e2e.http_client import bearer, headers_for, stream
from tests.e2e.scripts import call, opening_hours, task
from tests.e2e.test_http_api import assert_error


def without_request_id(response: httpx.Response) -> tuple[int, dict[str, Any]]:
    body = response.json()
    body["error"].pop("request_id")
    return response.status_code, body


def test_a_spec_naming_a_server_file_tells_nothing_about_it(server: AppServer,
                                                            http: httpx.Client) -> None:
    server.write_script(opening_hours())
    admin = bearer("admin")
    existing = server.script.with_name("elsewhere.yaml")
    existing.write_text("synthesis: a file the deployment never listed\n")
    probes = ["scripted:/etc/passwd", "scripted:/nonexistent/plan.yaml",
              f"scripted:{existing}", "llamacpp:/etc/hostname.gguf", "bedrock:not-listed"]
    answers = [without_request_id(http.put("/v1/tenant/models", headers=admin,
                                           json={"members.lookup": spec}))
               for spec in probes]
    status, body = answers[0]
    assert status == 422, body
    assert all(answer == answers[0] for answer in answers), answers
    allowed = f"scripted:{server.script}"  # the tier models of this server
    assert body["error"] == {
        "code": "invalid",
        "message": "models.members.lookup: not one of the models this deployment allows "
                   f"(allowed: {allowed})",
        "errors": [{"field": "models.members.lookup",
                    "message": f"not one of the models this deployment allows (allowed: "
                               f"{allowed})"}]}
    assert http.get("/v1/tenant/models", headers=admin).json() == {
        "models": {}, "allowed": [{"spec": allowed, "provider": "scripted",
                                   "model": str(server.script),
                                   "name": f"scripted model ({server.script.name})"}]}


def test_a_choice_that_cannot_run_here_is_refused_when_chosen(server: AppServer,
                                                              http: httpx.Client) -> None:
    # The server never inherits OPENAI_BASE_URL (app_process scrubs it).
    server.write_script(opening_hours())
    server.env["OPSGRAPH_ALLOWED_MODELS"] = f"openai:llama3.1, scripted:{server.script}"
    server.restart()
    admin = bearer("admin")
    refused = http.put("/v1/tenant/models", json={"members.lookup": "openai:llama3.1"},
                       headers=admin)
    assert_error(refused, 422, mentions="models.members.lookup: openai:llama3.1 cannot run "
                                        "here: OPENAI_BASE_URL is not set")
    settings = http.get("/v1/tenant/models", headers=admin).json()
    assert settings == {"models": {}, "allowed": [{"spec": f"scripted:{server.script}",
                                                   "provider": "scripted",
                                                   "model": str(server.script),
                                                   "name": f"scripted model "
                                                           f"({server.script.name})"}]}


def test_an_allowed_choice_changes_the_model_and_get_and_put_agree(server: AppServer,
                                                                  http: httpx.Client) -> None:
    for role in ("manager", "staff", None):
        assert_error(http.get("/v1/tenant/models", headers=headers_for(role)), 403)
    assert_error(http.put("/v1/tenant/models", json={}, headers=bearer("manager")), 403)
    override = server.script.with_name("override.yaml")
    override.write_text(
        "turns:\n  t1:\n    - tool_calls: [{name: members_get, args: {member: Raj Mehta}}]\n"
        "    - content: Found.\n")
    server.env["OPSGRAPH_ALLOWED_MODELS"] = f"scripted:{server.script},scripted:{override}"
    server.restart()
    admin = bearer("admin")
    assert_error(http.put("/v1/tenant/models", headers=admin,
                          json={"members.teleport": f"scripted:{override}"}),
                 422, mentions="models.members.teleport: unknown agent")

    # Default model: the lookup reads Emily Chen; the override's file reads Raj Mehta.
    server.write_script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up a member")]},
        "turns": {"t1": [call("members_get", member="Emily Chen"), {"content": "Found."}]},
        "synthesis": "Here is the member."})
    models = {"members.lookup": f"scripted:{override}"}
    put = http.put("/v1/tenant/models", json={"models": models}, headers=admin)
    assert put.status_code == 200, put.text
    assert put.json()["models"] == models
    assert http.get("/v1/tenant/models", headers=admin).json() == put.json()
    assert [m["spec"] for m in put.json()["allowed"]] == [f"scripted:{server.script}",
                                                          f"scripted:{override}"]
    # the bare `{agent: spec}` form sets the same overrides
    assert http.put("/v1/tenant/models", json=models, headers=admin).json() == put.json()
    assert http.get("/v1/tenant/models", headers=bearer("admin", tenant="acme")).json()[
        "models"] == {}

    run = stream(http, "/v1/runs", {"message": "look up the member"}, bearer("staff"))
    assert run.finished["status"] == "completed"
    [answer] = run.of("answer")
    assert [s["title"] for s in answer["sources"]] == ["Raj Mehta"]

    # The deployment takes the model off its list: the stored choice is no longer in force.
    server.env["OPSGRAPH_ALLOWED_MODELS"] = f"scripted:{server.script}"
    server.restart()
    assert http.get("/v1/tenant/models", headers=admin).json()["models"] == {}
    run = stream(http, "/v1/runs", {"message": "look up the member"}, bearer("staff"))
    [answer] = run.of("answer")
    assert [s["title"] for s in answer["sources"]] == ["Emily Chen"]


def test_a_malformed_list_stops_the_server_at_start(server: AppServer) -> None:
    server.env["OPSGRAPH_ALLOWED_MODELS"] = "bedrock:m, gpt4"
    with pytest.raises(RuntimeError, match="OPSGRAPH_ALLOWED_MODELS: model: no provider prefix"):
        server.restart()
