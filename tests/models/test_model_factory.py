"""One model instance per spec, shared Bedrock clients, rate limits and call slots."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from opsgraph.errors import BadInput, ConfigurationError
from opsgraph.models import (
    ScriptedChatModel,
    get_chat_model,
    model_call_limit,
    model_call_slot,
    model_call_slot_async,
    reset_models,
    tier_spec,
)
from opsgraph.models.bedrock import reset_bedrock_clients
from opsgraph.models.limits import reset_model_call_slots
from opsgraph.settings import get_settings


@pytest.fixture(autouse=True)
def _fresh_models() -> Iterator[None]:
    reset_models()
    reset_model_call_slots()
    yield
    reset_models()
    reset_bedrock_clients()
    reset_model_call_slots()


@pytest.fixture
def fake_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials that cannot reach anything; the metadata service is off."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    reset_bedrock_clients()


def test_same_spec_same_instance(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    model = get_chat_model(f"scripted:{path}")
    assert isinstance(model, ScriptedChatModel)
    assert get_chat_model(f"scripted:{path}") is model
    assert get_chat_model(f"  scripted:{path} ") is model
    assert get_chat_model(f"scripted:{tmp_path / 'b.yaml'}") is not model
    assert model.rate_limiter is None


def test_instances_are_built_once_across_threads(tmp_path: Path) -> None:
    spec = f"scripted:{tmp_path / 'c.yaml'}"
    with ThreadPoolExecutor(16) as pool:
        models = list(pool.map(lambda _: get_chat_model(spec), range(64)))
    assert len({id(m) for m in models}) == 1


def test_bedrock_models_share_the_region_client(fake_aws: None) -> None:
    sonnet = get_chat_model("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    haiku = get_chat_model("bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0")
    assert sonnet is not haiku
    assert get_chat_model("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0") is sonnet
    client: Any = sonnet.client  # type: ignore[attr-defined]
    assert client is haiku.client  # type: ignore[attr-defined]
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.config.retries["mode"] == "adaptive"
    assert sonnet.rate_limiter is not None
    assert sonnet.rate_limiter is not haiku.rate_limiter


def test_rate_limit_is_configurable(fake_aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSGRAPH_MODEL_RPS", "3")
    get_settings.cache_clear()
    model = get_chat_model("bedrock:some-model")
    assert model.rate_limiter.requests_per_second == 3  # type: ignore[union-attr]
    reset_models()
    monkeypatch.setenv("OPSGRAPH_MODEL_RPS", "fast")
    get_settings.cache_clear()
    with pytest.raises(ConfigurationError, match="OPSGRAPH_MODEL_RPS"):
        get_chat_model("bedrock:some-model")


def test_openai_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BadInput, match="OPENAI_BASE_URL"):
        get_chat_model("openai:llama3.1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model: Any = get_chat_model("openai:llama3.1")
    assert model.model_name == "llama3.1"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key.get_secret_value() == "not-needed"


class _Completions(BaseHTTPRequestHandler):
    """A chat-completions endpoint that keeps each request body and answers "ok"."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        self.bodies.append(json.loads(self.rfile.read(length)))
        reply = json.dumps({
            "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


def test_openai_requests_ask_for_temperature_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    # Unset, a local server samples at its default (0.8 on llama-cpp-python and Ollama).
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Completions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
        reply = get_chat_model("openai:qwen").invoke("hello")
    finally:
        server.shutdown()
        server.server_close()
    assert reply.text == "ok"
    assert _Completions.bodies[-1]["temperature"] == 0
    assert _Completions.bodies[-1]["model"] == "qwen"


def test_llamacpp_checks_path_and_extra(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        get_chat_model(f"llamacpp:{tmp_path / 'missing.gguf'}")
    if importlib.util.find_spec("langchain_community") is not None:
        pytest.skip("langchain-community is installed here")
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(BadInput, match="pip install langchain-community llama-cpp-python"):
        get_chat_model(f"llamacpp:{gguf}")


def test_tier_specs_come_from_settings() -> None:
    # conftest points both tiers at a scripted file that does not exist.
    assert tier_spec("default") == "scripted:/nonexistent/no-model-chosen.yaml"
    assert tier_spec("light") == "scripted:/nonexistent/no-model-chosen.yaml"
    with pytest.raises(BadInput, match="unknown tier 'heavy'"):
        tier_spec("heavy")


def test_at_most_four_model_calls_at_once() -> None:
    assert model_call_limit() == 4
    release = threading.Event()
    inside = threading.Semaphore(0)
    fifth_entered = threading.Event()

    def hold() -> None:
        with model_call_slot():
            inside.release()
            release.wait(5)

    def fifth() -> None:
        with model_call_slot():
            fifth_entered.set()

    holders = [threading.Thread(target=hold) for _ in range(4)]
    for t in holders:
        t.start()
    for _ in range(4):
        assert inside.acquire(timeout=5)
    late = threading.Thread(target=fifth)
    late.start()
    assert not fifth_entered.wait(0.2)  # all four slots are taken
    release.set()
    assert fifth_entered.wait(5)
    for t in [*holders, late]:
        t.join(5)


def test_async_slots_share_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSGRAPH_MODEL_CONCURRENCY", "2")
    reset_model_call_slots()
    peak = current = 0

    async def call() -> None:
        nonlocal peak, current
        async with model_call_slot_async():
            current += 1
            peak = max(peak, current)
            await asyncio.sleep(0.02)
            current -= 1

    async def main() -> None:
        await asyncio.gather(*(call() for _ in range(8)))

    with model_call_slot():  # a thread holds one slot: coroutines get the other only
        asyncio.run(asyncio.wait_for(main(), 10))
    assert peak == 1
    asyncio.run(main())
    assert peak == 2
