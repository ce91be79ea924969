"""Amazon Bedrock chat models: one boto3 client per region, shared by every model.

Building a `ChatBedrockConverse` with its own clients costs ~200 ms, so the factory builds
one per model id per process and they all share the region's `bedrock-runtime` client
(boto3 clients are thread-safe) and its `bedrock` control-plane client. langchain_aws and
boto3 are imported here only, inside functions: importing opsgraph.models stays light.

A call that fails for want of credentials, a region or access to the model raises
`ModelUnavailable` in opsgraph's words, naming what to set; never the provider's own text
("Unable to locate credentials").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from opsgraph.errors import RunAborted

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.rate_limiters import BaseRateLimiter

DEFAULT_REGION: Final = "us-east-1"
CONNECT_TIMEOUT_S: Final = 5
READ_TIMEOUT_S: Final = 300  # long generations stream for minutes; Lambda caps at 15
MAX_ATTEMPTS: Final = 5
MAX_POOL_CONNECTIONS: Final = 32  # ≥ parallel sub-tasks × models sharing a region

NO_CREDENTIALS: Final = frozenset({
    "NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError",
    "TokenRetrievalError", "SSOTokenLoadError", "UnauthorizedSSOTokenError", "ProfileNotFound",
    "NoRegionError"})
"""botocore's exceptions for credentials (or a region) it cannot find or load."""
REFUSED: Final = frozenset({
    "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException",
    "ExpiredToken", "InvalidClientTokenId", "AccessDeniedException"})
"""Bedrock's error codes for credentials it refuses or a model they may not use."""
CHOOSE_ANOTHER: Final = "or choose another model with OPSGRAPH_MODEL"

_lock = threading.Lock()
_clients: dict[str, tuple[Any, Any]] = {}


def bedrock_region() -> str:
    """The region Bedrock is called in: `AWS_REGION`, `AWS_DEFAULT_REGION`, or us-east-1."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def client_config() -> Any:
    """botocore Config: adaptive retries (throttling backs off), bounded timeouts."""
    from botocore.config import Config  # heavy: botocore (cold start)

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
            import boto3  # heavy: boto3 (cold start)

            session = boto3.session.Session()
            config = client_config()
            pair = (session.client("bedrock-runtime", region_name=region, config=config),
                    session.client("bedrock", region_name=region, config=config))
            _clients[region] = pair
        return pair


def bedrock_runtime_client(region: str | None = None) -> Any:
    """The shared `bedrock-runtime` client of `region`."""
    return bedrock_clients(region)[0]


class ModelUnavailable(RunAborted):
    """The model cannot be called here: credentials, region or access are missing."""

    status = 503
    code = "model_unavailable"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def unavailable_error(exc: BaseException, model_id: str, region: str) -> ModelUnavailable | None:
    """Our error for a Bedrock failure that setting something would fix, None for others."""
    where = f"Bedrock model {model_id} in {region}"
    for cause in _causes(exc):
        name = type(cause).__name__
        if name == "NoRegionError":
            return ModelUnavailable(f"{where}: no AWS region is set; set AWS_REGION, "
                                    f"{CHOOSE_ANOTHER}", model=model_id)
        if name in NO_CREDENTIALS:
            return ModelUnavailable(
                f"{where}: no usable AWS credentials were found; set AWS_PROFILE (or "
                f"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), {CHOOSE_ANOTHER}",
                model=model_id)
        response = getattr(cause, "response", None)
        code = (response.get("Error") or {}).get("Code") if isinstance(response, dict) else None
        if code == "AccessDeniedException":
            return ModelUnavailable(
                f"{where}: these AWS credentials may not call it (AccessDeniedException); "
                f"enable the model for the account in that region, set AWS_REGION, "
                f"{CHOOSE_ANOTHER}", model=model_id)
        if code in REFUSED:
            return ModelUnavailable(
                f"{where}: AWS refused these credentials ({code}); renew them or set "
                f"AWS_PROFILE, {CHOOSE_ANOTHER}", model=model_id)
    return None


@cache
def _converse_class() -> type[Any]:
    """ChatBedrockConverse whose calls fail with `ModelUnavailable` where that applies."""
    from langchain_aws import ChatBedrockConverse  # heavy: langchain_aws (cold start)

    class Converse(ChatBedrockConverse):
        def _unavailable(self, exc: BaseException) -> ModelUnavailable | None:
            return unavailable_error(exc, str(self.model_id), str(self.region_name))

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super()._generate(*args, **kwargs)
            except Exception as exc:
                mapped = self._unavailable(exc)
                if mapped is None:
                    raise
                raise mapped from exc

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from super()._stream(*args, **kwargs)
            except Exception as exc:
                mapped = self._unavailable(exc)
                if mapped is None:
                    raise
                raise mapped from exc

    return Converse


def build_bedrock_model(
    model_id: str,
    *,
    region: str | None = None,
    client: Any = None,
    control_client: Any = None,
    rate_limiter: BaseRateLimiter | None = None,
) -> BaseChatModel:
    """A `ChatBedrockConverse` on the shared clients (or on `client`, e.g. a stubbed one)."""
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
    model: BaseChatModel = _converse_class()(
        model=model_id,
        region_name=region,
        client=client,
        bedrock_client=control_client,
        rate_limiter=rate_limiter,
    )
    return model


def reset_bedrock_clients() -> None:
    """Forget the shared clients (tests that change credentials or regions)."""
    with _lock:
        _clients.clear()
