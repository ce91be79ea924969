"""Amazon Bedrock chat models: one boto3 client per region, shared by every model.

Building a `ChatBedrockConverse` with its own clients costs ~200 ms, so the factory builds
one per model id per process and they all share the region's `bedrock-runtime` client
(boto3 clients are thread-safe) and its `bedrock` control-plane client. langchain_aws and
boto3 are imported here only, inside functions: importing opsgraph.models stays light.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.rate_limiters import BaseRateLimiter

DEFAULT_REGION: Final = "us-east-1"
CONNECT_TIMEOUT_S: Final = 5
READ_TIMEOUT_S: Final = 300  # long generations stream for minutes; Lambda caps at 15
MAX_ATTEMPTS: Final = 5
MAX_POOL_CONNECTIONS: Final = 32  # ≥ parallel sub-tasks × models sharing a region

_lock = threading.Lock()
_clients: dict[str, tuple[Any, Any]] = {}


def bedrock_region() -> str:
    """The region Bedrock is called in: `AWS_REGION`, `AWS_DEFAULT_REGION`, or us-east-1."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def client_config() -> Any:
    """botocore Config: adaptive retries (throttling backs off), bounded timeouts."""
    from botocore.config import Config

    return Config(
        retries={"max_attempts": MAX_ATTEMPTS, "mode": "adaptive"},
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        max_pool_connections=MAX_POOL_CONNECTIONS,
        tcp_keepalive=True,
        user_agent_extra="opsgraph",
    )


def bedrock_clients(region: str | None = None) -> tuple[Any, Any]:
    """The shared (`bedrock-runtime`, `bedrock`) clients of `region`, made once."""
    region = region or bedrock_region()
    with _lock:
        pair = _clients.get(region)
        if pair is None:
            import boto3

            session = boto3.session.Session()
            config = client_config()
            pair = (session.client("bedrock-runtime", region_name=region, config=config),
                    session.client("bedrock", region_name=region, config=config))
            _clients[region] = pair
        return pair


def bedrock_runtime_client(region: str | None = None) -> Any:
    """The shared `bedrock-runtime` client of `region`."""
    return bedrock_clients(region)[0]


def build_bedrock_model(
    model_id: str,
    *,
    region: str | None = None,
    client: Any = None,
    control_client: Any = None,
    rate_limiter: BaseRateLimiter | None = None,
) -> BaseChatModel:
    """A `ChatBedrockConverse` on the shared clients (or on `client`, e.g. a stubbed one)."""
    from langchain_aws import ChatBedrockConverse

    region = region or bedrock_region()
    if client is None:
        client, shared_control = bedrock_clients(region)
        control_client = control_client or shared_control
    elif control_client is None and "application-inference-profile" in model_id:
        control_client = bedrock_clients(region)[1]
    elif control_client is None:
        # Only application inference profiles call the control plane; a plain model id
        # never does, so the given client stands in rather than building another.
        control_client = client
    return ChatBedrockConverse(
        model=model_id,
        region_name=region,
        client=client,
        bedrock_client=control_client,
        rate_limiter=rate_limiter,
    )


def reset_bedrock_clients() -> None:
    """Forget the shared clients (tests that change credentials or regions)."""
    with _lock:
        _clients.clear()
