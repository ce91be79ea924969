"""Model specs → chat models: one instance per spec per process, built on first use.

Provider libraries are imported here lazily, per provider: importing opsgraph.models never
imports langchain_aws, boto3 or langchain_openai.
"""

from __future__ import annotations

import os
import threading
from importlib.util import find_spec
from typing import TYPE_CHECKING, Literal

from opsgraph.errors import BadInput
from opsgraph.models.auto import DEMO_SPEC, DemoMode, demo_mode_message, model_choice
from opsgraph.models.bedrock import build_bedrock_model
from opsgraph.models.limits import model_rate_limiter
from opsgraph.models.llamacpp import build_llamacpp_model
from opsgraph.models.openai import build_openai_model
from opsgraph.models.spec import ModelSpec, parse_model_spec

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
    if str(spec) == DEMO_SPEC:
        raise DemoMode(demo_mode_message())
    if spec.provider == "scripted":
        from opsgraph.models.scripted import ScriptedChatModel  # heavy: langchain_core (cold start)

        return ScriptedChatModel(path=spec.name)  # no rate limit: nothing to protect
    if spec.provider == "bedrock":
        return build_bedrock_model(spec.name, rate_limiter=model_rate_limiter())
    if spec.provider == "openai":
        return build_openai_model(spec.name, rate_limiter=model_rate_limiter())

    return build_llamacpp_model(spec.name, rate_limiter=model_rate_limiter())


_LIBRARIES: dict[str, tuple[str, ...]] = {
    "bedrock": ("langchain_aws",), "openai": ("langchain_openai",),
    "llamacpp": ("langchain_community", "llama_cpp"), "scripted": ()}


def unavailable(spec: ModelSpec) -> str | None:
    """Why `spec` cannot run in this process (None when it can, as far as can be told
    without calling it): a file that is not there, a library not installed, a server not
    configured, demo mode. Hosted credentials are only known at the first call."""
    if str(spec) == DEMO_SPEC:
        return "it is demo mode's placeholder: no model is configured or reachable"
    path = spec.path
    if path is not None and not path.is_file():
        return f"its file {str(path)!r} does not exist"
    missing = [name for name in _LIBRARIES[spec.provider] if find_spec(name) is None]
    if missing:
        return f"{', '.join(missing)} is not installed"
    if spec.provider == "openai" and not os.environ.get("OPENAI_BASE_URL", "").strip():
        return "OPENAI_BASE_URL is not set"
    return None


def tier_spec(tier: Tier | str) -> str:
    """The default model spec of a tier: `OPSGRAPH_MODEL` or `OPSGRAPH_LIGHT_MODEL`, else
    what `opsgraph.models.auto` chose for this process."""
    if tier == "default":
        return model_choice().model
    if tier == "light":
        return model_choice().light_model
    raise BadInput(f"model tier: unknown tier {tier!r} (allowed: default, light)",
                   field="tier")


def reset_models() -> None:
    """Forget every built model (tests)."""
    with _lock:
        _models.clear()
