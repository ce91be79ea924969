"""`openai:<model>`: any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, ...).

The server is `OPENAI_BASE_URL` (required: there is no sensible default); the key is
`OPENAI_API_KEY`, defaulting to "not-needed" as local servers ignore it.
langchain_openai is an extra (`opsgraph[openai]`) and is imported only here, on demand.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from opsgraph.errors import BadInput

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.rate_limiters import BaseRateLimiter

LOCAL_API_KEY: Final = "not-needed"
TIMEOUT_S: Final = 300.0
MAX_RETRIES: Final = 3
TEMPERATURE: Final = 0.0
"""Sent with every request: an operations assistant should give the same plan, call and
answer to the same request. Left unset, a local server samples at its own default (0.8 on
llama-cpp-python's server and Ollama), and on the knowledge set the same questions then
swapped between right and wrong from run to run."""


def build_openai_model(name: str, *, rate_limiter: BaseRateLimiter | None = None,
                       ) -> BaseChatModel:
    """A `ChatOpenAI` for model `name` on the server at `OPENAI_BASE_URL`."""
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
    if not base_url:
        raise BadInput(f"model: spec 'openai:{name}' needs OPENAI_BASE_URL set to the "
                       "OpenAI-compatible server (e.g. http://localhost:11434/v1)",
                       field="model")
    try:
        from langchain_openai import ChatOpenAI  # heavy: langchain_openai (cold start)
    except ImportError:
        raise BadInput("model: openai: specs need langchain-openai; install the extra: "
                       "pip install 'opsgraph[openai]'", field="model") from None
    model: BaseChatModel = ChatOpenAI(
        model=name,
        base_url=base_url,
        api_key=os.environ.get("OPENAI_API_KEY") or LOCAL_API_KEY,  # type: ignore[arg-type]
        timeout=TIMEOUT_S,
        max_retries=MAX_RETRIES,
        temperature=TEMPERATURE,
        stream_usage=True,
        rate_limiter=rate_limiter,
    )
    return model
