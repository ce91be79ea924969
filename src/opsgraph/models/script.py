"""The scripted-model file: what each stage of a run answers.

The format is in docs/reference.md, "Scripted model files".

A file is YAML or JSON, validated with pydantic (`extra="forbid"`), and parsed once per
path: the cache key is the resolved path with its mtime and size, so an edited file is read
again and an unchanged one never is.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from opsgraph.errors import BadInput
from opsgraph.yaml_text import load_yaml

MAX_DELAY_MS = 60_000
"""The longest simulated latency a file may ask for: a typo of a few zeros would otherwise
hold a run (and the test waiting on it) for hours."""
Delay = Annotated[int, Field(ge=0, le=MAX_DELAY_MS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptedToolCall(_Strict):
    """One tool call of a turn; `args` must be an object."""

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    """Fixed id; default `call_<task>_<turn>_<n>` (deterministic and unique per task)."""


class ScriptedTurn(_Strict):
    """One model turn of a task: text, tool calls, or both."""

    content: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    delay_ms: Delay = 0

    @model_validator(mode="after")
    def _says_something(self) -> ScriptedTurn:
        if self.content is None and not self.tool_calls:
            raise ValueError("a turn needs content, tool_calls or both")
        return self


class Script(_Strict):
    """A whole scripted-model file."""

    plan: dict[str, Any] | None = None
    """What the decompose call returns: the TaskPlan, as the runtime's schema expects it."""
    plan_delay_ms: Delay = 0
    turns: dict[str, list[ScriptedTurn]] = Field(default_factory=dict)
    """Per task id, that task's model turns in order."""
    synthesis: str | None = None
    synthesis_delay_ms: Delay = 0
    harness: dict[str, str | list[str]] = Field(default_factory=dict)
    """Per harness `llm` step id, its reply (a list: one reply per attempt, in order)."""


_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int], Script]] = {}


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _parse(path: Path, raw: str) -> Script:
    try:
        data = json.loads(raw) if path.suffix.lower() == ".json" else load_yaml(raw)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise BadInput(f"scripted model file {str(path)!r}: not valid "
                       f"{'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}",
                       file=str(path)) from None
    if not isinstance(data, dict):
        raise BadInput(f"scripted model file {str(path)!r}: the top level must be a mapping "
                       "with plan, turns and synthesis", file=str(path))
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(err['loc'])}: {err['msg']}" for err in exc.errors())
        raise BadInput(f"scripted model file {str(path)!r}: {problems}",
                       file=str(path)) from None


@functools.lru_cache(maxsize=64)
def _real(path: Path) -> Path:
    return path.resolve()


def _resolved(path: str | Path) -> Path:
    """The real path of a script path: `realpath` once per absolute path, not per model call."""
    given = Path(path).expanduser()
    return _real(given if given.is_absolute() else Path.cwd() / given)


def load_script(path: str | Path) -> Script:
    """The validated script at `path`, read again only when the file changed."""
    resolved = _resolved(path)
    try:
        stat = resolved.stat()
    except OSError:
        raise BadInput(f"scripted model file {str(resolved)!r} does not exist",
                       file=str(resolved)) from None
    key = (stat.st_mtime_ns, stat.st_size)
    with _lock:
        hit = _cache.get(resolved)
    if hit is not None and hit[0] == key:
        return hit[1]
    script = _parse(resolved, resolved.read_text(encoding="utf-8"))
    with _lock:
        _cache[resolved] = (key, script)
    return script
