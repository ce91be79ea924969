"""Model specs: the strings that name a chat model (`provider:name`).

    bedrock:<model-id>          Amazon Bedrock (Converse API)
    openai:<model>              any OpenAI-compatible server at OPENAI_BASE_URL
    llamacpp:<path.gguf>        a local GGUF file through llama.cpp
    scripted:<path.yaml|json>   the scripted test model shipped in the package
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from opsgraph.errors import BadInput

Provider = Literal["bedrock", "openai", "llamacpp", "scripted"]

PROVIDERS: Final[tuple[Provider, ...]] = ("bedrock", "openai", "llamacpp", "scripted")
ALLOWED_FORMS: Final = (
    "bedrock:<model-id>, openai:<model>, llamacpp:<path.gguf>, scripted:<path.yaml|json>"
)
_SCRIPT_SUFFIXES: Final = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model spec; `str()` gives the canonical `provider:name` form."""

    provider: Provider
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"

    @property
    def path(self) -> Path | None:
        """The file a `llamacpp:` or `scripted:` spec names; None for hosted models."""
        if self.provider in ("llamacpp", "scripted"):
            return Path(self.name).expanduser()
        return None


def _bad(text: str, why: str) -> BadInput:
    return BadInput(f"model: {why} in model spec {text!r} (allowed: {ALLOWED_FORMS})",
                    field="model", spec=text)


def parse_model_spec(text: str) -> ModelSpec:
    """Parse `provider:name`; anything else is `BadInput` naming the spec and the forms."""
    if not isinstance(text, str):
        raise _bad(repr(text), "not a string")
    stripped = text.strip()
    provider, sep, name = stripped.partition(":")
    provider, name = provider.strip().lower(), name.strip()
    if not sep:
        raise _bad(text, "no provider prefix")
    if provider not in PROVIDERS:
        raise _bad(text, f"unknown provider {provider!r}")
    if not name:
        raise _bad(text, "empty model name")
    if provider == "llamacpp" and not name.lower().endswith(".gguf"):
        raise _bad(text, "a llamacpp model must be a .gguf file")
    if provider == "scripted" and not name.lower().endswith(_SCRIPT_SUFFIXES):
        raise _bad(text, "a scripted model must be a .yaml, .yml or .json file")
    return ModelSpec(provider, name)


def check_model_spec(text: str) -> ModelSpec:
    """Parse a spec and check what can be checked before use: a named file must exist."""
    spec = parse_model_spec(text)
    path = spec.path
    if path is not None and not path.is_file():
        raise BadInput(f"model: file {str(path)!r} of model spec {text!r} does not exist",
                       field="model", spec=text)
    return spec


def shown(spec: str) -> str:
    """A model spec as a client may see it: a file-backed spec by its file's name, never
    the server's path."""
    parsed = parse_model_spec(spec)
    return f"{parsed.provider}:{parsed.path.name}" if parsed.path is not None else str(parsed)
