"""Bedrock prompt caching, proven on the wire with botocore's Stubber (no network)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from opsgraph.models import (
    ScriptedChatModel,
    bind_tools_cached,
    cached_system_message,
    get_chat_model,
    reset_models,
    supports_cache_points,
    usage_of,
)
from opsgraph.models.bedrock import (
    bedrock_runtime_client,
    build_bedrock_model,
    client_config,
    reset_bedrock_clients,
)

MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CACHE_POINT = {"cachePoint": {"type": "default"}}
RESPONSE = {
    "output": {"message": {"role": "assistant", "content": [{"text": "Found Jane."}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 12, "outputTokens": 3, "totalTokens": 2065,
              "cacheReadInputTokens": 2000, "cacheWriteInputTokens": 50},
    "metrics": {"latencyMs": 5},
}


class members_search(BaseModel):
    """Search members by name or email."""

    query: str


Stubbed = tuple[Any, Stubber, list[dict[str, Any]]]


def _stub(client: Any) -> Iterator[Stubbed]:
    sent: list[dict[str, Any]] = []
    client.meta.events.register("before-parameter-build.bedrock-runtime.Converse",
                                lambda params, **_: sent.append(params))
    with Stubber(client) as stubber:
        yield client, stubber, sent
        stubber.assert_no_pending_responses()


@pytest.fixture
def shared_stubbed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubbed]:
    """The process's shared bedrock-runtime client, with fake credentials, stubbed."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    reset_bedrock_clients()
    reset_models()
    yield from _stub(bedrock_runtime_client())
    reset_models()
    reset_bedrock_clients()


@pytest.fixture
def own_stubbed() -> Iterator[Stubbed]:
    """A client of the test's own, with explicit fake credentials."""
    yield from _stub(boto3.client("bedrock-runtime", region_name="us-east-1",
                                  aws_access_key_id="testing",
                                  aws_secret_access_key="testing", config=client_config()))


def test_request_carries_both_cache_points_and_usage_counts_cache(
        shared_stubbed: Stubbed) -> None:
    client, stubber, sent = shared_stubbed
    stubber.add_response("converse", copy.deepcopy(RESPONSE))
    model = get_chat_model(f"bedrock:{MODEL_ID}")
    assert model.client is client  # type: ignore[attr-defined]
    assert supports_cache_points(model)

    system = cached_system_message(model, "You are the members agent of a club.")
    reply = bind_tools_cached(model, [members_search]).invoke(
        [system, HumanMessage("find Jane")])

    (request,) = sent
    assert request["system"][0] == {"text": "You are the members agent of a club."}
    assert request["system"][-1] == CACHE_POINT
    tools = request["toolConfig"]["tools"]
    assert tools[0]["toolSpec"]["name"] == "members_search"
    assert tools[-1] == CACHE_POINT and len(tools) == 2

    assert reply.content == "Found Jane."
    assert usage_of(reply) == {"input": 2062, "output": 3, "cache_read": 2000,
                               "cache_write": 50}


def test_a_model_on_a_given_client(own_stubbed: Stubbed) -> None:
    client, stubber, sent = own_stubbed
    stubber.add_response("converse", copy.deepcopy(RESPONSE))
    model = build_bedrock_model(MODEL_ID, client=client, region="us-east-1")
    reply = model.invoke([cached_system_message(model, "stable"), HumanMessage("hi")])
    assert sent[0]["system"] == [{"text": "stable"}, CACHE_POINT]
    assert "toolConfig" not in sent[0]
    assert usage_of(reply)["cache_read"] == 2000


def test_other_models_get_plain_prompts(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("turns: {t1: [{content: ok}]}\n")
    model = ScriptedChatModel(path=str(path))
    assert not supports_cache_points(model)
    assert cached_system_message(model, "stable prompt").content == "stable prompt"
    bound = bind_tools_cached(model, [members_search])
    tools = bound.kwargs["tools"]  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in tools] == ["members_search"]
