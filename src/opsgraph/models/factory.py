"""Model specs → chat models: one instance per spec per process, built on first use.

Provider libraries are imported here lazily, per provider: importing opsgraph.models never
imports langchain_aws, boto3 or langchain_openai.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Literal

from opsgraph.errors import BadInput
from opsgraph.models.limits import model_rate_limiter
from opsgraph.models.spec import ModelSpec, parse_model_spec
from opsgraph.settings import get_settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

Tier = Literal["default", "light"]

_lock = threading.Lock()
_models: dict[str, BaseChatModel] = {}


def get_chat_model(spec: str) -> BaseChatModel:
    """The process's chat model for `spec` (built once; safe to call from any thread)."""
    model = _models.get(spec)
    if model is not None:
        return model
    parsed = parse_model_spec(spec)
    canonical = str(parsed)
    with _lock:
        model = _models.get(canonical)
        if model is None:
            model = _build(parsed)
            _models[canonical] = model
        _models[spec] = model
    return model


def _build(spec: ModelSpec) -> BaseChatModel:
    if spec.provider == "scripted":
        from opsgraph.models.scripted import ScriptedChatModel

        return ScriptedChatModel(path=spec.name)  # no rate limit: nothing to protect
    if spec.provider == "bedrock":
        from opsgraph.models.bedrock import build_bedrock_model

        return build_bedrock_model(spec.name, rate_limiter=model_rate_limiter())
    if spec.provider == "openai":
        from opsgraph.models.openai import build_openai_model

        return build_openai_model(spec.name, rate_limiter=model_rate_limiter())
    from opsgraph.models.llamacpp import build_llamacpp_model

    return build_llamacpp_model(spec.name, rate_limiter=model_rate_limiter())


def tier_spec(tier: Tier | str) -> str:
    """The default model spec of a tier: `OPSGRAPH_MODEL` or `OPSGRAPH_LIGHT_MODEL`."""
    settings = get_settings()
    if tier == "default":
        return settings.model
    if tier == "light":
        return settings.light_model
    raise BadInput(f"model tier: unknown tier {tier!r} (allowed: default, light)",
                   field="tier")


def reset_models() -> None:
    """Forget every built model (tests)."""
    with _lock:
        _models.clear()
