"""`llamacpp:<path.gguf>`: a local GGUF model run in-process through llama.cpp.

Needs langchain-community and llama-cpp-python, neither of which the base install has.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from opsgraph.errors import BadInput
from opsgraph.models.openai import TEMPERATURE

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.rate_limiters import BaseRateLimiter

INSTALL_HINT: Final = "pip install langchain-community llama-cpp-python"
CONTEXT_TOKENS: Final = 8192


def build_llamacpp_model(path: str, *, rate_limiter: BaseRateLimiter | None = None,
                         ) -> BaseChatModel:
    """A `ChatLlamaCpp` on the GGUF file at `path` (which must exist)."""
    gguf = Path(path).expanduser()
    if not gguf.is_file():
        raise BadInput(f"model: GGUF file {str(gguf)!r} of spec 'llamacpp:{path}' does not "
                       "exist", field="model")
    try:
        # heavy: langchain_community (cold start)
        from langchain_community.chat_models import ChatLlamaCpp
    except ImportError:
        raise BadInput("model: llamacpp: specs need langchain-community and llama-cpp-python "
                       f"(not installed); install them: {INSTALL_HINT}",
                       field="model") from None
    try:
        model: BaseChatModel = ChatLlamaCpp(model_path=str(gguf), n_ctx=CONTEXT_TOKENS,
                                            temperature=TEMPERATURE,
                                            rate_limiter=rate_limiter)
    except ImportError:
        raise BadInput(f"model: llamacpp: specs need llama-cpp-python; install it: "
                       f"{INSTALL_HINT}", field="model") from None
    return model
