"""Typed settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DEFAULT_MODEL = "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0"
DEFAULT_LIGHT_MODEL = "bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0"


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob opsgraph reads from the environment."""

    mongodb_uri: str | None
    """`MONGODB_URI`: the MongoDB to use; None starts the embedded server."""
    home: Path
    """`OPSGRAPH_HOME`: local data (embedded store, caches, local secrets)."""
    database: str
    """`OPSGRAPH_DB`: database name inside MongoDB."""
    model: str
    """`OPSGRAPH_MODEL`: model spec of the default tier."""
    light_model: str
    """`OPSGRAPH_LIGHT_MODEL`: model spec of the light tier."""
    token_secret: str | None
    """`OPSGRAPH_TOKEN_SECRET`: signs bearer tokens; None → a local secret in `home`."""
    agents_dir: Path
    """`OPSGRAPH_AGENTS`: the registry folder (default: `agents/` of the checkout or image)."""


def _default_agents_dir() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "agents").is_dir() and (parent / "pyproject.toml").exists():
            return parent / "agents"
    return Path.cwd() / "agents"


def load_settings() -> Settings:
    """Read the environment now (tests call this after changing it)."""
    env = os.environ
    home = Path(env.get("OPSGRAPH_HOME") or Path.home() / ".local/share/opsgraph").expanduser()
    return Settings(
        mongodb_uri=env.get("MONGODB_URI") or None,
        home=home,
        database=env.get("OPSGRAPH_DB", "opsgraph"),
        model=env.get("OPSGRAPH_MODEL", DEFAULT_MODEL),
        light_model=env.get("OPSGRAPH_LIGHT_MODEL", DEFAULT_LIGHT_MODEL),
        token_secret=env.get("OPSGRAPH_TOKEN_SECRET") or None,
        agents_dir=Path(env.get("OPSGRAPH_AGENTS") or _default_agents_dir()),
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()
