"""A model as people name it: "Claude Sonnet 4.6", not the spec
`bedrock:eu.anthropic.claude-sonnet-4-6-v1:0`.

The settings page shows these words; the spec string stays what the API takes and returns.
A Bedrock id loses its region and vendor prefixes and its version suffix; a Claude model's
words are capitalised and its version digits joined by a dot; a file-backed model (a GGUF
file, a scripted model) is named by its file; any other name is shown as it is.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Final

from opsgraph.models.spec import parse_model_spec

_PREFIXES: Final = re.compile(r"^(?:(?:eu|us|apac|global|jp|au)\.)?(?:anthropic\.)?")
_SUFFIXES: Final = re.compile(r"(?:-v\d+(?::\d+)?|-\d{8}|@\d{8})$")


def model_words(spec: str) -> str:
    """The words people know a model by."""
    parsed = parse_model_spec(spec)
    if parsed.provider == "scripted":
        return f"scripted model ({PurePath(parsed.name).name})"
    if parsed.provider == "llamacpp":
        return f"local model ({PurePath(parsed.name).name})"
    name = _PREFIXES.sub("", parsed.name)
    while _SUFFIXES.search(name):  # `-20250929-v1:0`: the version, then the date
        name = _SUFFIXES.sub("", name)
    if not name.startswith("claude-"):
        return name
    words: list[str] = []
    for part in name.split("-"):
        if part.isdigit() and words and re.fullmatch(r"\d+(?:\.\d+)*", words[-1]):
            words[-1] += f".{part}"
        else:
            words.append(part if part.isdigit() else part.capitalize())
    return " ".join(words)
