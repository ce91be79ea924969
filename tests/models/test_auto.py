"""Which model answers with `OPSGRAPH_MODEL` unset (opsgraph.models.auto), and Bedrock's
credential failures in our words (opsgraph.models.bedrock).

Local model servers are real HTTP servers on loopback ports answering `GET /v1/models`;
AWS credentials come from environment variables or a credentials file in the test's folder;
nothing reaches the network (the instance metadata service is off).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from opsgraph.errors import ConfigurationError, OpsgraphError
from opsgraph.models.auto import DEMO_SPEC, DemoMode, model_choice, reset_model_choice
from opsgraph.models.factory import get_chat_model, tier_spec, unavailable
from opsgraph.models.spec import parse_model_spec
from opsgraph.settings import DEFAULT_LIGHT_MODEL, DEFAULT_MODEL, get_settings

AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
           "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
           "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
           "AWS_LAMBDA_FUNCTION_NAME", "AWS_REGION", "AWS_DEFAULT_REGION")


class ModelServer:
    """An OpenAI-compatible server's `GET /v1/models` on a loopback port; counts requests."""

    def __init__(self, body: Any, status: int = 200) -> None:
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits += 1
                payload = json.dumps(body).encode()
                ok = self.path == "/v1/models"
                self.send_response(status if ok else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


LISTING = {"object": "list", "data": [{"id": "qwen2.5:7b", "object": "model"},
                                      {"id": "llama3.2", "object": "model"}]}


@pytest.fixture
def models_server() -> Iterator[ModelServer]:
    server = ModelServer(LISTING)
    yield server
    server.close()


@pytest.fixture
def no_server() -> str:
    """A loopback URL where nothing listens."""
    from opsgraph.store.embedded import free_port

    return f"http://127.0.0.1:{free_port()}/v1"


@pytest.fixture(autouse=True)
def bare_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No model named, no AWS credentials anywhere, no local server asked (tests add them)."""
    for name in (*AWS_ENV, "OPSGRAPH_MODEL", "OPSGRAPH_LIGHT_MODEL", "OPENAI_BASE_URL",
                 "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("OPSGRAPH_LOCAL_MODEL_URLS", "off")
    get_settings.cache_clear()
    reset_model_choice()
    yield
    reset_model_choice()


def decide(monkeypatch: pytest.MonkeyPatch, **env: str) -> Any:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    return model_choice()


def test_nothing_reachable_is_demo_mode_and_the_tiers_never_build(
        monkeypatch: pytest.MonkeyPatch) -> None:
    choice = decide(monkeypatch)
    assert choice.mode == "demo"
    assert tier_spec("default") == tier_spec("light") == DEMO_SPEC
    for setting in ("OPSGRAPH_MODEL", "OPENAI_BASE_URL", "AWS credentials"):
        assert setting in choice.message
    assert choice.line().startswith("model: demo: ")
    with pytest.raises(DemoMode) as raised:
        get_chat_model(DEMO_SPEC)
    assert raised.value.code == "demo_mode" and "OPSGRAPH_MODEL" in raised.value.message
    # a tenant cannot choose it: it is never a model that can run here
    assert unavailable(parse_model_spec(DEMO_SPEC))


def test_opsgraph_model_always_wins_and_nothing_is_asked(
        monkeypatch: pytest.MonkeyPatch, models_server: ModelServer) -> None:
    choice = decide(monkeypatch, OPSGRAPH_MODEL="openai:big", OPENAI_BASE_URL=models_server.url,
                    AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="secret",
                    OPSGRAPH_LOCAL_MODEL_URLS=models_server.url)
    assert (choice.mode, choice.model) == ("configured", "openai:big")
    assert choice.light_model == DEFAULT_LIGHT_MODEL  # as before: the light tier's default
    assert models_server.hits == 0


def test_aws_credentials_in_the_environment_choose_bedrock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    choice = decide(monkeypatch, AWS_ACCESS_KEY_ID="AKIDEXAMPLE",
                    AWS_SECRET_ACCESS_KEY="secret", AWS_REGION="eu-west-2")
    assert (choice.mode, choice.model, choice.light_model) == (
        "bedrock", DEFAULT_MODEL, DEFAULT_LIGHT_MODEL)
    assert "eu-west-2" in choice.message and "(env)" in choice.message


def test_an_aws_profile_in_a_credentials_file_chooses_bedrock(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "aws-credentials").write_text(
        "[club]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = secret\n")
    choice = decide(monkeypatch, AWS_PROFILE="club")
    assert choice.mode == "bedrock"
    assert "shared-credentials-file" in choice.message


def test_openai_base_url_lists_its_first_model(monkeypatch: pytest.MonkeyPatch,
                                               models_server: ModelServer) -> None:
    choice = decide(monkeypatch, OPENAI_BASE_URL=models_server.url,
                    AWS_ACCESS_KEY_ID="AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY="secret")
    assert (choice.mode, choice.model, choice.light_model) == (
        "openai", "openai:qwen2.5:7b", "openai:qwen2.5:7b")
    assert models_server.url in choice.message


def test_a_local_server_is_found_on_its_port(monkeypatch: pytest.MonkeyPatch,
                                             models_server: ModelServer,
                                             no_server: str) -> None:
    choice = decide(monkeypatch, OPSGRAPH_LOCAL_MODEL_URLS=f"{no_server},{models_server.url}")
    assert (choice.mode, choice.model) == ("openai", "openai:qwen2.5:7b")
    # the openai: spec is built against the server that answered
    import os

    assert os.environ["OPENAI_BASE_URL"] == models_server.url
    assert unavailable(parse_model_spec(choice.model)) is None


@pytest.mark.parametrize("body, status", [({"error": "no"}, 200), ({"data": []}, 200),
                                          (LISTING, 500), ("<html>", 200)])
def test_a_server_that_lists_no_model_does_not_count(monkeypatch: pytest.MonkeyPatch,
                                                     body: Any, status: int) -> None:
    server = ModelServer(body, status)
    try:
        choice = decide(monkeypatch, OPSGRAPH_LOCAL_MODEL_URLS=server.url)
    finally:
        server.close()
    assert choice.mode == "demo"
    assert server.hits == 1


def test_an_openai_base_url_that_does_not_answer_is_said(monkeypatch: pytest.MonkeyPatch,
                                                         no_server: str) -> None:
    choice = decide(monkeypatch, OPENAI_BASE_URL=no_server)
    assert choice.mode == "demo"
    assert f"OPENAI_BASE_URL {no_server} did not list its models" in choice.message


def test_on_lambda_no_local_port_is_asked(monkeypatch: pytest.MonkeyPatch,
                                          models_server: ModelServer) -> None:
    choice = decide(monkeypatch, AWS_LAMBDA_FUNCTION_NAME="opsgraph",
                    OPSGRAPH_LOCAL_MODEL_URLS=models_server.url)
    assert choice.mode == "demo"
    assert models_server.hits == 0


def test_decided_once_per_process(monkeypatch: pytest.MonkeyPatch,
                                  models_server: ModelServer) -> None:
    first = decide(monkeypatch, OPSGRAPH_LOCAL_MODEL_URLS=models_server.url)
    assert [model_choice() for _ in range(3)] == [first] * 3
    assert tier_spec("default") == first.model
    assert models_server.hits == 1


def test_an_explicit_light_model_is_kept(monkeypatch: pytest.MonkeyPatch,
                                         models_server: ModelServer) -> None:
    choice = decide(monkeypatch, OPENAI_BASE_URL=models_server.url,
                    OPSGRAPH_LIGHT_MODEL="openai:small")
    assert (choice.model, choice.light_model) == ("openai:qwen2.5:7b", "openai:small")


def test_a_malformed_local_url_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSGRAPH_LOCAL_MODEL_URLS", "localhost:11434")
    get_settings.cache_clear()
    with pytest.raises(ConfigurationError, match="OPSGRAPH_LOCAL_MODEL_URLS"):
        get_settings()


# --- Bedrock's failures, in our words --------------------------------------------------------

def test_bedrock_without_credentials_is_model_unavailable_naming_the_settings() -> None:
    from langchain_core.messages import HumanMessage

    from opsgraph.models.bedrock import build_bedrock_model, reset_bedrock_clients

    reset_bedrock_clients()
    try:
        model = build_bedrock_model("anthropic.claude-test", region="eu-west-2")
        with pytest.raises(OpsgraphError) as raised:
            model.invoke([HumanMessage("hello")])
    finally:
        reset_bedrock_clients()
    error = raised.value
    assert error.code == "model_unavailable"
    assert "AWS_PROFILE" in error.message and "OPSGRAPH_MODEL" in error.message
    assert "anthropic.claude-test" in error.message and "eu-west-2" in error.message
    assert "Unable to locate credentials" not in error.message


def test_bedrock_stream_without_credentials_is_model_unavailable() -> None:
    from langchain_core.messages import HumanMessage

    from opsgraph.models.bedrock import build_bedrock_model, reset_bedrock_clients

    reset_bedrock_clients()
    try:
        # a model langchain_aws streams from (others fall back to one Converse call)
        model = build_bedrock_model("us.anthropic.claude-sonnet-4-6", region="eu-west-2")
        with pytest.raises(OpsgraphError) as raised:
            list(model.stream([HumanMessage("hello")]))
    finally:
        reset_bedrock_clients()
    assert raised.value.code == "model_unavailable"


@pytest.mark.parametrize("code, words", [("AccessDeniedException", "may not call it"),
                                         ("UnrecognizedClientException", "refused"),
                                         ("ExpiredTokenException", "renew")])
def test_bedrock_refusals_of_credentials_are_model_unavailable(code: str, words: str) -> None:
    from botocore.exceptions import ClientError

    from opsgraph.models.bedrock import unavailable_error

    refused = ClientError({"Error": {"Code": code, "Message": "raw words"}}, "Converse")
    error = unavailable_error(ValueError("wrapped"), "m", "r")
    assert error is None  # not a credentials problem: left as it is
    try:
        raise ValueError("langchain's wrapper") from refused
    except ValueError as wrapped:
        error = unavailable_error(wrapped, "m", "us-east-1")
    assert error is not None and error.code == "model_unavailable"
    assert words in error.message and "raw words" not in error.message


def test_a_throttled_call_is_not_a_credentials_problem() -> None:
    from botocore.exceptions import ClientError

    from opsgraph.models.bedrock import unavailable_error

    throttled = ClientError({"Error": {"Code": "ThrottlingException"}}, "Converse")
    assert unavailable_error(throttled, "m", "r") is None
