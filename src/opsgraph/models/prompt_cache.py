"""Prompt caching: cache points on the stable system prompt and on the tool block.

Bedrock (Converse) caches the prompt prefix up to each `cachePoint` block. langchain-aws
passes a `{"cachePoint": ...}` block through unchanged when it is part of a SystemMessage's
content, and keeps one given in the tool list of `bind_tools` (after the tools, so the
whole tool block is cached). Other providers get the plain forms: OpenAI-compatible servers
cache on their own, and the scripted model ignores caching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.messages import AIMessage, SystemMessage
    from langchain_core.runnables import Runnable
    from langchain_core.tools import BaseTool

BEDROCK_LLM_TYPE: Final = "amazon_bedrock_converse_chat"


def cache_point() -> dict[str, Any]:
    """A Bedrock cache point block (what `ChatBedrockConverse.create_cache_point()` makes)."""
    return {"cachePoint": {"type": "default"}}


def supports_cache_points(model: BaseChatModel) -> bool:
    """True for Bedrock Converse models (checked without importing langchain_aws)."""
    return getattr(model, "_llm_type", None) == BEDROCK_LLM_TYPE


def cached_system_message(model: BaseChatModel, text: str) -> SystemMessage:
    """The system message for `text`, with a cache point after it where the model has them.

    Put only the stable part of the prompt here; per-request text goes in later messages.
    """
    from langchain_core.messages import SystemMessage  # heavy: langchain_core (cold start)

    if supports_cache_points(model):
        return SystemMessage(content=[{"type": "text", "text": text}, cache_point()])
    return SystemMessage(content=text)


def bind_tools_cached(
    model: BaseChatModel,
    tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
    *,
    tool_choice: str | None = None,
    **kwargs: Any,
) -> Runnable[LanguageModelInput, AIMessage]:
    """`model.bind_tools(tools)`, with a cache point after the tool list where supported."""
    listed: list[dict[str, Any] | type | Callable[..., Any] | BaseTool] = list(tools)
    if listed and supports_cache_points(model):
        listed.append(cache_point())
    return model.bind_tools(listed, tool_choice=tool_choice, **kwargs)
