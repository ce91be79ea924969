"""Chat models from spec strings, per-tenant overrides, and the scripted test model.

Importing this package is cheap: provider libraries (langchain_aws, boto3,
langchain_openai) load only when a model of theirs is first built.

    get_chat_model("bedrock:<id>" | "openai:<model>" | "llamacpp:<path>" | "scripted:<path>")
    resolve_model_spec(scope, agent, tier, run_model)   override > --model > tier default
    with model_call_slot(): model.invoke(messages, config={"metadata": {
        "opsgraph_stage": "decompose" | "task" | "synthesise", "task_id": ...}})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opsgraph.models.factory import Tier, get_chat_model, reset_models, tier_spec
from opsgraph.models.limits import (
    model_call_limit,
    model_call_slot,
    model_call_slot_async,
    model_rate_limiter,
)
from opsgraph.models.overrides import get_overrides, resolve_model_spec, set_overrides
from opsgraph.models.prompt_cache import (
    bind_tools_cached,
    cache_point,
    cached_system_message,
    supports_cache_points,
)
from opsgraph.models.spec import ModelSpec, check_model_spec, parse_model_spec
from opsgraph.models.usage import add_usage, total_usage, usage_of

if TYPE_CHECKING:
    from opsgraph.models.scripted import ScriptedChatModel, ScriptedModelError

__all__ = [
    "ModelSpec",
    "ScriptedChatModel",
    "ScriptedModelError",
    "Tier",
    "add_usage",
    "bind_tools_cached",
    "cache_point",
    "cached_system_message",
    "check_model_spec",
    "get_chat_model",
    "get_overrides",
    "model_call_limit",
    "model_call_slot",
    "model_call_slot_async",
    "model_rate_limiter",
    "parse_model_spec",
    "reset_models",
    "resolve_model_spec",
    "set_overrides",
    "supports_cache_points",
    "tier_spec",
    "total_usage",
    "usage_of",
]


def __getattr__(name: str) -> Any:
    # The scripted model pulls in langchain_core's chat-model stack: load it on first use.
    if name in ("ScriptedChatModel", "ScriptedModelError"):
        from opsgraph.models import scripted  # heavy: langchain_core (cold start)

        return getattr(scripted, name)
    raise AttributeError(f"module 'opsgraph.models' has no attribute {name!r}")
