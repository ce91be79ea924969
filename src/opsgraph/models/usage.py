"""Token usage of a model reply, in the four numbers run accounting keeps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

USAGE_KEYS: Final = ("input", "output", "cache_read", "cache_write")


def usage_of(message: Any) -> dict[str, int]:
    """`{input, output, cache_read, cache_write}` tokens of an AI message (zeros if unknown).

    `input` is every prompt token, cached ones included (as langchain reports it);
    `cache_read`/`cache_write` are the parts read from and written to the prompt cache.
    """
    usage = getattr(message, "usage_metadata", None) or {}
    details = usage.get("input_token_details") or {}
    return {
        "input": int(usage.get("input_tokens") or 0),
        "output": int(usage.get("output_tokens") or 0),
        "cache_read": int(details.get("cache_read") or 0),
        "cache_write": int(details.get("cache_creation") or 0),
    }


def add_usage(*parts: dict[str, int]) -> dict[str, int]:
    """The sum of several `usage_of` results."""
    return {key: sum(part.get(key, 0) for part in parts) for key in USAGE_KEYS}


def total_usage(messages: Iterable[Any]) -> dict[str, int]:
    """The summed usage of every message that reports some."""
    return add_usage(*(usage_of(m) for m in messages))
